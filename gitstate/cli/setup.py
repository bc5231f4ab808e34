"""Setting up and looking after a repository: init, presets, lifecycle, check, hook."""

from __future__ import annotations

import os

import click

from gitstate.cli.app import (
    cli,
    declared,
    directory,
    emit,
    example,
    json_option,
    json_out,
    output,
    repo,
)
from gitstate.doors.check import check as checked
from gitstate.errors import EXIT_REJECTED, GitstateError, UsageError
from gitstate.git.runner import find_repo
from gitstate.law.diagram import describe, to_mermaid
from gitstate.law.lifecycle import SIGNERS_PATH
from gitstate.law.load import load_lifecycle
from gitstate.resources import preset_dir, presets as names
from gitstate.runtime.diagnosis import diagnose
from gitstate.runtime.registry import RUNTIMES


def _preset_lifecycle(name: str):
    return load_lifecycle((preset_dir(name) / "lifecycle.yaml").read_text(encoding="utf-8"),
                          f"{name}/lifecycle.yaml")


def print_init(data: dict) -> None:
    for line in data["actions"]:
        click.echo(f"  {line}")
    for i in data.get("integrations", []):
        _print_integration(i)
    unchanged = "" if data["actions"] else " (nothing to change)"
    if data["lifecycle"] is None:   # a hub
        click.echo(f"hub guarded: each push is judged by the lifecycle committed in its own "
                   f"history; hooks in {data['hooks_dir']}{unchanged}")
    else:
        click.echo(f"managed with lifecycle '{data['lifecycle']}'; hooks in "
                   f"{data['hooks_dir']}{unchanged}")


def _print_integration(i: dict) -> None:
    """A file init wrote for a runtime, a CI or systemd: what changed, what was kept."""
    what = (", ".join(i["added"]) or "updated") if i["changed"] else "nothing to change"
    kept = f"; kept {', '.join(i['kept'])}" if i["kept"] else ""
    click.echo(f"  {i['path']} ({i['kind']} {i['name']}): {what}{kept}")
    if i.get("then"):
        click.echo(f"    {i['then']}")


def _explain_keys() -> None:
    """Say how approvals become signed, until protocols/allowed_signers is committed; once,
    when it is news (what was said last is kept in .git/gitstate/approvals-said). Never asks
    (an agent runs init without a terminal): where a key of this user's is at hand, it prints
    the command that records it."""
    try:
        here = repo()
    except GitstateError:
        return
    git, head = here.git, here.git.head()
    human = _first_human(here, head)
    signed = bool(head and git.cat_files([f"{head}:{SIGNERS_PATH}"])[0] is not None)
    found = None if signed else _key_at_hand(git)
    if not _news(here.cache_dir, "signed" if signed else f"trailer {human} {found}"):
        return
    if signed:
        click.echo(f"approvals: signed with the keys in {SIGNERS_PATH}")
        return
    _print_unsigned(human, found)


def _first_human(here, head: str | None) -> str:
    try:
        return here.lifecycle(head).policies.humans[0]
    except (GitstateError, IndexError):
        return "<human>"


def _print_unsigned(human: str, found: tuple[str, str, bool] | None) -> None:
    """How approvals become signed: the key at hand to record, or how to record one."""
    said = (f"approvals: an Approved-by: trailer is taken at its word until {SIGNERS_PATH} "
            "lists the humans' SSH keys")
    if found is None:
        click.echo(f"{said}. To require signed approvals:\n"
                   f"  echo \"{human} $(cat ~/.ssh/id_ed25519.pub)\" >> {SIGNERS_PATH}\n"
                   f"  git add {SIGNERS_PATH} && git commit -m 'law: keys of the humans' "
                   f"-m 'Approved-by: {human}'\n"
                   "  and each human: git config gpg.format ssh; "
                   "git config user.signingkey ~/.ssh/id_ed25519")
        return
    public, private, configured = found
    signing = "" if configured else \
        f"\n  git config gpg.format ssh && git config user.signingkey {private}"
    click.echo(f"{said}. A key of this user's is at hand ({public}"
               f"{', git config user.signingkey' if configured else ''}); if it is {human}'s, "
               f"{human} records it (an agent's approval is refused) with:\n"
               f"  gitstate init --signing-key {public} --approved-by {human}{signing}")


def _key_at_hand(git) -> tuple[str, str, bool] | None:
    """(public key file, private key file, whether git signs with it) of this user's SSH key:
    the one `git config user.signingkey` names, else ~/.ssh/id_ed25519 (id_ecdsa, id_rsa)."""
    configured = git.config("user.signingkey")
    if configured and not configured.startswith("key::"):
        private = configured.removesuffix(".pub")
        if os.path.isfile(os.path.expanduser(f"{private}.pub")):
            return f"{private}.pub", private, True
    for name in ("id_ed25519", "id_ecdsa", "id_rsa"):
        private = os.path.join("~", ".ssh", name)
        if os.path.isfile(os.path.expanduser(f"{private}.pub")):
            return f"{private}.pub", private, False
    return None



def _news(cache_dir: str | None, said: str) -> bool:
    """Whether `said` differs from what init said last in this clone (and remember it)."""
    if not cache_dir:
        return True
    path = os.path.join(cache_dir, "approvals-said")
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == said:
                return False
    except OSError:
        pass
    try:
        os.makedirs(cache_dir, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(said)
    except OSError:
        pass
    return True


@example('gitstate init --human zach',
         'gitstate init --human zach --signing-key ~/.ssh/id_ed25519.pub',
         'gitstate init --lifecycle maos --ci github',
         'git init --bare hub.git && gitstate -C hub.git init --server')
@cli.command()
@click.option("--lifecycle", "lifecycle", metavar="PRESET|FILE", default=None,
              help="A shipped preset (see `gitstate presets`) or a lifecycle.yaml file. "
                   "Default: keep the repository's, or 'haak'.")
@click.option("--force", is_flag=True, help="Replace an existing lifecycle and protocol docs.")
@click.option("--no-commit", is_flag=True, help="Write the files but do not commit them.")
@click.option("--server", is_flag=True, help="Install the pre-receive hook in a bare hub.")
@click.option("--human", "humans", multiple=True, metavar="NAME",
              help="Who may approve gated moves (policies.humans of a new lifecycle).")
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="Approve a change of the law (lifecycle, shims) in a managed repository.")
@click.option("--signing-key", default=None, metavar="PATH|KEY",
              help="Record this SSH public key (a .pub file, the private key beside one, or "
                   "the key line) for the lifecycle's first human in protocols/allowed_signers,"
                   " in the same commit: approvals must then be signed.")
@click.option("--runtime", type=click.Choice(sorted(RUNTIMES)), default=None,
              help="Merge gitstate's hooks into the agent runtime's settings "
                   "(.claude/settings.json).")
@click.option("--ci", type=click.Choice(["github", "gitlab"]), default=None,
              help="Write a CI job running `gitstate verify --no-cache` on pushes and "
                   "pull requests.")
@click.option("--install", "install_spec", default=None, metavar="SPEC",
              help="With --ci: what the job has pip install (default: this exact release of "
                   "gitstate-agents from the package index), e.g. a git URL at a tag or a "
                   "wheel's URL.")
@click.option("--watch", is_flag=True,
              help="Write a systemd user service and timer that run `gitstate watch --once` "
                   "here every 30s (with --push where this branch has an upstream): timeouts "
                   "without cron. They are not started: init says how.")
@json_option
def init(lifecycle, force, no_commit, server, humans, approved_by, signing_key, runtime, ci,
         install_spec, watch, as_json):
    """Make this repository managed (idempotent)."""
    _refuse_misuse(install_spec, ci, watch, server)
    if ci:   # a SPEC that cannot install gitstate is refused before anything is written
        _check_ci_job(ci, install_spec)
    if server:
        from gitstate.doors.hub import init_server
        report = init_server(directory(), lifecycle)
    else:
        from gitstate.doors.install import init as do_init
        report = do_init(directory(), lifecycle, force=force, commit=not no_commit,
                         approved_by=approved_by, humans=tuple(humans),
                         signing_key=signing_key)
    integrations = _integrations(directory(), runtime, ci, install_spec) \
        if runtime or ci else []
    if watch:
        integrations.append(_watch_units())
    data = {**report.as_plain(), **({"integrations": integrations} if integrations else {})}
    output("init", data, as_json, print_init)
    if not server and not as_json:
        _explain_keys()


def _refuse_misuse(install_spec: str | None, ci: str | None, watch: bool, server: bool) -> None:
    if install_spec is not None and not ci:
        raise UsageError("--install says what a CI job installs: give --ci github|gitlab too")
    if watch and server:
        raise UsageError("a hub is watched through a clone of it: run `gitstate init --watch` "
                         "in that clone")


def _check_ci_job(ci: str, install_spec: str | None) -> None:
    from gitstate.runtime.ci import RELEASE, job
    job(ci, install_spec)
    if install_spec is None:
        click.echo(f"gitstate: note: the job installs {RELEASE} from the package index; "
                   "until that release is published there, give --install (a git URL at "
                   "a tag, or a wheel's URL)", err=True)


def _watch_units() -> dict:
    """`init --watch`: the units of `gitstate watch --systemd`, landing on the upstream where
    this branch has one."""
    from gitstate.moves.watch import EVERY
    from gitstate.runtime.systemd import install
    here = repo()
    tracked = here.git.call("rev-parse", "--abbrev-ref", "@{u}")[0] == 0
    return install(here.work_tree, EVERY, push=tracked)


def _integrations(directory: str | None, runtime: str | None, ci: str | None,
                  spec: str | None = None) -> list[dict]:
    """Write the runtime's settings and the CI job (neither is committed: review and commit
    them like any file of yours)."""
    _git, top, _gdir = find_repo(directory)
    out = []
    if runtime:
        from importlib import import_module
        out += import_module(RUNTIMES[runtime].install).install(top)
    if ci:
        from gitstate.runtime.ci import install as install_ci
        out.append(install_ci(top, ci, spec))
    return out


@example('gitstate presets', 'gitstate presets --json')
@cli.command()
@json_option
def presets(as_json):
    """List the shipped lifecycles."""

    rows = []
    for name in names():
        lc = _preset_lifecycle(name)
        rows.append({"name": name, "description": lc.description, "initial": lc.initial,
                     "states": list(lc.states), "default": name == "haak"})
    output("presets", {"presets": rows}, as_json, print_presets)


def print_presets(data: dict) -> None:
    for r in data["presets"]:
        mark = " (default)" if r["default"] else ""
        click.echo(f"{r['name']}{mark}: {r['description']}")
        click.echo(f"    states: {', '.join(r['states'])}")


@declared("lifecycle")
def lifecycle(mermaid, preset, as_json):
    lc = _preset_lifecycle(preset) if preset else repo().lifecycle()
    if as_json:
        emit("lifecycle", lc.to_dict())
    else:
        click.echo(to_mermaid(lc) if mermaid else describe(lc), nl=False)


@declared("check")
def check(as_json):
    result = checked(repo())
    output("check", result, as_json, print_check)
    return 0 if result["ok"] else EXIT_REJECTED


def print_check(result: dict) -> None:
    for p in result["problems"]:
        where = f"{p['file']}:{p['line']}" if p["line"] else p["file"]
        click.echo(f"[{p['rule']}] {where}: {p['message']}")
    for w in result.get("warnings") or ():
        click.echo(f"warning: {w}")
    from gitstate.cli.text import plural
    count = len(result["problems"])
    click.echo(plural(count, "problem") if count else "ok: lifecycle and state files are valid")


@example('gitstate hook pre-commit      # what .git/hooks/pre-commit runs')
@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("name")
@click.option("--agent", default=None, help="For runtime hooks: which agent (or $GITSTATE_AGENT).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook(name, agent, args):
    """Entry points for git hooks (pre-commit, commit-msg, pre-receive, ...) and agent
    runtimes (session-start, context, spawn-guard, subagent-start, notification: Claude
    Code's JSON on stdin)."""
    if name in ("pre-commit", "commit-msg", "pre-receive", "proc-receive", "post-receive",
                "reference-transaction"):
        from gitstate.doors.hooks import run_hook
        return run_hook(name, list(args))
    from gitstate.runtime.registry import hook_names, runtime_of
    if name in hook_names():
        if directory():
            os.chdir(directory())
        from importlib import import_module
        return import_module(runtime_of(list(args)).entry).run(
            name, list(args) + (["--agent", agent] if agent else []))
    raise GitstateError(f"unknown hook '{name}'", hint="known: pre-commit, commit-msg, "
                        "pre-receive, proc-receive, post-receive, reference-transaction, "
                        + ", ".join(sorted(hook_names())))


@declared("doctor")
def doctor(as_json):
    here = repo(bare_ok=True)
    hub_mode = here.top is None   # a bare repository: a hub
    if hub_mode:
        from gitstate.doors.hub import diagnose_hub
        findings = diagnose_hub(here.git)
    else:
        findings = diagnose(here)
    failed = any(f["status"] == "fail" for f in findings)

    def print_findings(data: dict) -> None:
        for f in data["findings"]:
            click.echo(f"{f['status']:<4}  {f['check']:<9}  {f['detail']}")
            if f["fix"] and f["status"] != "ok":
                click.echo(f"{'':17}-> {f['fix']}")
        click.echo(("this hub's doors hold" if hub_mode else "this clone's doors hold")
                   if not failed else "a door is open: see the lines marked fail")
    output("doctor", {"ok": not failed, "findings": findings}, as_json, print_findings)
    return EXIT_REJECTED if failed else 0


@example('gitstate -C /srv/hub.git hub drain')
@cli.group()
def hub():
    """On a hub (a bare repository made with `gitstate init --server`)."""


@example('gitstate -C /srv/hub.git hub drain --json')
@hub.command()
@json_option
def drain(as_json):
    """Land every move left in the hub's landing queue (after a crash: the next push to the
    queue lands them too)."""
    from gitstate.doors.queue import drain as land_all
    here = repo(bare_ok=True)
    if here.top is not None:   # a clone keeps no landing queue: only a hub does
        raise UsageError("`gitstate hub drain` is for a hub (a bare repository made with "
                         "`gitstate init --server`); this is a clone, which keeps no queue",
                         hint="run it on the hub: `gitstate -C /path/to/hub.git hub drain`")
    moves = land_all(here.git)
    data = {"landed": sum(m["outcome"] == "landed" for m in moves),
            "refused": sum(m["outcome"] != "landed" for m in moves), "moves": moves}

    def print_drain(d: dict) -> None:
        for m in d["moves"]:
            click.echo(f"{m['move'][:10]} -> {m['branch'].removeprefix('refs/heads/')}: "
                       + (f"landed as {m['landed'][:10]}" if m["outcome"] == "landed"
                          else f"refused [{m['rule']}] {m['message']}"))
        click.echo(f"{d['landed']} landed, {d['refused']} refused"
                   if d["moves"] else "the landing queue is empty")
    output("hub-drain", data, as_json, print_drain)


@example('gitstate schema roster', 'gitstate schema > schemas.json')
@cli.command()
@click.argument("command", required=False)
def schema(command):
    """Print the JSON Schema of COMMAND's `--json` output (every command's, without one)."""
    from gitstate.schema.models import COMMANDS, json_schema
    if command is None:
        json_out({name: json_schema(name) for name in COMMANDS})
        return
    if command not in COMMANDS:
        raise UsageError(f"no --json output is called '{command}'",
                         hint=f"known: {', '.join(COMMANDS)}")
    json_out(json_schema(command))
