"""The frame every page shares (header, navigation, time travel, footer) and the links between
pages, which differ between the live server and the static site."""

from __future__ import annotations

from gitstate.web.html import Safe, join, render, url

NAV = (("roster", "Roster"), ("feed", "Activity"), ("board", "Board"), ("team", "Team"),
       ("tree", "Tree"), ("lifecycle", "Lifecycle"), ("vacancies", "Vacant roles"))


class Links:
    """Where each page is. Served: /agent/ID?at=...; static: agents/ID.html, relative to the
    page being written (`depth` folders below the site's top)."""

    def __init__(self, *, static: bool = False, at: str | None = None, depth: int = 0,
                 commit_url=None, built: int | None = None):
        self.static = static
        self.at = at
        self.up = "../" * depth
        self.commit_url = commit_url    # sha -> the commit's web page, or None
        self.tree = False               # does this lifecycle have parents and children
        self.built = built              # the static site: when it was built (seconds)
        self.follows: str | None = None  # served from a clone: the hub's branch it follows

    def commit(self, sha: str | None) -> Safe:
        """A commit's short id, a link to its page where the repository has a web home; a
        dash when there is none."""
        if not sha:
            return Safe("—")
        url = self.commit_url(sha) if self.commit_url else None
        if url:
            return render('<a class="commit" href="{u}" rel="noopener noreferrer"><code>{s}'
                          '</code></a>', u=url, s=sha[:10])
        return render("<code>{s}</code>", s=sha[:10])

    def diff(self, sha: str, agent: str) -> str | None:
        """The page of what a move changed in the agent's state file (served only)."""
        if self.static:
            return None
        return f"/diff/{url(sha)}/{url(agent)}"

    def _q(self) -> str:
        return f"?at={url(self.at)}" if self.at and not self.static else ""

    def page(self, name: str) -> str:
        if self.static:
            return self.up + ("index.html" if name == "roster" else f"{name}.html")
        return ("/" if name == "roster" else f"/{name}") + self._q()

    def with_query(self, name: str, **params) -> str:
        """A served page with query values (those None left out), keeping `at`."""
        from urllib.parse import urlencode
        values = {"at": self.at, **params}
        q = urlencode({k: v for k, v in values.items() if v is not None})
        return ("/" if name == "roster" else f"/{name}") + (f"?{q}" if q else "")

    def agent(self, agent: str) -> str:
        if self.static:
            return f"{self.up}agents/{url(agent)}.html"
        return f"/agent/{url(agent)}{self._q()}"

    def static_file(self, name: str) -> str:
        return f"{self.up}{name}" if self.static else f"/static/{name}"

    def at_form(self) -> Safe:
        """Time travel: a plain GET form (the static site is one moment; it has none)."""
        if self.static:
            return Safe("")
        now = render('<a href="?">back to now</a>') if self.at else Safe("")
        return render(
            '<form class="at" method="get" role="search" aria-label="Time travel">'
            '<label for="at">As it was at</label>'
            '<input id="at" name="at" value="{at}" placeholder="HEAD~10 or a date" '
            'size="18" autocomplete="off"><button type="submit">Go</button> {now}</form>',
            at=self.at or "", now=now)


def page(*, title: str, current: str, links: Links, body: Safe, commit: str | None,
         lifecycle: str | None, live: bool, when: str | None = None,
         built: str | None = None) -> Safe:
    """A whole HTML document. `live`: the served page of now, which polls for new commits and
    replaces its data region in place (#live), keeping the reader's place."""
    nav = _nav(links, current)
    script = render('<script src="{src}" defer></script>', src=links.static_file("live.js")) \
        if live else Safe("")
    moment, status = _moment(links, commit, when, built), _status(links, live)
    foot = _foot(links, commit, lifecycle, built)
    return render(
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<title>{title} · gitstate</title><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="{css}"></head>'
        '<body data-tip="{tip}" data-live="{live}">'
        '<a class="skip" href="#main">Skip to the content</a>'
        '<header><p class="brand"><a href="{home}">gitstate</a></p>'
        '<nav aria-label="Pages"><ul>{nav}</ul></nav>{form}</header>'
        '<main id="main" tabindex="-1">{moment}{status}<div id="live">{body}</div></main>'
        '<footer><p id="foot">{foot}</p></footer>{script}</body></html>\n',
        title=title, css=links.static_file("style.css"), tip=commit or "",
        live="1" if live else "0", home=links.page("roster"), nav=nav, form=links.at_form(),
        moment=moment, status=status, body=body, foot=foot, script=script)


def _nav(links: Links, current: str) -> Safe:
    """The pages' menu, the page shown marked current (the tree only where there is one)."""
    return join(render('<li><a href="{href}"{cur}>{label}</a></li>', href=links.page(key),
                       label=label, cur=Safe(' aria-current="page"') if key == current
                       else Safe(""))
                for key, label in NAV if key != "tree" or links.tree)


def _moment(links: Links, commit: str | None, when: str | None, built: str | None) -> Safe:
    """What moment the page shows, when not now: the commit looked back at, the site's
    build."""
    if links.at and commit:
        moment = render('<p class="moment" role="note">As it was at <code>{at}</code>: commit '
                        '<code>{sha}</code>{when}.{off}</p>', at=links.at, sha=commit[:10],
                        when=f" ({when})" if when else "",
                        off="" if links.static else " Live updates are off while you look back.")
    else:
        moment = Safe("")
    if built:
        moment = join([moment, render('<p class="built-note" role="note">Built {b} UTC: '
                                      '"in state for" and every other age is as of then.</p>',
                                      b=built)])
    return moment


def _status(links: Links, live: bool) -> Safe:
    """The live page's note that it follows new commits (and from where)."""
    if not live:
        return Safe("")
    if links.follows:
        return render('<p id="live-status" class="live-status" role="status" '
                      'aria-live="polite">Live: following {f}; this page shows new commits '
                      'as they reach it.</p>', f=links.follows)
    return Safe('<p id="live-status" class="live-status" role="status" '
                'aria-live="polite">Live: this page follows new commits.</p>')


def _foot(links: Links, commit: str | None, lifecycle: str | None, built: str | None) -> Safe:
    foot = render("commit {sha} · lifecycle {lc}", sha=links.commit(commit),
                  lc=lifecycle or "?") if commit else Safe("")
    if built:
        foot = render('{f} · <span class="built">built {b} UTC; times "in state for" are as of '
                      'then</span>', f=foot, b=built)
    return foot
