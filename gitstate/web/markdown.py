"""Freeze-states and other Markdown an agent writes, rendered for a page.

markdown-it-py (a CommonMark parser, pure Python, one small dependency of its own) is a core
dependency, so that `gitstate site` renders Markdown with nothing extra installed. Raw HTML is
off: a `<script>` in the text is shown as text; links whose scheme is not http(s), mailto or a
relative path are not made links (markdown-it's own link check refuses javascript:, vbscript:,
file: and data: other than images). Should the package be missing all the same, the text is
shown escaped in a <pre>, as it was written.
"""

from __future__ import annotations

import functools

from gitstate.web.html import Safe, render


@functools.lru_cache(maxsize=1)
def _parser():
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        return None
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")          # nothing fetched from elsewhere when a page is read
    return md


def to_html(text: str) -> Safe:
    """`text` (Markdown) as HTML with raw HTML off; escaped text if no renderer is there."""
    md = _parser()
    if md is None:
        return render('<pre class="section">{t}</pre>', t=text)
    return render('<div class="markdown">{h}</div>', h=Safe(md.render(text)))
