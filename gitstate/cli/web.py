"""The viewer's commands: `serve` (a live local web app) and `site` (the same pages as static
files). The web stack is imported only when `serve` runs."""

from __future__ import annotations

import click

from gitstate.cli.app import at_option, cli, directory_of, json_option, json_out, open_repo


def run_serve(directory: str | None, host: str = "127.0.0.1", port: int = 8765) -> int:
    from gitstate.web.app import serve
    serve(open_repo(directory), host, port, echo=click.echo)
    return 0


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (this machine only by default).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535),
              help="Port to listen on.")
@click.pass_context
def serve(ctx, host, port):
    """Show the roster, timelines, freeze-states, vacancies and the lifecycle in a browser,
    live as commits arrive (read-only; needs `pip install 'gitstate[web]'`)."""
    return run_serve(directory_of(ctx), host, port)


def run_site(directory: str | None, out: str, at: str | None = None, *,
             as_json: bool = False) -> int:
    from gitstate.web.site import build
    result = build(open_repo(directory), out, at)
    if as_json:
        json_out(result)
    else:
        click.echo(f"wrote {result['pages']} files for {result['agents']} agents to "
                   f"{result['out']} (commit {(result['commit'] or 'none')[:10]}); "
                   f"open {result['out']}/index.html")
    return 0


@cli.command()
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder to write the pages into (created if missing).")
@at_option
@json_option
@click.pass_context
def site(ctx, out, at, as_json):
    """Write the viewer's pages as static files (no JavaScript needed), e.g. for CI to publish."""
    return run_site(directory_of(ctx), out, at, as_json=as_json)
