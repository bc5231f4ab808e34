"""HTML from plain string templates that escape every value unless it is already markup.

`render("<td>{name}</td>", name=text)` escapes `text`; only a `Safe` value (what `render`
itself returns) is put in as it is, so an agent's summary or a commit text that holds HTML is
shown as text, never run. No template engine: the static site needs no dependency at all.
"""

from __future__ import annotations

import datetime
import functools
import html
import re
import string
from urllib.parse import quote

from gitstate.law.times import when as _when

# a page of 1,000 agents shows the same moments many times over: each is formatted once
when = functools.lru_cache(maxsize=1 << 16)(_when)

_SPECIAL = re.compile(r"[&<>\"']")


def _escape(text: str, quote: bool = True) -> str:
    """`html.escape`, skipped for the common text that holds none of & < > " ' (a search in C
    instead of five replaces: a static site renders ~600,000 values)."""
    return html.escape(text, quote) if _SPECIAL.search(text) else text



class Safe(str):
    """Markup that is already escaped."""


@functools.lru_cache(maxsize=512)
def _parsed(template: str) -> tuple[tuple[str, str | None, str], ...]:
    """(literal text, field name, format spec) of a template, parsed once (a roster of 1,000
    agents renders the same row template 1,000 times)."""
    return tuple((lit, name, spec or "") for lit, name, spec, _conv in
                 string.Formatter().parse(template))


def render(template: str, /, **values) -> Safe:
    """`template` with each `{name}` replaced by its value, escaped (unless Safe)."""
    out = []
    for literal, name, spec in _parsed(template):
        out.append(literal)
        if name is not None:
            value = values[name]
            if isinstance(value, Safe):
                out.append(value)
            elif type(value) is int:       # digits need no escaping
                out.append(format(value, spec) if spec else str(value))
            else:
                out.append(_escape(format(value, spec) if spec else str(value)))
    return Safe("".join(out))


def esc(value) -> Safe:
    return value if isinstance(value, Safe) else Safe(html.escape(str(value), quote=True))


def join(parts, sep: str = "") -> Safe:
    return Safe(esc(sep).join(esc(p) for p in parts))


def url(text: str) -> str:
    """A path segment or query value, percent-encoded."""
    return quote(text, safe="")


def time_tag(value) -> Safe:
    """A <time> for a time in any shape the views give (see clock.epoch)."""
    from gitstate.web.clock import epoch
    ts = epoch(value)
    return Safe("—") if ts is None else _time_tag(ts)


@functools.lru_cache(maxsize=1 << 16)
def _time_tag(ts: int) -> Safe:
    iso = datetime.datetime.fromtimestamp(ts, datetime.UTC).isoformat()
    return render('<time datetime="{iso}">{text} UTC</time>', iso=iso, text=when(ts))
