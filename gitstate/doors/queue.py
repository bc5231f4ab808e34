"""The hub's landing queue (the README's "Many clones").

`--push` sends a move to `refs/gitstate/queue/<branch>` of a hub made by `gitstate init
--server`. git hands such a push to the hub's `proc-receive` hook instead of writing the ref
(`receive.procReceiveRefs`), so a push never races another. The hook files the move as a
request named by its time of arrival, takes the landing lock, lands every request up to its
own in that order, and tells the pusher how its move landed in git's own push report: `ok`,
naming the branch and the landed commit, or `ng` with `gitstate:<rule>` and the hub's words.

A move M (one commit, not a merge, built on the branch's history, changing a state file and
carrying at most `gitstate.queueMaxBytes` of new blobs) lands on the branch's tip T:
- as itself, when its parent is T (a fast-forward);
- unsigned, as a commit with M's message, author and committer on top of T, whose tree is the
  three-way merge of T and M (`git merge-tree --write-tree`);
- signed (an approval, a law change, a keyed agent's move), only as itself: its signature
  holds for the tip it was made on, and the signers in force are those of the line where it
  joins; signed on an older tip, it is refused (`queue-stale`) and made again on the tip;
and the result is judged by `verify`, as every push is. A change the hub's side made to the
same lines refuses it: `queue-stale` when that is the mover's own state file (the move was
decided from an older state; the pusher decides it again), else `queue-conflict`.

Nothing is landed twice, whatever is killed when: a request says which commit it is landing
before the branch moves (a compare-and-swap), and a request found again after a crash is
landed if that commit is on the branch, else judged again. Each outcome is kept for a day
under the move's id, so a pusher whose connection broke, pushing the same move again, is told
how it landed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from gitstate.git.push import QUEUE_PREFIX
from gitstate.git.runner import Git
from gitstate.law.rule_ids import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

MOVE_BYTES = 8 << 20     # new blobs one queued move may carry (git config gitstate.queueMaxBytes)
MOVES_PER_PUSH = 16      # queued moves in one push
KEEP_OUTCOMES = 86400    # seconds an outcome is kept for a pusher that asks again


class Refused(Exception):
    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule, self.message = rule, message


def proc_receive(git: Git, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """git's proc-receive protocol (githooks(5)): each queued ref's outcome back to git."""
    _read_until_flush(stdin)
    _pkt(stdout, b"version=1\0")
    _flush(stdout)
    commands = [line.decode("utf-8", "replace").split() for line in _read_until_flush(stdin)]
    commands = [c for c in commands if len(c) == 3]
    for _old, new, ref in commands:
        if len(commands) > MOVES_PER_PUSH:
            outcome = _refused(new, Rule.TOO_MANY_REFS, f"this push queues {len(commands)} "
                               f"moves; the hub takes at most {MOVES_PER_PUSH} in one push")
        else:
            try:
                outcome = queue_and_land(git, ref, new)
            except Exception as exc:   # every queued ref gets an answer
                outcome = _refused(new, Rule.QUEUE_MOVE, f"the hub could not queue it: {exc}")
        _answer(stdout, ref, new, outcome)
    _flush(stdout)
    return 0


def _answer(stdout: BinaryIO, ref: str, new: str, outcome: dict) -> None:
    """A queued ref's outcome in git's report: `ok`, naming the branch and the landed commit,
    or `ng` with the rule and the hub's words (said on stderr too)."""
    if outcome["outcome"] == "landed":
        for line in (f"ok {ref}", f"option refname {outcome['branch']}",
                     f"option old-oid {outcome['old']}", f"option new-oid {outcome['landed']}"):
            _pkt(stdout, line.encode())
        return
    words = " ".join(outcome["message"].split())[:4000]
    _pkt(stdout, f"ng {ref} gitstate:{outcome['rule']} {words}".encode())
    print(f"gitstate: the hub refused the queued move {new[:10]} [{outcome['rule']}]: "
          f"{outcome['message']}", file=sys.stderr)


def queue_and_land(git: Git, ref: str, move: str) -> dict:
    """File the move, land every request up to it in order of arrival, and say how it landed."""
    branch = "refs/heads/" + ref.removeprefix(QUEUE_PREFIX)
    queue = Queue(git)
    name = queue.file(branch, move)
    with queue.locked():
        queue.land_pending(upto=name)
    return queue.outcome(move) or _refused(move, Rule.QUEUE_MOVE, "the hub lost this move's "
                                          "outcome; push it again")


def drain(git: Git) -> list[dict]:
    """`gitstate hub drain`: land every request left in the queue (e.g. after a crash)."""
    queue = Queue(git)
    with queue.locked():
        return queue.land_pending(upto=None)


class Queue:
    """Requests in `<git dir>/gitstate/queue/`, their outcomes in `.../done/`, one lock."""

    def __init__(self, git: Git):
        self.git = git
        self.dir = Path(git.text("rev-parse", "--absolute-git-dir")) / "gitstate" / "queue"
        self.done = self.dir / "done"
        self.done.mkdir(parents=True, exist_ok=True)
        limit = git.config("gitstate.queueMaxBytes")
        self.max_bytes = int(limit) if limit and limit.isdigit() else MOVE_BYTES
        self.laws: dict = {}

    def file(self, branch: str, move: str) -> str:
        name = f"{time.time_ns():020d}-{os.getpid()}-{move[:12]}"
        _write(self.dir / name, {"branch": branch, "move": move})
        return name

    def locked(self):
        from gitstate.git.atomic import repo_lock
        return repo_lock(self.dir.parent.parent)

    def outcome(self, move: str) -> dict | None:
        try:
            return json.loads((self.done / move).read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def land_pending(self, upto: str | None) -> list[dict]:
        names = sorted(n for n in os.listdir(self.dir) if n[0].isdigit())
        outcomes = []
        for name in names:
            if upto is not None and name > upto:
                break
            request = self._request(name)
            if request is None:
                (self.dir / name).unlink(missing_ok=True)   # nothing this hub filed
                continue
            outcome = self._outcome_of(request, self.dir / name)
            _write(self.done / request["move"], outcome)
            (self.dir / name).unlink(missing_ok=True)
            outcomes.append(outcome)
        if outcomes:
            self._forget_old()
        return outcomes

    def _request(self, name: str) -> dict | None:
        """The request filed as `name`, if it is one this hub filed."""
        try:
            request = json.loads((self.dir / name).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        if not (isinstance(request, dict) and _is_oid(str(request.get("move")))
                and str(request.get("branch", "")).startswith("refs/heads/")):
            return None
        return request

    def _outcome_of(self, request: dict, path: Path) -> dict:
        """The request landed or refused, never raised: the queue goes on."""
        try:
            outcome = self._land(request, path)
        except Refused as exc:
            outcome = _refused(request["move"], exc.rule, exc.message)
        except Exception as exc:   # a move the hub cannot handle must not block the queue
            outcome = _refused(request["move"], Rule.QUEUE_MOVE,
                               f"the hub could not land it: {exc}")
        outcome["branch"] = request["branch"]
        return outcome

    def _land(self, request: dict, path: Path) -> dict:
        git, branch, move = self.git, request["branch"], request["move"]
        if not _is_oid(move) or git.text("cat-file", "-t", move, check=False) != "commit":
            raise Refused(Rule.QUEUE_MOVE, f"{move[:40]} is not a commit")
        tip = git.rev(branch)
        if tip is None:
            raise Refused(Rule.QUEUE_MOVE, f"{branch} does not exist on the hub: push it first")
        before = self._landed_before(request, tip)
        if before is not None:
            return before
        parent, lc = self._one_move(move, tip)
        signed = _is_signed(git.run("cat-file", "commit", move))
        for _attempt in range(20):
            landed = self._on_tip(move, parent, tip, branch, signed, lc)
            self._judge(landed, move, tip)
            _write(path, {**request, "landing": {"commit": landed, "old": tip}})
            if git.ok("update-ref", branch, landed, tip):
                return _landed(move, tip, landed)
            tip = git.rev(branch) or tip   # a push straight to the branch got there first
        raise Refused(Rule.QUEUE_CONFLICT, f"{branch} kept moving while the hub landed this "
                      "move; push it again")

    def _landed_before(self, request: dict, tip: str) -> dict | None:
        """How the move already stands on the branch at `tip`, if it does: landed before a
        crash, pushed again, or on the branch already."""
        git, move = self.git, request["move"]
        landing = request.get("landing")
        if landing and git.ok("merge-base", "--is-ancestor", landing["commit"], tip):
            return _landed(move, landing["old"], landing["commit"])   # landed before a crash
        before = self.outcome(move)
        if before and before["outcome"] == "landed" and git.ok(
                "merge-base", "--is-ancestor", before["landed"], tip):
            return before                                              # pushed again
        if git.ok("merge-base", "--is-ancestor", move, tip):
            return _landed(move, tip, tip)
        return None

    def _on_tip(self, move: str, parent: str, tip: str, branch: str, signed: bool,
                lc) -> str:
        """The commit that lands `move` on `tip`: itself, or (unsigned) replayed onto it."""
        if parent == tip:
            return move
        if signed:
            raise Refused(Rule.QUEUE_STALE, f"{move[:10]} is signed on {parent[:10]}, and "
                          f"{branch.removeprefix('refs/heads/')} has moved on to {tip[:10]}: "
                          "a signed move joins the line on the tip it was signed on, "
                          "judged by the signers in force there. Make it again on the tip: "
                          "gitstate signs it again where this clone holds the key, and an "
                          "approval made on an older tip is asked for again")
        return self._replay(move, tip, self._merged_tree(tip, move, lc))

    def _one_move(self, move: str, tip: str):
        """(its parent, the law at `tip`): refused unless `move` is one move the queue takes."""
        git = self.git
        parents = git.text("rev-list", "--parents", "-n", "1", move).split()[1:]
        if len(parents) != 1:
            raise Refused(Rule.QUEUE_MOVE, f"{move[:10]} is {'a merge' if parents else 'a root'}"
                          "; the queue takes one move, a commit on the branch's history: push "
                          "merges to a branch")
        parent = parents[0]
        if not git.ok("merge-base", "--is-ancestor", parent, tip):
            raise Refused(Rule.QUEUE_MOVE, f"{move[:10]} is built on {parent[:10]}, which is not "
                          "on the branch: fetch, move again on its tip")
        lc = self._law(tip)
        if lc is None:
            raise Refused(Rule.QUEUE_MOVE, "the branch carries no valid lifecycle: push the law "
                          "first")
        rx = lc.state_path_regex()
        changes = _changes(git, parent, move)
        moved = [path for path in changes if rx.match(path)]
        if not moved:
            raise Refused(Rule.QUEUE_MOVE, f"{move[:10]} changes no agent's state file; the "
                          "queue lands moves: push other work to a branch")
        self._refuse_stale(moved, parent, tip)
        self._refuse_large(move, changes)
        return parent, lc

    def _refuse_stale(self, moved: list[str], parent: str, tip: str) -> None:
        """Refused when a state file the move changes changed on the hub since its parent."""
        specs = [f"{rev}:{path}" for path in moved for rev in (parent, tip)]
        ids = self.git.run("cat-file", "--batch-check=%(objectname)",
                           input="".join(s + "\n" for s in specs).encode()).split(b"\n")
        ids = [b"" if line.endswith(b" missing") else line for line in ids]
        stale = [path for i, path in enumerate(moved) if ids[2 * i] != ids[2 * i + 1]]
        if stale:
            raise Refused(Rule.QUEUE_STALE, f"{', '.join(stale[:3])} changed on the hub since "
                          "the move was decided: decide it again from the new state")

    def _refuse_large(self, move: str, changes: dict[str, str | None]) -> None:
        """Refused when the move carries a file over `gitstate.queueMaxBytes`."""
        blobs = sorted({blob for blob in changes.values() if blob})
        sizes = self.git.run("cat-file", "--batch-check=%(objectsize)",
                             input="".join(b + "\n" for b in blobs).encode()).split()
        for size in (int(s) for s in sizes if s.isdigit()):
            if size > self.max_bytes:
                raise Refused(Rule.QUEUE_MOVE, f"{move[:10]} carries a file of {size:,} bytes; "
                              f"a queued move carries at most {self.max_bytes:,} "
                              "(git config gitstate.queueMaxBytes): push large work to a branch")

    def _law(self, tip: str):
        from gitstate.history.verify import law_at
        from gitstate.law.load import load_lifecycle
        found = law_at(self.git, tip, None, self.laws)
        if found is None:
            return None
        if found[0] not in self.laws:
            self.laws[found[0]] = load_lifecycle(found[1].decode("utf-8"))
        return self.laws[found[0]]

    def _merged_tree(self, tip: str, move: str, lc) -> str:
        code, out, err = self.git.call("merge-tree", "--write-tree", "-z", "--name-only",
                                       tip, move)
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        if code == 0 and fields and _is_oid(fields[0]):
            return fields[0]
        if code != 1:
            raise Refused(Rule.QUEUE_CONFLICT, "the hub could not merge it: "
                          + err.decode("utf-8", "replace").strip())
        conflicted = []
        for path in fields[1:]:
            if not path:
                break
            conflicted.append(path)
        rx = lc.state_path_regex()
        if any(rx.match(p) for p in conflicted):
            raise Refused(Rule.QUEUE_STALE, f"{', '.join(conflicted[:3])} changed on the hub "
                          "since the move was decided: decide it again from the new state")
        raise Refused(Rule.QUEUE_CONFLICT, f"its work conflicts with the hub's in "
                      f"{', '.join(conflicted[:5])}: merge by hand, then push again")

    def _replay(self, move: str, tip: str, tree: str) -> str:
        """M's message, author and committer, on top of `tip` with the merged `tree`."""
        raw = self.git.run("cat-file", "commit", move)
        head, _, message = raw.partition(b"\n\n")
        lines = [b"tree " + tree.encode(), b"parent " + tip.encode()]
        lines += [ln for ln in head.split(b"\n") if not ln.startswith((b"tree ", b"parent "))]
        body = b"\n".join(lines) + b"\n\n" + message
        return self.git.text("hash-object", "-t", "commit", "-w", "--stdin", input=body)

    def _judge(self, landed: str, move: str, tip: str) -> None:
        from gitstate.doors.hub import HubClock
        from gitstate.history.problems import describe_problem
        from gitstate.history.verify import verify
        problems, _ = verify(self.git, [landed, "--not", tip], None, root=tip,
                             clock=HubClock(self.git, {landed, move}), line=True)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            first = problems[0]
            raise Refused(first["rule"], describe_problem(first) + more)

    def _forget_old(self) -> None:
        cutoff = time.time() - KEEP_OUTCOMES
        with os.scandir(self.done) as entries:
            for entry in entries:
                try:
                    if entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)
                except OSError:
                    pass


def _landed(move: str, old: str, landed: str) -> dict:
    return {"outcome": "landed", "move": move, "old": old, "landed": landed}


def _refused(move: str, rule: str, message: str) -> dict:
    return {"outcome": "refused", "move": move, "rule": str(rule), "message": message}


def _changes(git: Git, a: str, b: str) -> dict[str, str | None]:
    """path -> new blob (None: deleted) for what changed from `a` to `b`."""
    from gitstate.git.runner import is_zero
    out = git.run("diff-tree", "-r", "-z", "--no-renames", a, b)
    tokens = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, str | None] = {}
    for meta, path in zip(tokens[0::2], tokens[1::2]):
        fields = meta.split()
        if len(fields) >= 5 and fields[0].startswith(":"):
            found[path] = None if is_zero(fields[3]) else fields[3]
    return found


def _is_signed(raw: bytes) -> bool:
    head = raw.partition(b"\n\n")[0]
    return any(line.startswith((b"gpgsig ", b"gpgsig-sha256 ")) for line in head.split(b"\n"))


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _write(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


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

