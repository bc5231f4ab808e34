"""The hub's landing queue (docs/explanation/landing.md).

`--push` sends a move to `refs/gitstate/queue/<branch>` of a hub made by `gitstate init
--server`. git hands such a push to the hub's `proc-receive` hook instead of writing the ref
(`receive.procReceiveRefs`), so a push never races another. The hook files the move as a
request named by its time of arrival and waits for its outcome. When no lander is at work,
its own process becomes the lander: it takes the landing lock and lands every request
waiting, its own and any filed after it while it works, in one pass (doors/batch.py: in
order of arrival, each on the tip the ones before made, one `update-ref` for the batch). A
pusher whose request a lander at work will land does not take the landing lock: it waits
for that lander's pass to end (the lander's lock, `queue/lander`, held shared for an
instant) and reads its outcome in `done/`; filed too late for that pass, it lands the next
one itself. Each pusher is told how its own move landed in git's own push report: `ok`,
naming the branch and the landed commit, or `ng` with `gitstate:<rule>` and the hub's words.

A move M (one commit, not a merge, built on the branch's history, changing a state file and
carrying at most `gitstate.queueMaxBytes` of new blobs and message) lands on the branch's tip T:
- as itself, when its parent is T (a fast-forward);
- unsigned, as a commit with M's message, author and committer on top of T, whose tree is the
  three-way merge of T and M (what `git merge-tree --write-tree` makes of it);
- signed (an approval, a law change, a keyed agent's move), only as itself: its signature
  holds for the tip it was made on, and the signers in force are those of the line where it
  joins; signed on an older tip, it is refused (`queue-stale`) and made again on the tip;
and the result is judged by `verify`, as every push is. A change the hub's side made to the
same lines refuses it: `queue-stale` when that is the mover's own state file (the move was
decided from an older state; the pusher decides it again), else `queue-conflict`. A refused
move is left out of its batch; the ones after it land on the last good tip.

Nothing is landed twice, whatever is killed when: each request of a batch says which commit
it lands before the branch moves (one compare-and-swap for the batch), and a request found
again after a crash is landed if that commit is on the branch, else judged again. Each
outcome is kept for a day under the move's id, so a pusher whose connection broke, pushing
the same move again, is told how it landed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import contextmanager

from gitstate.git import QUEUE_PREFIX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

    from gitstate.git.runner import Git

MOVE_BYTES = 8 << 20     # new blobs one queued move may carry (git config gitstate.queueMaxBytes)
MOVES_PER_PUSH = 16      # queued moves in one push
KEEP_OUTCOMES = 86400    # seconds an outcome is kept for a pusher that asks again
# Rule ids, spelled here: a pusher that only waits for a lander's pass imports nothing of
# the law (tests/doors/test_queue.py holds them equal to law/rule_ids.py's)
TOO_MANY_REFS, QUEUE_MOVE = "too-many-refs", "queue-move"


def proc_receive(stdin: BinaryIO, stdout: BinaryIO, git_dir: str | None = None) -> int:
    """git's proc-receive protocol (githooks(5)): each queued ref's outcome back to git.

    Most pushers of a burst only file their move and wait for a lander's pass: that costs
    the interpreter's start, `json` and the files of the queue, nothing of the law or of
    git's runner, which only a lander imports."""
    _read_until_flush(stdin)
    _pkt(stdout, b"version=1\0")
    _flush(stdout)
    # (split on single spaces: git hands this hook a ref named with blanks or odd bytes as it
    # came, and each one named must be answered, with its very name)
    commands = [line.decode("utf-8", "surrogateescape").split(" ", 2)
                for line in _read_until_flush(stdin)]
    commands = [c for c in commands if len(c) == 3]
    for _old, new, ref in commands:
        _answer(stdout, ref, new, _queued(len(commands), ref, new, git_dir))
    _flush(stdout)
    return 0


def _queued(count: int, ref: str, new: str, git_dir: str | None) -> dict:
    """The outcome of one of the `count` refs a push queues."""
    if count > MOVES_PER_PUSH:
        return _refused(new, TOO_MANY_REFS, f"this push queues {count} "
                        f"moves; the hub takes at most {MOVES_PER_PUSH} in one push")
    if not _is_branch_name(ref.removeprefix(QUEUE_PREFIX)) or not _is_oid(new):
        return _refused(new, QUEUE_MOVE, f"{ref.removeprefix(QUEUE_PREFIX)!r} is no branch "
                        f"name git would take (git check-ref-format); push to "
                        f"{QUEUE_PREFIX}<branch>")
    try:
        return queue_and_land(Queue(git_dir or _hook_git_dir()), ref, new)
    except Exception as exc:   # every queued ref gets an answer
        return _refused(new, QUEUE_MOVE, f"the hub could not queue it: {exc}")


def _answer(stdout: BinaryIO, ref: str, new: str, outcome: dict) -> None:
    """A queued ref's outcome in git's report: `ok`, naming the branch and the landed commit,
    or `ng` with the rule and the hub's words (said on stderr too)."""
    if outcome["outcome"] == "landed":
        for line in (f"ok {ref}", f"option refname {outcome['branch']}",
                     f"option old-oid {outcome['old']}", f"option new-oid {outcome['landed']}"):
            _pkt(stdout, line.encode("utf-8", "surrogateescape"))
        return
    words = " ".join(outcome["message"].split())[:4000]
    _pkt(stdout, f"ng {ref} gitstate:{outcome['rule']} {words}".encode("utf-8",
                                                                       "surrogateescape"))
    print(f"gitstate: the hub refused the queued move {new[:10]} [{outcome['rule']}]: "
          f"{outcome['message']}", file=sys.stderr)


def _hook_git_dir() -> str:
    """The hub's git dir: git gives its hooks `GIT_DIR` (githooks(5)); else asked of git."""
    given = os.environ.get("GIT_DIR")
    if given:
        return os.path.abspath(given)
    from gitstate.git.runner import Git
    return Git().text("rev-parse", "--absolute-git-dir")


def queue_and_land(queue: Queue, ref: str, move: str) -> dict:
    """File the move, and wait for its outcome: landed by a pass of another pusher's lander,
    or by this one's, when no lander is at work."""
    branch = "refs/heads/" + ref.removeprefix(QUEUE_PREFIX)
    name = queue.file(branch, move)
    return queue.wait(name, move) or _refused(move, QUEUE_MOVE, "the hub lost this move's "
                                             "outcome; push it again")


def drain(git: Git) -> list[dict]:
    """`gitstate hub drain`: land every request left in the queue (e.g. after a crash)."""
    queue = Queue(git.text("rev-parse", "--absolute-git-dir"), git)
    with queue.landing():
        return queue.land_pending()


class Queue:
    """Requests in `<git dir>/gitstate/queue/`, their outcomes in `.../done/`; the landing
    lock (`gitstate/lock`), and the lander's (`queue/lander`), which a pusher waits on.
    git's runner is made when a pass needs it (a waiting pusher never does)."""

    def __init__(self, git_dir: str, git: Git | None = None):
        self.git_dir = git_dir
        self.dir = os.path.join(git_dir, "gitstate", "queue")
        self.done = os.path.join(self.dir, "done")
        os.makedirs(self.done, exist_ok=True)
        self._git = git
        self.laws: dict = {}
        self.marked: str | None = None   # the tip a pass is about to set, marked (_record)

    @property
    def git(self) -> Git:
        if self._git is None:
            from gitstate.git.runner import Git
            self._git = Git()
        return self._git

    def file(self, branch: str, move: str) -> str:
        name = f"{time.time_ns():020d}-{os.getpid()}-{move[:12]}"
        _write(os.path.join(self.dir, name), {"branch": branch, "move": move})
        return name

    def locked(self):
        from pathlib import Path

        from gitstate.git.atomic import repo_lock
        return repo_lock(Path(self.git_dir))

    @contextmanager
    def landing(self):
        """The lander's lock, then the landing lock: held for a pass."""
        from pathlib import Path

        from gitstate.git.atomic import repo_lock
        with repo_lock(Path(self.git_dir), "queue/lander"), self.locked():
            yield

    def wait(self, name: str, move: str) -> dict | None:
        """The outcome of the request `name`: a pusher whose request a lander at work will
        land (or is landing) waits for that lander's pass to end, then reads its outcome;
        when no lander is at work, it lands the queue itself."""
        try:
            import fcntl
        except ImportError:   # no flock (Windows): each pusher lands the queue itself
            with self.landing():
                self.land_pending()
            return self.answer(name, move)
        with open(os.path.join(self.dir, "lander"), "a+") as lander:
            while True:
                answered = self.answer(name, move)
                if answered is not None:
                    return answered
                try:
                    fcntl.flock(lander.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:    # a lander is at work: its pass ends, then look
                    fcntl.flock(lander.fileno(), fcntl.LOCK_SH)
                    fcntl.flock(lander.fileno(), fcntl.LOCK_UN)
                    continue
                try:
                    with self.locked():
                        self.land_pending()
                finally:   # the landing lock first: a pusher woken here may land at once
                    fcntl.flock(lander.fileno(), fcntl.LOCK_UN)
                return self.answer(name, move) or self.outcome(move)

    def answer(self, name: str, move: str) -> dict | None:
        """The request's outcome, once it has one: its own (`done/<request>`, read once), or
        the move's, when the request is gone (its outcome was written first) or the outcome
        names it. (The move's alone is the last branch's it was queued for.)"""
        own = os.path.join(self.done, name)
        try:
            with open(own, encoding="utf-8") as fh:
                outcome = json.load(fh)
            _unlink(own)
            return outcome
        except (OSError, ValueError):
            pass
        filed = os.path.exists(os.path.join(self.dir, name))
        outcome = self.outcome(move)
        if outcome is not None and (not filed or outcome.get("request") == name):
            return outcome
        return None

    def outcome(self, move: str) -> dict | None:
        try:
            with open(os.path.join(self.done, move), encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    def land_pending(self) -> list[dict]:
        """Every request waiting, in order of arrival, each branch's in one pass (the lock
        is held)."""
        from gitstate.doors.batch import Lander
        requests = self._pending(set())
        if not requests:
            return []
        limit = self.git.config("gitstate.queueMaxBytes")
        max_bytes = int(limit) if limit and limit.isdigit() else MOVE_BYTES
        lander = Lander(self.git, max_bytes, self.outcome, self.laws)
        outcomes: list[dict] = []
        try:
            for branch in sorted({r["branch"] for _n, r in requests}):
                outcomes += self._land_branch(lander, branch, requests)
        finally:
            lander.close()
        self._forget_old()
        return outcomes

    def _land_branch(self, lander, branch: str, requests: list[tuple[str, dict]]
                     ) -> list[dict]:
        """The requests for `branch` landed in one pass, each answered in its file."""
        from gitstate.doors.hub import record_received
        from gitstate.law.rule_ids import Rule
        mine = [(n, r) for n, r in requests if r["branch"] == branch]
        steps = lander.land(branch, mine,
                            lambda seen, b=branch: [(n, r) for n, r in
                                                    self._pending(seen) if
                                                    r["branch"] == b],
                            self._record)
        arrivals = _arrivals(steps)
        noted = record_received(self.git, self.git_dir, arrivals)
        if self.marked and not (noted and self.marked in dict(arrivals)):
            _unlink(os.path.join(self.dir, "landed", self.marked))   # post-receive notes it
        self.marked = None
        outcomes = []
        for step in steps:
            outcome = {**(step.outcome or _refused(step.move, Rule.QUEUE_MOVE, "the "
                                                   "hub could not land it")),
                       "branch": branch, "request": step.name}
            _write(os.path.join(self.done, step.name), outcome)   # its pusher's to read
            _write(os.path.join(self.done, step.move), outcome)   # the move's, if pushed again
            _unlink(os.path.join(self.dir, step.name))
            outcomes.append(outcome)
        return outcomes

    def _pending(self, seen: set[str]) -> list[tuple[str, dict]]:
        """(name, request) of each request filed, in order of arrival, but those `seen`; a
        file that is not a request this hub filed is removed."""
        names = sorted(n for n in os.listdir(self.dir) if n[0].isdigit() and n not in seen)
        found = []
        for name in names:
            request = self._request(name)
            if request is None:
                _unlink(os.path.join(self.dir, name))   # nothing this hub filed
                continue
            found.append((name, request))
        return found

    def _record(self, steps) -> None:
        """Before the branch moves: each request landing a commit says which, on which tip;
        and the tip it moves to is marked noted (`landed/<commit>`), so that the hub's
        reference-transaction hook (post-receive's script) starts nothing for the pass's own
        update: the pass notes its moves itself, with when each arrived (the mark is taken
        back when it does not)."""
        for step in steps:
            if step.new:
                _write(os.path.join(self.dir, step.name), {**step.request,
                                              "landing": {"commit": step.new, "old": step.old}})
        top = next((s.new for s in reversed(steps) if s.new), None)
        if self.marked and self.marked != top:
            _unlink(os.path.join(self.dir, "landed", self.marked))
        self.marked = top
        if top:
            os.makedirs(os.path.join(self.dir, "landed"), exist_ok=True)
            open(os.path.join(self.dir, "landed", top), "w").close()

    def _request(self, name: str) -> dict | None:
        """The request filed as `name`, if it is one this hub filed."""
        try:
            with open(os.path.join(self.dir, name), encoding="utf-8") as fh:
                request = json.load(fh)
        except (OSError, ValueError):
            return None
        if not (isinstance(request, dict) and _is_oid(str(request.get("move")))
                and str(request.get("branch", "")).startswith("refs/heads/")):
            return None
        return request

    def _forget_old(self) -> None:
        """Outcomes, and the marks of moves noted (doors/hub.py), older than a day."""
        cutoff = time.time() - KEEP_OUTCOMES
        for folder in (self.done, os.path.join(self.dir, "landed")):
            try:
                with os.scandir(folder) as entries:
                    old = [e.path for e in entries if e.stat().st_mtime < cutoff]
            except OSError:
                continue
            for path in old:
                _unlink(path)


def _arrivals(steps) -> list[tuple[str, int]]:
    """(the commit landed, when its request arrived) of each move a pass landed, and of each
    one a pass that died after the branch moved had landed (its request says which commit):
    that pass never noted it, and no post-receive will (its pusher is gone)."""
    found = []
    for s in steps:
        outcome = s.outcome or {}
        landing = s.request.get("landing")
        commit = s.new or (landing.get("commit") if isinstance(landing, dict) else None)
        if commit and outcome.get("outcome") == "landed" and outcome.get("landed") == commit:
            found.append((commit, int(s.name[:20]) // 10**9))
    return found


def _refused(move: str, rule: str, message: str) -> dict:
    return {"outcome": "refused", "move": move, "rule": str(rule), "message": message}


def _is_branch_name(name: str) -> bool:
    """Is `name` one git takes for a branch (git check-ref-format's rules)? git hands this
    hook the queue's refs without asking: `main^0` or `main~1` would name a commit to land
    on, and a branch no update-ref can write."""
    if not name or name == "@" or name.endswith((".", "/")) or "@{" in name or ".." in name \
            or any(c in name for c in " ~^:?*[\\\x7f") or any(ord(c) < 32 for c in name):
        return False
    return all(part and not part.startswith(".") and not part.endswith(".lock")
               for part in name.split("/"))


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _write(path: str, data: dict) -> None:
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data))
    os.replace(tmp, path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _read_until_flush(stream: BinaryIO) -> list[bytes]:
    lines: list[bytes] = []
    while True:
        head = stream.read(4)
        if len(head) < 4:
            raise EOFError("git closed the proc-receive protocol early")
        size = int(head, 16)
        if size == 0:
            return lines
        lines.append(stream.read(size - 4).rstrip(b"\n"))


def _pkt(stream: BinaryIO, data: bytes) -> None:
    stream.write(b"%04x" % (len(data) + 4) + data)


def _flush(stream: BinaryIO) -> None:
    stream.write(b"0000")
    stream.flush()

