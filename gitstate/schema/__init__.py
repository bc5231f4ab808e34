"""Typed `--json` outputs: one pydantic model per command, used by the CLI, the MCP server and
`gitstate schema`. Faces import it; the git hooks never do (pydantic alone would exceed a
hook's time budget)."""
