"""The hub's lander: every waiting request of the landing queue landed in one pass.

One process, holding the landing lock, lands the whole queue (doors/queue.py files the
requests and answers the pushers). Each request is judged in order of arrival on the tip the
ones before it made, and the branch moves once for the batch: one `update-ref`, a
compare-and-swap from the tip the pass began on. A refused request is left out and the ones
after it build on the last good tip, so one refusal never holds the others.

What a pass starts, for any number of requests: one `git cat-file --batch-command` that reads
every object and size it needs, one `git diff-tree --stdin` for what each move changes, one
`verify` of the chain (the same judge as every door: `history/verify.py` and
`gitstate/law/`), one `git unpack-objects` that writes the trees and commits it made, and
the `update-ref`. A move made on an older tip is replayed on the new one: where it only
changes files' contents and the hub left those files as the move found them, by editing the
tip's tree in-process (what git's three-way merge makes of it, read from git's objects and
named by git's own hash); else through `git merge-tree --write-tree`, one process per such
merge (git 2.39 merges one pair at a time). A request the judge refuses costs one more
`verify`, of the chain after it.

Nothing lands twice, whatever is killed when: before the branch moves, each request's file
says which commit it lands (doors/queue.py reads it again after a crash), and a move already
on the branch is answered as landed, never replayed again.
"""

from __future__ import annotations

from gitstate.doors import pipes
from gitstate.doors.pipes import Reach, Store, Unsure, edited_tree, is_oid, parents_of
from gitstate.git.runner import Git
from gitstate.law.lifecycle import LIFECYCLE_PATH
from gitstate.law.limits import LIFECYCLE_BYTES
from gitstate.law.rule_ids import Rule

ROUNDS = 4        # times a pass takes in requests that arrived while it worked
CAS_TRIES = 20    # a push straight to the branch moved it during the pass: planned again
FILE_MODES = ("100644", "100755", "120000")   # what `edited_tree` edits in place


class Refused(Exception):
    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule, self.message = rule, message


class Step:
    """One request in a pass: its outcome, and the commit it lands (`new`) on `old`."""

    def __init__(self, name: str, request: dict):
        self.name, self.request, self.move = name, request, request["move"]
        self.outcome: dict | None = None
        self.new: str | None = None
        self.old: str | None = None


class Lander:
    """A pass over one branch's requests: planned on its tip, judged, landed at once."""

    def __init__(self, git: Git, max_bytes: int, outcome_of, laws: dict):
        self.git, self.max_bytes, self.outcome_of, self.laws = git, max_bytes, outcome_of, laws
        self.store = Store(git)
        self.objects = self.store.objects
        # move -> path -> (its mode before, after, its blob after: None if deleted)
        self.changed: dict[str, dict[str, tuple[str, str, str | None]]] = {}
        # a commit the pass made or took -> (its parent, the blobs it changed): what it holds
        # is known without asking git ("" for a file it deleted)
        self.derived: dict[str, tuple[str, dict[str, str]]] = {}
        self.blobs: dict[tuple[str, str], str] = {}

    def close(self) -> None:
        self.store.close()

    def land(self, branch: str, requests: list[tuple[str, dict]], arrived, record) -> list[Step]:
        """Every request's step, in order: `arrived(seen names)` gives requests filed since,
        taken in up to `ROUNDS` times; `record(steps)` writes the planned landings before the
        branch moves."""
        for _try in range(CAS_TRIES):
            tip = self.git.rev(branch)
            if tip is None:
                return self._refuse_all(requests, Rule.QUEUE_MOVE, f"{branch} does not exist "
                                        "on the hub: push it first")
            self.store.sha256 = len(tip) == 64
            reach = Reach(self.git, self.objects, tip, [r["move"] for _n, r in requests])
            requests, steps = self._take_arrived(requests, tip, reach, arrived)
            if self._moved(branch, steps, tip, record):
                return steps
        return self._refuse_all(requests, Rule.QUEUE_CONFLICT, f"{branch} kept moving while "
                                "the hub landed these moves; push again")

    def _take_arrived(self, requests: list[tuple[str, dict]], tip: str, reach: Reach,
                      arrived) -> tuple[list[tuple[str, dict]], list[Step]]:
        """The pass planned on `tip`, with the requests filed while it worked."""
        steps = self._plan(requests, tip, reach, [])
        for _round in range(ROUNDS):
            more = arrived({s.name for s in steps})
            if not more:
                break
            requests = requests + more
            if reach.moves is not None:
                reach.moves += [r["move"] for _n, r in more]
            steps = self._plan(more, tip, reach, steps)
        return requests, steps

    def _moved(self, branch: str, steps: list[Step], tip: str, record) -> bool:
        """Whether the pass is over: nothing to land, or the branch moved from `tip` to the
        last landing (each landing recorded first)."""
        top = _top(steps, None)
        if top is None:
            return True
        self.store.flush()
        record(steps)
        if not self.git.ok("update-ref", "-m", f"gitstate: {sum(1 for s in steps if s.new)} "
                           "queued moves landed", branch, top, tip):
            return False
        for s in steps:
            if s.new and s.old:
                s.outcome = _landed(s.move, s.old, s.new)
        return True

    def _refuse_all(self, requests, rule: str, message: str) -> list[Step]:
        steps = [Step(name, request) for name, request in requests]
        for s in steps:
            s.outcome = _refused(s.move, rule, message)
        return steps

    def _plan(self, requests: list[tuple[str, dict]], base: str, reach: Reach,
              done: list[Step]) -> list[Step]:
        """`done` and then each request built on the tip the ones before made, the chain
        judged; a request the judge refuses is left out and the rest built again."""
        self._read_changes([r["move"] for _n, r in requests])
        tip = _top(done, base)
        steps, todo = list(done), [Step(n, r) for n, r in requests]
        while todo:
            start = tip
            tip, built = self._build_all(todo, tip, reach, steps)
            bad = self._judge([s for s in built if s.new], start)
            if bad is None:
                return steps + built
            k = built.index(bad)
            steps += built[:k + 1]
            tip = bad.old or start
            todo = [Step(s.name, s.request) for s in built[k + 1:]]
        return steps

    def _build_all(self, todo: list[Step], tip: str, reach: Reach, steps: list[Step]
                   ) -> tuple[str, list[Step]]:
        built: list[Step] = []
        for step in todo:
            tip = self._build(step, tip, reach, steps + built)
            built.append(step)
        self.store.flush()
        return tip, built

    def _build(self, step: Step, tip: str, reach: Reach, before: list[Step]) -> str:
        """Decide `step` on `tip`; the tip after it."""
        chain = {s.new for s in before if s.new}
        try:
            done = self._landed_before(step, tip, reach, chain, before)
            if done is not None:
                step.outcome = done
                return tip
            step.new, step.old = self._on_tip(step.move, tip, reach, chain), tip
            return step.new
        except Refused as exc:
            step.outcome = _refused(step.move, exc.rule, exc.message)
        except Exception as exc:   # a move the hub cannot handle must not block the queue
            step.outcome = _refused(step.move, Rule.QUEUE_MOVE,
                                    f"the hub could not land it: {exc}")
        return tip

    def _landed_before(self, step: Step, tip: str, reach: Reach, chain: set[str],
                       before: list[Step]) -> dict | None:
        """How the move already stands on the branch, if it does: landed before a crash,
        pushed again (now or earlier), or on the branch already."""
        move = step.move
        landing = step.request.get("landing")
        if landing and _holds(reach, landing.get("commit"), chain):
            return _landed(move, landing["old"], landing["commit"])   # landed before a crash
        for s in before:
            if s.move == move and s.new:                               # twice in this pass
                return _landed(move, s.old or tip, s.new)
        earlier = self._landed_earlier(move, reach, chain)
        if earlier is not None:
            return earlier
        if reach.holds(move, chain):
            return _landed(move, tip, tip)
        return None

    def _landed_earlier(self, move: str, reach: Reach, chain: set[str]) -> dict | None:
        earlier = self.outcome_of(move)
        if earlier and earlier.get("outcome") == "landed" \
                and _holds(reach, earlier["landed"], chain):
            return {k: earlier[k] for k in ("outcome", "move", "old", "landed")}
        return None

    def _on_tip(self, move: str, tip: str, reach: Reach, chain: set[str]) -> str:
        """The commit that lands `move` on `tip`: itself, or (unsigned) replayed onto it."""
        raw, parent = self._one_move(move, reach, chain)
        lc = self._law(tip)
        if lc is None:
            raise Refused(Rule.QUEUE_MOVE, "the branch carries no valid lifecycle: push the law "
                          "first")
        changes = self.changed.get(move, {})
        self._refuse_stale(_state_files(move, changes, lc), parent, tip)
        self._refuse_large(move, changes, len(raw))
        if parent == tip:
            self.derived[move] = (parent, {p: new or "" for p, (_o, _m, new) in changes.items()})
            return move
        _refuse_signed(move, raw, parent, tip)
        tree, edited = self._tree_on(tip, parent, move, lc)
        landed = self.store.put("commit", pipes.replayed(raw, tip, tree))
        if edited:
            self.derived[landed] = (tip, edited)
        return landed

    def _one_move(self, move: str, reach: Reach, chain: set[str]) -> tuple[bytes, str]:
        """`move`'s raw commit and its one parent, on the branch; else refused."""
        got = self.store.read(move)
        if got is None or got[1] != "commit":
            raise Refused(Rule.QUEUE_MOVE, f"{move[:40]} is not a commit")
        parents = parents_of(got[2])
        if len(parents) != 1:
            raise Refused(Rule.QUEUE_MOVE, f"{move[:10]} is {'a merge' if parents else 'a root'}"
                          "; the queue takes one move, a commit on the branch's history: push "
                          "merges to a branch")
        if not reach.holds(parents[0], chain):
            raise Refused(Rule.QUEUE_MOVE, f"{move[:10]} is built on {parents[0][:10]}, which is "
                          "not on the branch: fetch, move again on its tip")
        return got[2], parents[0]

    def _tree_on(self, tip: str, parent: str, move: str, lc) -> tuple[str, dict[str, str]]:
        """The tree of `move` replayed on `tip`: where the move only changes files' contents
        and the hub left each of them as the move found it, `tip`'s tree with those files
        (what git's three-way merge makes of it), without a process; else git's merge."""
        changes = self.changed.get(move, {})
        # files and symlinks only, named on one line: a submodule's commit is no object here
        # and `cat-file` cannot be asked of a name with a newline (`_blob` reads either as
        # absent, on both sides); a file whose mode the hub changed is git's merge to decide
        blobs = _editable(changes)
        tip_commit = self.store.read(tip)
        if blobs and len(blobs) == len(changes) and tip_commit \
                and self._unchanged(blobs, parent, tip):
            try:
                return edited_tree(self.store, pipes.tree_of(tip_commit[2]), blobs), \
                    {p: new for p, (_mode, new) in blobs.items()}
            except Unsure:
                pass
        self.store.flush()   # git's merge reads the tip
        return self._merged_tree(tip, move, lc), {}

    def _unchanged(self, paths, parent: str, tip: str) -> bool:
        return all(self._blob(parent, p) == self._blob(tip, p) for p in paths)

    def _blob(self, rev: str, path: str) -> str:
        """The blob at `path` in `rev` ("" if none): known for a commit of the pass, else
        asked once."""
        while rev in self.derived:
            parent, blobs = self.derived[rev]
            if path in blobs:
                return blobs[path]
            rev = parent
        if (rev, path) not in self.blobs:
            if rev in self.store.made:
                self.store.flush()   # (a merge's result: git reads it)
            got = self.objects.info(f"{rev}:{path}")
            self.blobs[rev, path] = got[0] if got else ""
        return self.blobs[rev, path]

    def _read_changes(self, moves: list[str]) -> None:
        """What each move changed from its parent (`self.changed`), for every move of the
        pass in one `git diff-tree --stdin`."""
        todo = sorted({m for m in moves if is_oid(m) and m not in self.changed})
        if not todo:
            return
        code, out, _err = self.git.call("diff-tree", "--stdin", "-r", "-z", "--no-renames",
                                        input="".join(m + "\n" for m in todo).encode())
        if code == 0:
            pipes.read_diff_tree(out.decode("utf-8", "surrogateescape").split("\0"), self.changed)
        for m in todo:
            self.changed.setdefault(m, {})

    def _refuse_stale(self, moved: list[str], parent: str, tip: str) -> None:
        """Refused when a state file the move changes changed on the hub since its parent."""
        stale = [path for path in moved if self._blob(parent, path) != self._blob(tip, path)]
        if stale:
            raise Refused(Rule.QUEUE_STALE, f"{', '.join(stale[:3])} changed on the hub since "
                          "the move was decided: decide it again from the new state")

    def _refuse_large(self, move: str, changes: dict[str, tuple[str, str, str | None]],
                      own: int) -> None:
        """Refused when the commit itself (`own` bytes: its message) and the files it writes
        come to more than `gitstate.queueMaxBytes` (each one counted once)."""
        total = own
        for blob in sorted({new for _o, m, new in changes.values()
                            if new and m != "160000"}):   # (a submodule's commit: no blob)
            got = self.objects.info(blob)
            total += got[2] if got else 0
        if total > self.max_bytes:
            raise Refused(Rule.QUEUE_MOVE, f"{move[:10]} carries {total:,} bytes of files and "
                          f"message; a queued move carries at most {self.max_bytes:,} (git config "
                          "gitstate.queueMaxBytes): push large work to a branch")

    def _law(self, tip: str):
        """The valid lifecycle at `tip`, read once per blob."""
        from gitstate.errors import GitstateError
        from gitstate.git.cache import load_lifecycle_cached
        blob = self._blob(tip, LIFECYCLE_PATH)
        if blob not in self.laws:
            got = self.objects.info(blob) if blob else None
            data = self.objects.read(blob) if got and got[1] == "blob" \
                and got[2] <= LIFECYCLE_BYTES else None
            try:
                self.laws[blob] = None if data is None else load_lifecycle_cached(
                    data[2], blob, LIFECYCLE_PATH, None)
            except GitstateError:
                self.laws[blob] = None
        return self.laws[blob]

    def _merged_tree(self, tip: str, move: str, lc) -> str:
        code, out, err = self.git.call("merge-tree", "--write-tree", "-z", "--name-only",
                                       tip, move)
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        if code == 0 and fields and is_oid(fields[0]):
            return fields[0]
        if code != 1:
            raise Refused(Rule.QUEUE_CONFLICT, "the hub could not merge it: "
                          + err.decode("utf-8", "replace").strip())
        conflicted = _conflicted(fields)
        rx = lc.state_path_regex()
        if any(rx.match(p) for p in conflicted):
            raise Refused(Rule.QUEUE_STALE, f"{', '.join(conflicted[:3])} changed on the hub "
                          "since the move was decided: decide it again from the new state")
        raise Refused(Rule.QUEUE_CONFLICT, f"its work conflicts with the hub's in "
                      f"{', '.join(conflicted[:5])}: merge by hand, then push again")

    def _judge(self, chain: list[Step], base: str) -> Step | None:
        """The chain judged by `verify` on `base`, as one line: the first step it refuses
        (refused here with the judge's words), or None."""
        from gitstate.doors.hub import HubClock
        from gitstate.history.problems import describe_problem
        from gitstate.history.verify import verify
        if not chain:
            return None
        pushed = {s.new for s in chain if s.new} | {s.move for s in chain}
        top = chain[-1].new
        assert top is not None
        try:
            problems, _ = verify(self.git, [top, "--not", base], None, root=base,
                                 clock=HubClock(self.git, pushed), line=True)
        except Exception as exc:   # the first is refused and the rest judged again: the
            bad = chain[0]         # queue goes on
            bad.outcome = _refused(bad.move, Rule.QUEUE_MOVE, f"the hub could not judge it: "
                                   f"{exc}")
            bad.new = None
            return bad
        return _blame(chain, problems, describe_problem) if problems else None


def _top(steps: list[Step], default):
    """The last commit the steps land (`default` if none lands)."""
    return next((s.new for s in reversed(steps) if s.new), default)


def _holds(reach: Reach, sha, chain: set[str]) -> bool:
    """Is `sha` (as recorded: any JSON) a commit on the branch or on the pass's chain?"""
    return is_oid(str(sha)) and reach.holds(sha, chain)


def _conflicted(fields: list[str]) -> list[str]:
    """The paths `merge-tree --name-only -z` names as conflicted: up to the empty field."""
    conflicted = []
    for path in fields[1:]:
        if not path:
            break
        conflicted.append(path)
    return conflicted


def _editable(changes: dict) -> dict[str, tuple[str, str]]:
    return {p: (old_mode, new) for p, (old_mode, new_mode, new) in changes.items()
            if new and old_mode == new_mode and old_mode in FILE_MODES and "\n" not in p}


def _state_files(move: str, changes: dict, lc) -> list[str]:
    """The agents' state files the move changes; refused if none."""
    rx = lc.state_path_regex()
    moved = [path for path in changes if rx.match(path)]
    if not moved:
        raise Refused(Rule.QUEUE_MOVE, f"{move[:10]} changes no agent's state file; the "
                      "queue lands moves: push other work to a branch")
    return moved


def _refuse_signed(move: str, raw: bytes, parent: str, tip: str) -> None:
    if pipes.is_signed(raw):
        raise Refused(Rule.QUEUE_STALE, f"{move[:10]} is signed on {parent[:10]}, and the "
                      f"branch has moved on to {tip[:10]}: a signed move joins the line on "
                      "the tip it was signed on, judged by the signers in force there. Make "
                      "it again on the tip: gitstate signs it again where this clone holds "
                      "the key, and an approval made on an older tip is asked for again")


def _blame(chain: list[Step], problems: list[dict], describe_problem) -> Step:
    """The first step of `chain` the judge refused, refused here with its words."""
    by_commit = {s.new: s for s in chain}
    bad = next((by_commit[p["commit"]] for p in problems if p.get("commit") in by_commit),
               chain[0])
    found = [p for p in problems if p.get("commit") == bad.new] or problems
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    bad.outcome = _refused(bad.move, found[0]["rule"], describe_problem(found[0]) + more)
    bad.new = None
    return bad


def _landed(move: str, old: str, landed: str) -> dict:
    return {"outcome": "landed", "move": move, "old": old, "landed": landed}


def _refused(move: str, rule: str, message: str) -> dict:
    return {"outcome": "refused", "move": move, "rule": str(rule), "message": message}
