"""`gitstate doctor`: is this clone protected? Each finding is ok, warn (works, but a door is
weaker than it could be) or fail (a door is open), with what to do about it.

It looks at what runs here (the hooks git will run, the Python they find, the caches), at the
law as committed, and at what this clone can see of the hub and CI.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from gitstate import __version__
from gitstate.doors import installable, precommit
from gitstate.doors.check import _check_hooks, hooks_dir
from gitstate.doors.shims import is_ours
from gitstate.errors import GitstateError
from gitstate.git.cache import key
from gitstate.git.repo import Managed
from gitstate.git.runner import Git
from gitstate.git.signing import signing_key
from gitstate.git.spawning import bounded
from gitstate.git.upstream import HUB_MARK_REF
from gitstate.law import statefile
from gitstate.law.lifecycle import LIFECYCLE_PATH, SIGNERS_PATH
from gitstate.law.signers import principals_of


def finding(status: str, check: str, detail: str, fix: str | None = None) -> dict:
    """One line of `gitstate doctor`: the clone's checks here, each runtime's in runtime/."""
    return {"status": status, "check": check, "detail": detail, "fix": fix}


def diagnose(repo: Managed) -> list[dict]:
    """The clone's findings: its law, hooks, gitstate, caches, approvals, movers, hub and CI
    (and each agent runtime's own checks: gitstate.runtime.diagnosis)."""
    head = repo.git.head()
    try:
        lc = repo.lifecycle(head, index=False, worktree=head is None)
    except GitstateError as exc:
        return [finding("fail", "law", f"no valid {LIFECYCLE_PATH}: {exc.message}",
                         "run `gitstate init`")]
    out = _lawfindings(lc, head) + _hookfindings(repo, lc)
    out.append(_pythonfinding(repo))
    out.append(_cachefinding(repo))
    out.append(_judgefinding(repo))
    out.append(_approvalsfinding(repo, lc, head))
    out += _moversfindings(repo, lc, head)
    out += _rolefindings(repo, lc, head)
    out += _hub_and_ci(repo)
    return out


def _lawfindings(lc, head: str | None) -> list[dict]:
    """The law in force, and its team line."""
    return [finding("ok", "law", f"lifecycle '{lc.name}' at "
                    f"{head[:10] if head else 'the work tree (not committed)'}"),
            finding("ok", "line", f"the team line is {lc.line}: its merges carry work, and "
                    "moves land on it one by one") if lc.line else
            finding("warn", "line", "the law declares no team line: merges are read, not "
                    "judged (the line rule is not in force)", "add `line: BRANCH` to "
                    f"{LIFECYCLE_PATH} with an approved change of the law")]


def _hookfindings(repo: Managed, lc) -> list[dict]:
    """The hooks git runs: gitstate's (through the pre-commit framework or not), unmodified,
    and out of a pulled commit's reach."""
    where = hooks_dir(repo)
    problems = _check_hooks(repo, lc)
    framework = {name: config for name in precommit.HOOK_IDS
                 if (config := precommit.runs_gitstate(where / name, name, repo.work_tree))}
    out = _hooks_said(problems, framework, where)
    out += [finding("warn", "hooks", f"pre-commit runs its {name} hook in migration "
                    f"mode: gitstate's check runs from {framework[name]} and again "
                    f"from gitstate's shim kept as {name}.legacy, so every refusal "
                    "is said twice", "pre-commit install -f --hook-type pre-commit "
                    "--hook-type commit-msg")
            for name in precommit.HOOK_IDS
            if name in framework and is_ours(precommit.legacy(where / name))]
    if _tracked(repo, where):
        out.append(finding("fail", "hooks", f"git runs hooks from {where}, which is "
                            "tracked in the repository: a pulled commit can change what "
                            "runs here", "`git config --unset core.hooksPath` and run "
                            "`gitstate init`"))
    return out


def _hooks_said(problems: list, framework: dict, where: Path) -> list[dict]:
    """The hooks' problems, else whose hooks run gitstate's checks."""
    if problems:
        return [finding("fail", "hooks", p.message, "run `gitstate init`") for p in problems]
    if framework:
        names = " and ".join(framework)
        return [finding("ok", "hooks", f"{names} run gitstate's checks through the pre-commit "
                        f"framework ({', '.join(sorted(set(framework.values())))}); the "
                        f"other hooks in {where} are gitstate's, unmodified")]
    return [finding("ok", "hooks", f"pre-commit, commit-msg and the ref guard "
                    f"(reference-transaction) in {where} are gitstate's, unmodified")]


def _tracked(repo: Managed, where: Path) -> bool:
    """Is the hooks folder in the work tree and tracked (a pulled commit changes it)?"""
    top = repo.work_tree.resolve()
    return (where.resolve() == top or top in where.resolve().parents) \
        and bool(repo.git.index_paths(where.resolve().relative_to(top).as_posix()))


def _pythonfinding(repo: Managed) -> dict:
    """The Python the hooks run, and the gitstate it imports."""
    python = repo.git.config("gitstate.python")
    if not python or not os.access(python, os.X_OK):
        return finding("warn", "gitstate", f"the hooks' Python ({python or 'not set'}) "
                       "is missing; they fall back to `gitstate` on PATH",
                       "run `gitstate init` with the gitstate you use")
    proc = subprocess.run([python, "-c", "import gitstate; print(gitstate.__version__)"],
                          capture_output=True, text=True)
    found = proc.stdout.strip()
    if proc.returncode != 0:
        return finding("fail", "gitstate", f"{python} cannot import gitstate: state "
                       "commits will be refused", "install gitstate there, or run "
                       "`gitstate init` with the Python that has it")
    if found != __version__:
        return finding("warn", "gitstate", f"the hooks run gitstate {found}, this is "
                       f"{__version__}", "run `gitstate init` to use this one")
    return finding("ok", "gitstate", f"the hooks run gitstate {found} ({python})")


def _approvalsfinding(repo: Managed, lc, head: str | None) -> dict:
    """Whether approvals are proven by the humans' signatures."""
    signers = repo.git.cat_files([f"{head}:{SIGNERS_PATH}"])[0] if head else None
    if signers is not None:
        return _signersfinding(repo, lc, signers)
    return finding("warn", "approvals", "no protocols/allowed_signers: an "
                   "'Approved-by:' trailer is taken at its word from a person at a "
                   "terminal (anyone can write it), and refused from an agent's "
                   "session (agent-approval)", "commit protocols/allowed_signers with "
                   "the humans' SSH keys (`gitstate init --signing-key PATH "
                   "--approved-by HUMAN`, run by that human)")


def _moversfindings(repo: Managed, lc, head: str | None) -> list[dict]:
    """Who may move whom: is this session bound to an agent, and whose moves are proven?"""
    from gitstate.moves.principals import bound_agent
    bound = bound_agent()
    if bound is None:
        out = [finding("warn", "binding", "no GITSTATE_AGENT: this session is bound to no "
                       "agent, so the local doors let it move any agent the law allows "
                       "(who moves is not judged here)", "an agent's runtime sets "
                       "GITSTATE_AGENT (Claude Code: `gitstate init --runtime claude-code` "
                       "or gitstate's plugin; Codex CLI: `init --runtime codex`)")]
    else:
        out = [finding("ok", "binding", f"this session is bound to {bound} "
                       "(GITSTATE_AGENT): it may move only whom the law lets it")]
    if head is None or lc is None:
        return out
    return out + _keyfindings(_living(repo, lc, head))


def _living(repo: Managed, lc, head: str) -> dict[str, dict]:
    """The front matter of each agent alive at `head` (a state file that does not parse
    left out)."""
    fronts = {}
    for agent, data in repo.agents_at(lc, head).items():
        try:
            fronts[agent] = statefile.parse_bytes(data, lc.state_path(agent)).front
        except GitstateError:
            continue
    return {a: f for a, f in fronts.items()
            if isinstance(f.get("state"), str) and lc.roster_of(f["state"]) != "dead"}


def _rolefindings(repo: Managed, lc, head: str | None) -> list[dict]:
    """A warning for each role whose max is a convention (`max_advisory`) and that more living
    agents hold (`roles.over_advisory_max`, as `status` and `check` warn)."""
    from gitstate.law.roles import over_advisory_max
    if not head or not any(lc.max_advisory(r) for r in lc.roles):
        return []
    fronts = [{**front, "agent": agent} for agent, front in _living(repo, lc, head).items()]
    return [finding("warn", "roles", said.split(": coordinate,")[0],
                    "coordinate, or hand it on: `gitstate handover ROLE --from ID --to ID2`")
            for said in over_advisory_max(lc, fronts)]


def _keyfindings(living: dict[str, dict]) -> list[dict]:
    """The living agents without a key (unauthenticated), and those with one."""
    from gitstate.law.movers import KEY_FIELD
    bare = sorted(a for a, f in living.items() if not f.get(KEY_FIELD))
    keyed = sorted(a for a in living if a not in bare)
    return _barefindings(bare) + (_keyedfindings(living, keyed) if keyed else [])


def _barefindings(bare: list[str]) -> list[dict]:
    if not bare:
        return []
    shown = ", ".join(bare[:10]) + (f" and {len(bare) - 10} more" if len(bare) > 10 else "")
    return [finding("warn", "movers", f"{len(bare)} agent{'s' if len(bare) != 1 else ''} "
                    f"without a key ({shown}): the hub and verify cannot tell who moved "
                    "them (unauthenticated)", "spawn agents with `gitstate spawn ID --key`")]


def _keyedfindings(living: dict[str, dict], keyed: list[str]) -> list[dict]:
    from gitstate.law.movers import KEY_FIELD
    from gitstate.moves.principals import held_key
    held = [a for a in keyed if held_key(living[a].get(KEY_FIELD))]
    return [finding("ok", "movers", f"{len(keyed)} agent{'s' if len(keyed) != 1 else ''}"
                    " with a key: their moves must be signed (unsigned-move); this "
                    f"clone holds the keys of {', '.join(held) or 'none of them'}"),
            *_shared_keys(living, keyed)]


def _shared_keys(living: dict[str, dict], keyed: list[str]) -> list[dict]:
    """A warning when this user can read the private keys of several agents: whatever runs
    as this user (any of those agents' tools) can sign as each of them."""
    from gitstate.law.movers import KEY_FIELD
    from gitstate.moves.principals import held_key, keys_dir
    readable = [a for a in keyed if (path := held_key(living[a].get(KEY_FIELD)))
                and os.access(path, os.R_OK)]
    if len(readable) < 2:
        return []
    return [finding("warn", "keys", f"this user can read the private keys of {len(readable)} "
                    f"agents ({', '.join(readable)}) in {keys_dir()}: whatever runs as this "
                    "user, any of these agents' tools included, can sign as each of them, so "
                    "their signatures do not tell them apart", "keys tell agents apart only "
                    "when each agent runs as its own OS user (or in its own container) whose "
                    "$GITSTATE_KEYS holds its key alone, or when the runtime holds the key "
                    "where the agent's tools cannot read it")]


def _signersfinding(repo: Managed, lc, signers: bytes) -> dict:
    """Approvals are authenticated; and can this user sign one?"""
    text = f"approvals are authenticated: a gated move must be signed by a key {SIGNERS_PATH} "\
        "lists for the human in its Approved-by: trailer"
    key, where = signing_key(repo.git)
    if key is None:
        return finding("ok", "approvals", f"{text}; this user has no key to sign with "
                        f"({where}), so only humans with listed keys can approve",
                        "a human who approves: `git config gpg.format ssh` and `git config "
                        "user.signingkey ~/.ssh/id_ed25519`")
    humans = {h.lower() for h in lc.policies.humans}
    names = [p for p in principals_of(signers.decode("utf-8", "replace"), key) if p in humans]
    if names:
        return finding("ok", "approvals", f"{text}; this user's key ({where}) is listed for "
                        f"{', '.join(names)}")
    return finding("ok", "approvals", f"{text}; this user's key ({where}) is not listed for "
                    "any human, so approvals made here are refused",
                    f"ask a human to add your public key to {SIGNERS_PATH} (a change of the "
                    "law, approved and signed by a listed human)")


def _cachefinding(repo: Managed) -> dict:
    cache = Path(repo.cache_dir) if repo.cache_dir else None
    if cache is not None and cache.exists() and not cache.is_dir():
        return finding("warn", "cache", f"{cache} is not a folder: gitstate runs without its "
                        "caches (slower)", f"remove {cache}")
    if key() is None:
        return finding("warn", "cache", "no cache key can be kept in the user's cache folder: "
                        "gitstate runs without its caches (slower)",
                        "make $XDG_CACHE_HOME or ~/.cache writable")
    return finding("ok", "cache", "caches are sealed with this user's key; `verify "
                    "--no-cache` and the hub never read them")


def _judgefinding(repo: Managed) -> dict:
    """The resident judge of this work tree (`doors/resident.py`): running, or started by the
    next state commit, or switched off."""
    import json
    import os

    from gitstate.doors.resident import STATUS
    off = ("0", "false", "no", "off")
    if os.environ.get("GITSTATE_JUDGE", "").lower() in off \
            or (repo.git.config("gitstate.judge") or "").lower() in off:
        return finding("ok", "judge", "the resident judge is off (GITSTATE_JUDGE or "
                       "gitstate.judge): each state commit starts gitstate's Python")
    where = Path(repo.git.text("rev-parse", "--absolute-git-dir")) / "gitstate" / STATUS
    try:
        said = json.loads(where.read_text(encoding="utf-8"))
        pid, served, since = int(said["pid"]), int(said["served"]), int(said["since"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return finding("ok", "judge", "no resident judge runs here: the next state commit "
                       "starts one (`git config gitstate.judge false` keeps it off)")
    from gitstate.law.times import when
    return finding("ok", "judge", f"a resident judge runs (pid {pid}, since {when(since)}, "
                   f"{served} commit hook{'s' if served != 1 else ''} judged): state commits "
                   "reach it instead of starting gitstate's Python")


HUB_ASK_SECONDS = 5   # `doctor` asks each remote whether it is a hub for at most this long


def _hub_and_ci(repo: Managed) -> list[dict]:
    return [_hubfinding(repo), *_cifindings(repo)]


def _hubfinding(repo: Managed) -> dict:
    """The remotes, and whether one is a hub that judges pushes: a hub made by `gitstate init
    --server` says so with its mark (`refs/gitstate/hub`), asked for a few seconds at most."""
    remotes = repo.git.text("remote").split()
    if not remotes:
        return finding("warn", "hub", "no remote: this clone is the only door",
                       "set up a hub: `git init --bare hub.git && gitstate -C hub.git "
                       "init --server`, then `git remote add origin hub.git`")
    said = {r: _hub_mark(repo.git, r) for r in remotes}
    urls = ", ".join(f"{r} {repo.git.config(f'remote.{r}.url') or '?'} ({said[r]})"
                     for r in remotes)
    if "a gitstate hub" in said.values():
        return finding("ok", "hub", f"remotes: {urls}")
    return finding("warn", "hub", f"remotes: {urls}. No remote says it judges pushes",
                   "run `gitstate init --server` in the hub, or have CI run "
                   "`gitstate verify --no-cache` on every push")


def _hub_mark(git: Git, remote: str) -> str:
    with bounded(git, HUB_ASK_SECONDS):
        code, out, _ = git.call("ls-remote", remote, HUB_MARK_REF)
    if code != 0:
        return "not reached"
    return "a gitstate hub" if out.strip() else "judges nothing: no gitstate hub mark"


def _cifindings(repo: Managed) -> list[dict]:
    """Each CI file that runs verify (or gitstate's action), judged; a warning if none."""
    verifying = [f for f in _ci_files(repo.work_tree) if _verifies(f)]
    if not verifying:
        return [finding("warn", "ci", "no CI job runs `gitstate verify --no-cache`",
                        "for a hub that cannot run hooks, add one that does: "
                        "`gitstate init --ci github|gitlab`")]
    return [_ci_finding(f.relative_to(repo.work_tree).as_posix(),
                        f.read_text(encoding="utf-8", errors="replace")) for f in verifying]


def _ci_files(top: Path) -> list[Path]:
    ci = [top / p for p in (".github/workflows", ".gitlab-ci.yml")]
    return [f for p in ci if p.exists() for f in ([p] if p.is_file() else
                                                  sorted(p.glob("*.y*ml")))]


def _verifies(f: Path) -> bool:
    text = f.read_text(encoding="utf-8", errors="replace")
    return "gitstate verify" in text or bool(installable.action_in(text))


def _ci_finding(rel: str, text: str) -> dict:
    """Whether a CI file that runs verify installs gitstate in a form pip can install (no
    network: what only the network could tell is said)."""
    action = installable.action_in(text)
    if action:
        return finding("ok", "ci", f"{rel} runs gitstate's action {action}; "
                       f"{installable.UNKNOWABLE}")
    spec = installable.spec_in(text)
    if spec is None:
        return finding("warn", "ci", f"{rel} runs `gitstate verify` but installs no gitstate "
                       "that can be seen (no GITSTATE_INSTALL, no `pip install`)",
                       "`gitstate init --ci github|gitlab` writes a job that installs it")
    status, detail = installable.judge(spec)
    fix = None if status == "ok" else \
        f"set GITSTATE_INSTALL in {rel} to {installable.DISTRIBUTION}==VERSION, a git URL " \
        "at a tag or a wheel's URL (or `gitstate init --ci ... --install SPEC` on a new file)"
    return finding(status, "ci", f"{rel} runs `gitstate verify`; its install line {detail}"
                   + (f"; {installable.UNKNOWABLE}" if status == "ok" else ""), fix)
