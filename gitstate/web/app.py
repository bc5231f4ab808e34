"""`gitstate serve`: the pages and their JSON on Starlette, read-only, for uvicorn to run.

Starlette and uvicorn are the `web` extra (`pip install 'gitstate-agents[web]'`) and are imported
only here, when the server starts: the hooks and every other command never load them.
"""

from __future__ import annotations

import json

from gitstate.errors import GitstateError, InvalidId, UsageError
from gitstate.git.repo import Managed
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
                         "installed)", hint="pip install 'gitstate-agents[web]'  (or "
                                            "`gitstate site --out DIR`, which needs nothing "
                                            "more)")


def static_text(name: str) -> str:
    """A file shipped in the package, next to this module (the wheel carries gitstate/)."""
    from pathlib import Path
    return (Path(__file__).parent / "static" / name).read_text(encoding="utf-8")


def dumps(data) -> str:
    """JSON exactly as the CLI's `--json` prints it for a program."""
    return json.dumps(data, separators=(",", ":"), default=str)


def create_app(repo: Managed, *, hosts: list[str] | None = None):
    """The Starlette application serving `repo`. `hosts`: the Host headers answered (by
    default only this machine's names: a page elsewhere cannot read it through DNS tricks)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    viewer = Viewer(repo)
    static = {name: static_text(name) for name in STATIC}

    def failure(request, exc: GitstateError, api: bool):
        status = 400 if isinstance(exc, (UsageError, InvalidId)) else 404
        if api:
            return Response(dumps(exc.to_dict()), status, HEADERS, "application/json")
        from gitstate.web.documents import error_page
        links = Links()          # the way back: pages of now
        return HTMLResponse(error_page(links, status, exc), status, HEADERS)

    def html_route(build):
        def endpoint(request):
            try:
                at = viewer.clean_at(request.query_params.get("at"))
                return HTMLResponse(build(request, Links(at=at)), headers=HEADERS)
            except GitstateError as exc:
                return failure(request, exc, api=False)
        return endpoint

    def api_route(build):
        def endpoint(request):
            try:
                at = viewer.clean_at(request.query_params.get("at"))
                data = build(request, at)
            except GitstateError as exc:
                return failure(request, exc, api=True)
            return Response(dumps(data), headers={**HEADERS, "Cache-Control": "no-store"},
                            media_type="application/json")
        return endpoint

    from gitstate.web import documents as d

    def agent_of(request) -> str:
        return request.path_params["agent"]

    def static_file(request):
        name = request.path_params["name"]
        if name not in static:
            return Response("not found", 404, HEADERS, "text/plain")
        return Response(static[name], headers={**HEADERS, "Cache-Control": "no-cache"},
                        media_type=STATIC[name])

    routes = [
        Route("/", html_route(lambda rq, ln: d.roster_page(viewer, ln))),
        Route("/lifecycle", html_route(lambda rq, ln: d.lifecycle_page(viewer, ln))),
        Route("/vacancies", html_route(lambda rq, ln: d.vacancies_page(viewer, ln))),
        Route("/agent/{agent}", html_route(lambda rq, ln: d.agent_page(viewer, ln,
                                                                       agent_of(rq)))),
        Route("/static/{name}", static_file),
        Route("/api/tip", api_route(lambda rq, at: {"commit": viewer.tip()})),
        Route("/api/roster", api_route(lambda rq, at: viewer.roster(at))),
        Route("/api/vacancies", api_route(lambda rq, at: viewer.vacancies(at))),
        Route("/api/log", api_route(lambda rq, at: viewer.log(None, at))),
        Route("/api/log/{agent}", api_route(lambda rq, at: viewer.log(agent_of(rq), at))),
        Route("/api/inbox/{agent}", api_route(lambda rq, at: viewer.inbox(agent_of(rq), at))),
        Route("/api/show/{agent}", api_route(lambda rq, at: viewer.show(agent_of(rq), at))),
        Route("/api/lifecycle", api_route(
            lambda rq, at: viewer.lifecycle(viewer.resolve(at) if at else None).to_dict())),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=hosts or LOCAL_HOSTS)]
    return Starlette(routes=routes, middleware=middleware)


def serve(repo: Managed, host: str, port: int, *, echo=print) -> None:
    """Run the server until interrupted."""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise missing_web_extra(exc) from None
    local = host in ("127.0.0.1", "localhost", "::1")
    hosts = LOCAL_HOSTS if local else ["*"]
    app = create_app(repo, hosts=hosts)
    shown = f"[{host}]" if ":" in host else host
    echo(f"gitstate: serving {repo.top or repo.git.cwd} at http://{shown}:{port}/ "
         "(read-only; Ctrl-C stops it)")
    if not local:
        echo(f"gitstate: warning: bound to {host}, so other machines can read this roster")
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
