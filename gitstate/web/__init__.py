"""The viewer: the roster, timelines, freeze-states, vacancies and the lifecycle as web pages,
served live (`gitstate serve`, Starlette + uvicorn) or written as static files (`gitstate
site`). Read-only; everything it shows comes from the same views as the CLI's `--json`."""
