"""`gitstate mcp`: the commands as MCP tools over stdio (a face, next to `cli/`)."""
