"""Git hook entry points. This is the hot path: light imports only.

The shims in `.githooks/` decide in shell whether a commit concerns gitstate at all, and start
Python only when it does. For a state commit:

- pre-commit gets the staged state-file lines of `git diff --cached --raw` on stdin, judges the
  files (everything but the message), and, when they are legal, writes the exact subject prefix
  that would make the commit legal (`@alice: [STATE:deep_work]`) to an "expect" file, keyed by
  HEAD and those raw lines;
- commit-msg, in shell, accepts a message whose subject starts with that prefix when the key
  still matches, without starting Python again. Any other message (a mismatch, a move that
  needs approval, a merge, no expect file) is judged in full by Python here.

So Python decides every verdict; the shell only recognises a verdict Python already gave.
Nothing here imports click, pydantic, GitPython, pathlib or dataclasses.
"""

from __future__ import annotations

import os
import sys

from gitstate.errors import GitstateError
from gitstate.git.lawfiles import INDEX, cached_law, fallback_law, read_law
from gitstate.git.repo import GitContext, on_team_line
from gitstate.git.runner import Git
from gitstate.law import statefile
from gitstate.law.agents import agent_file
from gitstate.law.grammar import Message, parse_message
from gitstate.law.judge import Facts, judge
from gitstate.law.lifecycle import LIFECYCLE_PATH, SIGNERS_PATH, is_law_path
from gitstate.law.limits import LIFECYCLE_BYTES
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import FileChange, Violation

# pre-commit judges the staged files; the message does not exist yet (commit-msg judges it)
LATER = ("Only the staged files were judged so far: the commit message (its @id: prefix, "
         "[STATE:x] tag and trailers) is judged once these are fixed.")


def main() -> int:
    """`python -c 'from gitstate.doors.hooks import main; main()' NAME ARGS...` (what the shims run:
    it skips the start-up of `python -m`)."""
    if len(sys.argv) < 2:
        print("usage: gitstate hook NAME [ARGS...]", file=sys.stderr)
        return 2
    code = run_hook(sys.argv[1], sys.argv[2:])
    sock = os.environ.get("GITSTATE_JUDGE_START")
    if sock and sys.argv[1] in ("pre-commit", "commit-msg"):
        from gitstate.doors.resident import start  # for the next commit (doors/resident.py)
        start(sock)
    return code


def run_hook(name: str, args: list[str]) -> int:
    try:
        return _run(name, args)
    except GitstateError as exc:
        print(f"gitstate: {exc}", file=sys.stderr)
        return exc.exit_code


def _run(name: str, args: list[str]) -> int:
    args, expect, cache, encoding = _hook_args(args)
    if name == "pre-commit":
        return pre_commit(Git(), _stdin_text(), expect, cache, encoding)
    if name == "commit-msg":
        return _commit_msg(args, cache)
    return _other_hook(name)


def _hook_args(args: list[str]):
    """(the arguments, the expect file, the cache folder, the commit's encoding)."""
    # the encoding git will declare in the commit, as the pre-commit shim read it with the
    # hook's Python (no second `git config`); absent, the door asks git
    given = [a.partition("=")[2] for a in args if a.startswith("--commit-encoding=")]
    args = [a for a in args if not a.startswith("--commit-encoding=")]
    expect = args[args.index("--expect") + 1] if "--expect" in args[:-1] else None
    cache = os.path.join(os.path.dirname(expect), "gitstate") if expect else None
    return args, expect, cache, given[-1] if given else None


def _other_hook(name: str) -> int:
    """The hooks but the commit's: the hub's, the ref guard, and `recover`."""
    if name == "pre-receive":
        from gitstate.doors.hub import pre_receive
        return pre_receive(Git(), sys.stdin.buffer)
    if name == "proc-receive":
        from gitstate.doors.queue import proc_receive
        return proc_receive(sys.stdin.buffer, sys.stdout.buffer)
    if name == "post-receive":
        from gitstate.doors.hub import post_receive
        return post_receive(Git(), sys.stdin.buffer)
    if name == "reference-transaction":
        from gitstate.doors.guard import guard
        return guard(Git(), _stdin_text())
    if name == "recover":
        return finish_interrupted()
    print(f"gitstate: unknown hook '{name}'", file=sys.stderr)
    return 2


def _commit_msg(args: list[str], cache: str | None) -> int:
    """The message file (the first argument but `--expect FILE`) judged with the index."""
    files = [a for i, a in enumerate(args) if a != "--expect" and
             (i == 0 or args[i - 1] != "--expect")]
    if not files:
        print("gitstate: the commit-msg hook needs the message file", file=sys.stderr)
        return 2
    with open(files[0], "rb") as fh:
        # the message as git will commit it: its default cleanup drops comment lines
        # (when it keeps them, the shim leaves the commit to the ref guard, which
        # judges the message as committed)
        message = parse_message(fh.read().decode("utf-8", "replace"), cleanup=True)
    return _report(_judge_staged(Git(), _stdin_text(), message, cache)[0])


def finish_interrupted() -> int:
    """What the pre-commit shim runs when it finds a journal: a gitstate move was killed
    between publishing its commit and updating the index. Finish that first, so that the
    commit being made starts from the index that HEAD implies (git reads the index again after
    this hook)."""
    from gitstate.git.atomic import recover, repo_lock
    from gitstate.git.runner import find_repo
    git, top, gdir = find_repo()
    with repo_lock(gdir):
        recover(git, top, gdir)
    return 0


def _stdin_text() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.read()


def pre_commit(git: Git, raw: str, expect: str | None, cache: str | None = None,
               encoding: str | None = None) -> int:
    if expect:
        _remove(expect)   # a verdict is only ever for the commit being made now
    violations, verdict = _judge_staged(git, raw, None, cache, encoding)
    if violations:
        return _report(violations, LATER)
    if expect and verdict:
        head, prefix = verdict
        try:
            with open(expect, "w", encoding="utf-8") as fh:
                fh.write(f"{head}\n{prefix}\n{raw.rstrip(chr(10))}\n")
        except OSError:
            pass  # no shortcut then: commit-msg judges the message in full
    return 0


def _report(violations: list[Violation], later: str = "") -> int:
    if not violations:
        return 0
    from gitstate.history.problems import folded
    n = len(violations)
    lines = [f"gitstate: commit refused ({n} problem{'s' if n != 1 else ''}):"]
    lines += [f"  {v}" for v in folded(violations, lambda v: v.rule)]
    lines.append("Nothing was committed; the index and work tree are as they were.")
    if later:
        lines.append(later)
    print("\n".join(lines), file=sys.stderr)
    return 1


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _raw_paths(raw: str) -> tuple[list[str], dict[str, str], dict[str, str]] | None:
    """(paths, path -> new mode, path -> old blob id) of `git diff --raw --abbrev=40` lines,
    or None if git quoted a path (then ask git with -z)."""
    pairs = [line.split("\t", 1) for line in raw.splitlines() if "\t" in line]
    if any(path.startswith('"') for _meta, path in pairs):
        return None
    return _listing(pairs)


def _staged_raw(git: Git, base: str | None
                ) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(paths, path -> new mode, path -> old blob id) of the index against `base`, asked of
    git."""
    out = git.run("diff-index", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev",
                  base or git.empty_tree())
    parts = out.decode("utf-8", "surrogateescape").split("\0")
    return _listing(zip(parts[0::2], parts[1::2]))


def _listing(pairs) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(paths, path -> new mode, path -> old blob id) of raw lines' (`:old-mode new-mode
    old-blob new-blob status`, path) pairs."""
    paths: list[str] = []
    modes: dict[str, str] = {}
    olds: dict[str, str] = {}
    for meta, path in pairs:
        fields = meta.split()
        paths.append(path)
        if len(fields) > 1:
            modes[path] = fields[1]
        if len(fields) > 2 and len(fields[2]) >= 40:
            olds[path] = fields[2]
    return paths, modes, olds


def _judge_staged(git: Git, raw: str, message: str | Message | None,
                  cache: str | None = None, encoding: str | None = None):
    """(violations, verdict) for the commit being made from the index: its facts gathered
    (`_staged`), judged by the one judge.

    verdict is (HEAD, subject prefix) when the files alone are legal and the message could be
    recognised in shell; None when commit-msg must judge in full.
    """
    parent = "HEAD^" if _parent_is_amend() else "HEAD"
    paths, modes, got = _staged(git, raw, parent)
    head, _, old_lc, new_lc = got[:4]
    base = parent if head else None   # the commit's parent (None: the first commit)
    lc, refused = _law_in_force(git, old_lc or new_lc, base, paths, cache,
                                base if old_lc else INDEX)
    law_problem = _new_law_problem(git, lc, new_lc, paths)
    if lc is None:
        return _found(law_problem or refused), None
    facts = _facts(git, lc, base, paths, modes, got, message, law_problem, encoding)
    out = judge(facts)
    if out or _judged_in_full(facts):
        return out, None
    return out, _verdict(lc, facts.changes, head[0] if head else "none")


def _new_law_problem(git: Git, lc, new_lc, paths: list[str]) -> Violation | None:
    """What is wrong with the staged law, when the commit touches it or its agent files."""
    if LIFECYCLE_PATH in paths or (lc is not None and new_lc
                                   and any(agent_file(lc, p) for p in paths)):
        return _check_new_lifecycle(git, new_lc)
    return None


def _found(found: Violation | None) -> list[Violation]:
    return [found] if found is not None else []


def _facts(git: Git, lc, base: str | None, paths: list[str], modes: dict[str, str],
           got: list, message: str | Message | None, law_problem: Violation | None,
           encoding: str | None = None) -> Facts:
    """What this door knows of the commit being made, as `_staged` read it."""
    head, merge_head, old_lc = got[:3]
    law_changed = [p for p in paths if is_law_path(p, lc)] if old_lc is not None else []
    merge = bool(merge_head and head)
    msg = parse_message(message) if isinstance(message, str) else message
    memo: dict = {}   # each state file parsed once, by the rules and for the census alike
    context = GitContext(git, base, tree=None, lc=lc, memo=memo)
    from gitstate.law.movers import agent_session
    bound, mark = agent_session(os.environ)
    return Facts(lc, _changes(lc, paths, modes, got[4:]), message=msg, law_changed=law_changed,
                 law_problem=law_problem, merge=merge, line=merge and on_team_line(git, lc),
                 context=context, bound=bound, mark=mark, memo=memo,
                 encoding=_commit_encoding(git, encoding),
                 signers_known=lambda: _has_signers(git, base))


def _changes(lc, paths: list[str], modes: dict[str, str], contents: list) -> list[FileChange]:
    """The staged state files: each path's old and new side, as `_staged` read them."""
    rx = lc.state_path_regex()
    out = []
    for i, p in enumerate(paths):
        if rx.match(p):
            old, new = contents[2 * i], contents[2 * i + 1]
            out.append(FileChange(p, old and old[2], new and new[2], new_mode=modes.get(p)))
    return out


def _commit_encoding(git: Git, given: str | None = None) -> str | None:
    """The `encoding` header git will write into the commit being made: its
    i18n.commitEncoding, unless that is UTF-8 (then git writes none). The commit-msg hook
    leaves the ref guard a blessing that spares it a second judgement, so this door, and not
    the guard, must say that the commit would be refused (`encoding`). `given`: as the
    shim read it ("" for none)."""
    value = git.config("i18n.commitEncoding") if given is None else given
    return value if value and value.strip().lower() not in ("utf-8", "utf8") else None


def _has_signers(git: Git, base: str | None) -> bool:
    return base is not None and git.cat_files([f"{base}:{SIGNERS_PATH}"])[0] is not None


def _staged(git: Git, raw: str, base: str) -> tuple[list[str], dict[str, str], list]:
    """(staged paths, path -> new mode, what one `cat-file --batch` says of: HEAD,
    MERGE_HEAD, the lifecycle at `base` and staged, then each path at `base` and staged)."""
    found = _raw_paths(raw) if raw.strip() else None
    paths, modes, olds = found if found is not None else _staged_raw(git, git.rev(base))
    if base != "HEAD" and found is not None:
        olds = {}   # the shim's listing is against HEAD, not the commit being amended
    specs = ["HEAD", "MERGE_HEAD", f"{base}:{LIFECYCLE_PATH}", f":{LIFECYCLE_PATH}"]
    for p in paths:
        # the old side by its blob id, as the listing names it: `base:path` would make git
        # scan the folder once per path (N * N for N agents in one folder); `:path` is found
        # by a binary search of the index
        specs += [olds.get(p) or f"{base}:{p}", f":{p}"]
    # a commit of the law asks sizes first: a staged 20 MB lifecycle is refused unread
    return paths, modes, git.cat_batch(specs,
                                       LIFECYCLE_BYTES if LIFECYCLE_PATH in paths else None)


def _law_in_force(git: Git, found, base: str | None, paths: list[str],
                  cache: str | None, rev: str | None) -> tuple:
    """(the lifecycle the staged commit is judged by, or None; the refusal when there is
    none to judge by, or it is invalid): as committed, else as staged, else once managed,
    always managed (`fallback_law`)."""
    law = found or fallback_law(git, base)
    if law is None:
        return None, _no_law(git, paths)
    try:
        if law[0]:   # with its agent files (`rev`: where `found` was read), git/lawfiles.py
            return cached_law(git, law, rev if found else base, cache), None
        return read_law(git, law[2], None), None   # the work tree's, never committed
    except GitstateError as exc:
        return None, Violation(getattr(exc, "rule", Rule.LIFECYCLE), exc.message,
                               exc.where or LIFECYCLE_PATH)


def _no_law(git: Git, paths: list[str]) -> Violation | None:
    """The refusal of a managed clone's state commit with no law to judge it by (None: not
    managed yet, nothing to enforce)."""
    if changes_state_files(paths) and git.config("gitstate.managed") == "true":
        return Violation(Rule.LIFECYCLE, f"this clone is managed by gitstate, but no "
                         f"{LIFECYCLE_PATH} is committed, staged or in the work tree "
                         "to judge this commit by", LIFECYCLE_PATH)
    return None


def _judged_in_full(f: Facts) -> bool:
    """Must commit-msg judge the message in full: a merge, a change of the law, a change the
    fourth wall keeps for the system, or a bound session's move of another agent, whose
    verdict waits for its trailers?"""
    return bool(f.merge or f.law_changed) or _wall_waits(f) or _binding_waits(f)


def _wall_waits(f: Facts) -> bool:
    if f.changes and f.message is None and f.lc.policies.fourth_wall:
        from gitstate.law.wall import waits_for_message
        return waits_for_message(f.lc, f.changes, f.memo)
    return False


def _binding_waits(f: Facts) -> bool:
    if not f.bound or not f.changes or f.message is not None:
        return False
    from gitstate.law.movers import judge_binding
    assert f.context is not None and f.memo is not None
    return judge_binding(f.lc, f.bound, f.changes, None, f.context.agents, f.memo)[1]


def changes_state_files(paths: list[str]) -> bool:
    """Does a commit of `paths` touch what looks like a state file (default layout)?"""
    return any(p.endswith("/_state.md") or p.startswith("agent/") for p in paths)


def _verdict(lc, changes: list[FileChange], head: str):
    """The subject prefix that makes these (legal) files a legal commit, if shell can check it."""
    rx = lc.state_path_regex()
    changed = [c for c in changes if c.old != c.new]
    c = changed[0] if len(changed) == 1 else None
    if c is None or c.new is None:
        return None
    doc = statefile.parse_bytes(c.new, c.path)
    if _needs_trailer(lc, c, doc):
        return None
    return head, f"@{rx.match(c.path).group('id')}: [STATE:{doc.state}]"


def _needs_trailer(lc, c: FileChange, doc) -> bool:
    """Does the move of `c` (its new side `doc`) need a trailer? Trailers are read by Python
    only."""
    old = statefile.parse_bytes(c.old, c.path) if c.old is not None else None
    was = old.state if old is not None else None
    if was is not None and lc.needs_approval(was, doc.state):
        return True
    role = statefile.as_text(doc.get("role"))
    if was is None and role and role not in lc.roles:
        return True   # a new role's `New-role:`
    # a role taken (`Assumes-role:`) or changed
    return old is not None and role != statefile.as_text(old.get("role"))


def _check_new_lifecycle(git: Git, staged) -> Violation | None:
    """The problem of the law being committed: its lifecycle deleted, or invalid, or one of
    its agent files (law/agents.py)."""
    if staged is None:
        return Violation(Rule.LIFECYCLE, "the lifecycle is being deleted; a managed repository "
                         "needs one", LIFECYCLE_PATH)
    try:
        read_law(git, staged[2], INDEX)
    except GitstateError as exc:
        return Violation(getattr(exc, "rule", Rule.LIFECYCLE), exc.message,
                         exc.where or LIFECYCLE_PATH)
    return None


def _parent_is_amend() -> bool:
    # git tells hooks nothing about --amend; on Linux the command line of the `git commit`
    # that runs us (our parent's parent: the shim's shell sits between) says it.
    pid = os.getppid()
    for _ in range(4):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                args = fh.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as fh:
                stat_line = fh.read()
        except OSError:
            return False
        if args and args[0].rsplit(b"/", 1)[-1] == b"git" or b"commit" in args[:3]:
            return b"--amend" in args
        pid = int(stat_line.rsplit(")", 1)[1].split()[1])
        if pid <= 1:
            return False
    return False
