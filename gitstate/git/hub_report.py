"""What a hub said to a push (`--push`, git/push.py): git's porcelain report read for the one
ref pushed, a lost race told from a refusal, and the hub's own words kept."""

from __future__ import annotations

from gitstate.git.runner import Git
from gitstate.git.upstream import Upstream

# git's words for a push that lost a race: refused before sending (the tip moved since our
# fetch), or at the hub's ref update (another push won between its check and ours).
RACE_WORDS = ("fetch first", "non-fast-forward", "stale info", "failed to update ref",
              "failed to lock", "cannot lock ref", "incorrect old value", "but expected",
              "reference already exists")


def push_queued(git: Git, up: Upstream, sha: str,
                queue: str) -> tuple[str, str, str | None, str]:
    """(landed | refused | unqueued | error, the landed commit, the rule, the hub's words),
    from git's push report: the hub answers for the queued ref with the branch and the landed
    commit, or with `gitstate:<rule> <words>`."""
    code, out, err = git.call("-c", "core.abbrev=no", "push", "--porcelain", up.remote,
                              f"{sha}:{queue}")
    errs = err.decode("utf-8", "replace")
    for line in out.decode("utf-8", "replace").splitlines():
        answer = _answer(line.split("\t"), up, queue, errs)
        if answer is not None:
            return answer
    return "error", "", None, _plain(errs, ("hint:", "error: update_ref")) \
        or f"git push exited with {code}"


def _answer(fields: list[str], up: Upstream, queue: str, errs: str
            ) -> tuple[str, str, str | None, str] | None:
    """What one line of the push report says of the queued move, if anything."""
    if len(fields) < 3:
        return None
    flag, target, summary = fields[0], fields[1].rpartition(":")[2], fields[2]
    if target == up.ref and flag in (" ", "+", "*"):
        landed = summary.rpartition(".")[2].strip()
        if len(landed) in (40, 64):
            return "landed", landed, None, ""
    if target == queue and flag == "!":
        return _queue_refusal(summary, errs)
    if target == queue:   # written as a ref of its own: a hub with no queue took it
        return "unqueued", "", None, f"{up.remote} wrote {queue} instead of landing it"
    return None


def _queue_refusal(summary: str, errs: str) -> tuple[str, str, str | None, str]:
    """The hub's answer for a queued ref it did not land (its rule, else its hook's words)."""
    inner = summary.partition("(")[2].rpartition(")")[0]
    if inner.startswith("gitstate:"):
        rule, _, words = inner.removeprefix("gitstate:").partition(" ")
        return "refused", "", rule, words
    # the law refuses in its own words; anything else is a hub that failed to answer
    status = "refused" if "pre-receive hook declined" in summary else "error"
    return status, "", None, _hub_words(errs) or summary


def _hub_words(errs: str) -> str:
    """What the hub said (git's `remote:` lines), one line each."""
    return "\n".join(ln.removeprefix("remote:").strip() for ln in errs.splitlines()
                     if ln.startswith("remote:") and ln.removeprefix("remote:").strip())


def _plain(errs: str, skip: tuple[str, ...]) -> str:
    """git's error output on one line, without its hints (and lines starting with `skip`)."""
    return "; ".join(ln.strip() for ln in errs.splitlines()
                     if ln.strip() and not ln.startswith(skip))


def push_to(git: Git, up: Upstream, sha: str) -> tuple[str, str]:
    """(landed | race | refused | error, git's or the hub's words)."""
    code, out, err = git.call("push", "--porcelain", up.remote, f"{sha}:{up.ref}")
    errs = err.decode("utf-8", "replace")
    ours = [ln for ln in out.decode("utf-8", "replace").splitlines() if ln.count("\t") >= 2
            and ln.split("\t")[1].endswith(f":{up.ref}")]
    # the hub took it even if this clone could not record that (e.g. its tracking ref was
    # locked by a fetch in another worktree of this repository)
    if code == 0 or (ours and ours[0][0] in " +*="):
        return "landed", ""
    return _push_failure(ours[0] if ours and ours[0].startswith("!") else "", errs)


def _push_failure(line: str, errs: str) -> tuple[str, str]:
    """(race | refused | error, the words) of a push the hub did not take (`line`: git's)."""
    # the hub's own words (its refusals) are not searched: a rule may mention these words
    if any(w in line for w in RACE_WORDS) or (not line and "lock" in errs):
        return "race", line
    if "[remote rejected]" in line:
        return "refused", _hub_words(errs) or line
    return "error", _plain(errs, ("hint:",)) or line or "git push failed"
