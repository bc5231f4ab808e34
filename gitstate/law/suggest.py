""""Did you mean": the closest of a few known names to a mistyped one."""

from __future__ import annotations


def closest(word: str, known) -> str | None:
    """The known name most like `word` (case aside), if any is close enough to be the one
    meant; None otherwise. Linear in the number of names, each compared at most once."""
    import difflib
    names = [k for k in known if isinstance(k, str)]
    lowered = {n.lower(): n for n in names}
    found = difflib.get_close_matches(str(word).lower()[:200], list(lowered), n=1, cutoff=0.75)
    return lowered[found[0]] if found else None


def did_you_mean(word: str, known) -> str:
    """" (did you mean 'distill'?)", or "" when nothing is close."""
    best = closest(word, known)
    return f" (did you mean '{best}'?)" if best and best != word else ""
