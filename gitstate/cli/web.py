"""The viewer's commands: `serve` (a live local web app) and `site` (the same pages as static
files). The web stack is imported only when `serve` runs."""

from __future__ import annotations

import click

from gitstate.cli.app import at_option, cli, emit, example, json_option, repo
from gitstate.errors import GitstateError, UsageError


@example('gitstate serve', 'gitstate serve --port 8000', 'gitstate serve --no-follow')
@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (this machine only by default).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: a free one, printed).")
@click.option("--open", "open_browser", is_flag=True,
              help="Open the roster in a browser once the server listens.")
@click.option("--no-follow", is_flag=True,
              help="In a clone that tracks a hub, show this clone's branch as it is (by "
                   "default the hub's branch is shown, fetched every 2 s).")
def serve(host, port, open_browser, no_follow):
    """Show the roster, timelines, freeze-states, vacancies and the lifecycle in a browser,
    live as commits arrive (read-only; needs the `web` extra, `pip install '.[web]'` in a clone
    of gitstate: without it, this says the command for this install). In a clone whose
    branch tracks a hub, the hub's branch is shown, fetched every two seconds."""
    here = repo(bare_ok=True)   # a hub is shown as well: its HEAD, the team line
    busy = port_taken(host, port)
    if busy:
        raise GitstateError(f"cannot serve at {host}:{port}: {busy}",
                            hint=f"another program listens there; pick another port, e.g. "
                                 f"`gitstate serve --port {port + 1 if port < 65535 else 8765}`")
    from gitstate.web.asgi import serve as run
    run(here, host, port, echo=click.echo, open_browser=open_browser, follow=not no_follow)


def port_taken(host: str, port: int) -> str | None:
    """Why `host:port` cannot be listened on (e.g. the address is in use), or None: asked
    before anything is printed, with the address reuse the server itself asks for."""
    import socket
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise UsageError(f"--host {host}: {exc.strerror}") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return (exc.strerror or str(exc)).lower()
    return None


@example('gitstate site --out public', 'gitstate site --out public --at v1.0 --json')
@cli.command()
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder to write the pages into (created if missing).")
@click.option("--force", is_flag=True,
              help="Write into a folder that already holds files (they may be overwritten).")
@at_option
@json_option
def site(out, force, at, as_json):
    """Write the viewer's pages as static files (no JavaScript needed), e.g. for CI to publish."""
    from gitstate.web.site import build
    result = build(repo(bare_ok=True), out, at, force=force)
    if as_json:
        emit("site", result)
    else:
        click.echo(f"wrote {result['pages']} files for {result['agents']} agents to "
                   f"{result['out']} (commit {(result['commit'] or 'none')[:10]}); "
                   f"open {result['out']}/index.html")
