"""`gitstate serve`: the pages and their JSON on Starlette, read-only, for uvicorn to run.

Starlette and uvicorn are the `web` extra (`pip install 'gitstate-agents[web]'`) and are imported
only here, when the server starts: the hooks and every other command never load them.
"""

from __future__ import annotations

import json

from gitstate.errors import GitstateError, InvalidId, UsageError
from gitstate.git.repo import Managed
from gitstate.resources import install_extra
from gitstate.web.data import Viewer
from gitstate.web.layout import Links

LOCAL_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
STATIC = {"style.css": "text/css; charset=utf-8", "live.js": "text/javascript; charset=utf-8"}
HEADERS = {
    # nothing but this server's own files; no inline script can run even if a value slipped
    # through unescaped
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
                               "base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def missing_web_extra(exc: ImportError) -> GitstateError:
    return GitstateError(f"gitstate serve needs Starlette and uvicorn ({exc.name} is not "
                         "installed)", hint=f"pip install {install_extra('web')}  (or "
                                            "`gitstate site --out DIR`, which needs nothing "
                                            "more)")


def static_text(name: str) -> str:
    """A file shipped in the package, next to this module (the wheel carries gitstate/)."""
    from pathlib import Path
    return (Path(__file__).parent / "static" / name).read_text(encoding="utf-8")


def dumps(data) -> str:
    """JSON exactly as the CLI's `--json` prints it for a program."""
    return json.dumps(data, separators=(",", ":"), default=str)


def team_json(viewer: Viewer, commit: str | None) -> dict:
    """The team chart's numbers, its moments as ISO 8601 UTC."""
    from gitstate.law.times import iso
    if commit is None:
        return {"commit": None, "start": None, "times": [], "counts": {}, "states": []}
    series = viewer.team(commit)
    return {"commit": commit, "start": iso(series["start"]) if series.get("start") else None,
            "times": [iso(t) for t in series["times"]], "counts": series["counts"],
            "states": series["states"]}


def create_app(repo: Managed, *, hosts: list[str] | None = None, follows: str | None = None):
    """The Starlette application serving `repo`. `hosts`: the Host headers answered (by
    default only this machine's names: a page elsewhere cannot read it through DNS tricks).
    `follows`: the hub's branch `repo` reads (web/follow.py), said on every live page."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    viewer = Viewer(repo)
    viewer.follows = follows
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=hosts or LOCAL_HOSTS)]
    return Starlette(routes=_routes(viewer), middleware=middleware)


def _routes(viewer: Viewer) -> list:
    """Each page and each view's JSON, at its path."""
    from starlette.routing import Route

    from gitstate.web import documents as d
    answers = _Answers(viewer)
    html, api = answers.page, answers.json
    return [
        Route("/", html(lambda rq, ln: d.roster_page(viewer, ln, params=rq.query_params))),
        Route("/feed", html(lambda rq, ln: d.feed_page(viewer, ln, page_no=_page_of(rq)))),
        Route("/board", html(lambda rq, ln: d.board_page(viewer, ln))),
        Route("/team", html(lambda rq, ln: d.team_page(viewer, ln))),
        Route("/tree", html(lambda rq, ln: d.tree_page(viewer, ln))),
        Route("/diff/{sha}/{agent}", html(lambda rq, ln: d.diff_page(
            viewer, ln, rq.path_params["sha"], _agent_of(rq)))),
        Route("/lifecycle", html(lambda rq, ln: d.lifecycle_page(viewer, ln))),
        Route("/vacancies", html(lambda rq, ln: d.vacancies_page(viewer, ln))),
        Route("/agent/{agent}", html(lambda rq, ln: d.agent_page(viewer, ln, _agent_of(rq)))),
        Route("/static/{name}", _static_file({name: static_text(name) for name in STATIC})),
        Route("/api/tip", api(lambda rq, at: {"commit": viewer.tip()})),
        Route("/api/roster", api(lambda rq, at: viewer.roster(at))),
        Route("/api/vacancies", api(lambda rq, at: viewer.vacancies(at))),
        Route("/api/log", api(lambda rq, at: viewer.log(None, at))),
        Route("/api/board", api(lambda rq, at: viewer.board(at))),
        Route("/api/log/{agent}", api(lambda rq, at: viewer.log(_agent_of(rq), at))),
        Route("/api/inbox/{agent}", api(lambda rq, at: viewer.inbox(_agent_of(rq), at))),
        Route("/api/show/{agent}", api(lambda rq, at: viewer.show(_agent_of(rq), at))),
        Route("/api/feed", api(lambda rq, at: viewer.feed(viewer.commit_at(at) or "",
                                                          page=_page_of(rq))
                               if viewer.commit_at(at) else [])),
        Route("/api/team", api(lambda rq, at: team_json(viewer, viewer.commit_at(at)))),
        Route("/api/diff/{sha}/{agent}", api(
            lambda rq, at: viewer.diff(rq.path_params["sha"], _agent_of(rq)))),
        Route("/api/lifecycle", api(
            lambda rq, at: viewer.lifecycle(viewer.resolve(at) if at else None).to_dict())),
    ]


class _Answers:
    """The endpoints' answers: a page, or a view's JSON, for `?at=`; a refusal as an error
    page, or as the JSON `--json` prints for one."""

    def __init__(self, viewer: Viewer):
        self.viewer = viewer

    def failure(self, exc: GitstateError, api: bool):
        from starlette.responses import HTMLResponse, Response
        status = 400 if isinstance(exc, (UsageError, InvalidId)) else 404
        if api:
            return Response(dumps(exc.to_dict()), status, HEADERS, "application/json")
        from gitstate.web.documents import error_page
        links = Links()          # the way back: pages of now
        return HTMLResponse(error_page(links, status, exc), status, HEADERS)

    def page(self, build):
        from starlette.responses import HTMLResponse
        viewer = self.viewer

        def endpoint(request):
            try:
                at = viewer.clean_at(request.query_params.get("at"))
                links = Links(at=at, commit_url=viewer.commit_url)
                links.follows = viewer.follows
                return HTMLResponse(build(request, links), headers=HEADERS)
            except GitstateError as exc:
                return self.failure(exc, api=False)
        return endpoint

    def json(self, build):
        from starlette.responses import Response

        def endpoint(request):
            try:
                data = build(request, self.viewer.clean_at(request.query_params.get("at")))
            except GitstateError as exc:
                return self.failure(exc, api=True)
            return Response(dumps(data), headers={**HEADERS, "Cache-Control": "no-store"},
                            media_type="application/json")
        return endpoint


def _agent_of(request) -> str:
    return request.path_params["agent"]


def _page_of(request) -> int:
    text = request.query_params.get("page") or "0"
    if not text.isdigit() or len(text) > 6:
        raise UsageError(f"page={text!r} is not a page number", hint="page=0, 1, 2, ...")
    return int(text)


def _static_file(static: dict[str, str]):
    """The endpoint of the files shipped beside the pages (`static`: name -> text)."""
    from starlette.responses import Response

    def endpoint(request):
        name = request.path_params["name"]
        if name not in static:
            return Response("not found", 404, HEADERS, "text/plain")
        return Response(static[name], headers={**HEADERS, "Cache-Control": "no-cache"},
                        media_type=STATIC[name])
    return endpoint


def listen(host: str, port: int):
    """A listening socket on host:port (port 0: one the system picks as free)."""
    import socket
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise GitstateError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                            hint="--port 0 picks a free port") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _address(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def _open_in_browser(address: str, opener, echo) -> None:
    """Open `address` with `opener` (else the `webbrowser` module's choice), in a thread."""
    import threading
    if opener is None:
        import webbrowser
        opener = webbrowser.open

    def start() -> None:   # a browser command may not return until it is closed
        if not opener(address):
            echo(f"gitstate: no browser could be opened here; open {address} yourself")
    threading.Thread(target=start, name="gitstate-open", daemon=True).start()


def serve(repo: Managed, host: str, port: int, *, echo=print, open_browser: bool = False,
          opener=None, follow: bool = True) -> None:
    """Run the server until interrupted. `port` 0 picks a free one; the address served is
    printed either way; `open_browser` opens it in the user's browser (`opener`, else the
    `webbrowser` module's choice). `follow`: in a clone whose branch tracks a hub, show the
    hub's branch, fetched every two seconds (web/follow.py)."""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise missing_web_extra(exc) from None
    local = host in ("127.0.0.1", "localhost", "::1")
    hosts = LOCAL_HOSTS if local else ["*"]
    said: list[str] = []        # what following says before the address is printed
    follower, follows = None, None
    if follow:
        from gitstate.web.follow import follow as following
        repo, follower, follows = following(repo, echo=said.append)
    app = create_app(repo, hosts=hosts, follows=follows)
    sock = listen(host, port)
    address = _address(host, sock.getsockname()[1])
    echo(f"gitstate: serving {repo.top or repo.git.cwd} at {address} "
         "(read-only; Ctrl-C stops it)")
    for line in said:
        echo(line)
    if follower is not None:
        echo(f"gitstate: live: following {follows} (fetched every "
             f"{follower.every:g} s; this clone's branches and work tree are left as they are)")
        follower.echo = echo
        follower.start()
    if not local:
        echo(f"gitstate: warning: bound to {host}, so other machines can read this roster")
    if open_browser:   # the socket already listens: the browser's request waits for us
        _open_in_browser(address, opener, echo)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        if follower is not None:
            follower.stop()
