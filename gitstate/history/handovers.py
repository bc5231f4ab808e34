"""Every hand-over of a role (`Role-transfer: ROLE -> TO`, the one commit that touches two
agents), kept under `.git/gitstate` keyed by the tip it was read to, so that the viewer puts
hand-overs on timelines without a walk of the whole history each time; a later read takes
only the commits since, as `git/cache.py` says.
"""

from __future__ import annotations

from gitstate import __version__
from gitstate.git.cache import read_on
from gitstate.git.runner import Git
from gitstate.law.grammar import parse_message
from gitstate.law.rules import role_transfer

NAME = "handovers.json"
FORMAT = 2   # 2: read along the first-parent line


def handovers(git: Git, lc, head: str, cache_dir: str | None) -> list[dict]:
    """{commit, time, role, from, to} of every hand-over in `head`'s history, oldest first."""
    kept = read_on(git, cache_dir, NAME, [FORMAT, __version__, list(lc.accept)], head,
                   valid=lambda saved: isinstance(saved.get("items"), list),
                   anew=lambda tip: {"items": _read(git, lc, [tip])},
                   onward=lambda saved, revs: {"items": saved["items"] + _read(git, lc, [revs])})
    return kept["items"] if kept is not None else []


def handovers_since(git: Git, lc, old: str, head: str) -> list[dict]:
    """The hand-overs of `old..head`, oldest first, for a caller holding those up to `old`."""
    return _read(git, lc, [f"{old}..{head}"])


def _read(git: Git, lc, revs: list[str]) -> list[dict]:
    accept = lc.accept_patterns()
    new = []
    for sha, ct, body in git.log_records(["%H", "%ct", "%B"], "--first-parent", "-F", "-i",
                                         "--grep=Role-transfer:", *revs, "--"):
        msg = parse_message(body, accept)
        values = msg.trailer("role-transfer")
        found = role_transfer(values[0]) if len(values) == 1 else None
        if found and msg.prefix:
            new.append({"commit": sha, "time": int(ct) if ct.isdigit() else 0,
                        "role": found[0], "from": msg.prefix, "to": found[1].lower()})
    new.reverse()
    return new
