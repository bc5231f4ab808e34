"""The viewer's commands: `serve` (a live local web app) and `site` (the same pages as static
files). The web stack is imported only when `serve` runs."""

from __future__ import annotations

import click

from gitstate.cli.app import at_option, cli, json_option, json_out, repo


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (this machine only by default).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: a free one, printed).")
@click.option("--open", "open_browser", is_flag=True,
              help="Open the roster in a browser once the server listens.")
def serve(host, port, open_browser):
    """Show the roster, timelines, freeze-states, vacancies and the lifecycle in a browser,
    live as commits arrive (read-only; needs `pip install 'gitstate-agents[web]'`)."""
    from gitstate.web.app import serve as run
    run(repo(), host, port, echo=click.echo, open_browser=open_browser)


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
    result = build(repo(), out, at, force=force)
    if as_json:
        json_out(result)
    else:
        click.echo(f"wrote {result['pages']} files for {result['agents']} agents to "
                   f"{result['out']} (commit {(result['commit'] or 'none')[:10]}); "
                   f"open {result['out']}/index.html")
