"""What `gitstate doctor` checks of Claude Code: its hooks, its agents' Bash and its MCP server
(`checks`), and which runs them, the project's settings or the plugin (`plugin_check`)."""

from __future__ import annotations

from gitstate.git.repo import Managed


def findings(repo: Managed) -> list[dict]:
    from gitstate.runtime.claude_code.plugin_check import findings as plugin_findings
    from gitstate.runtime.claude_code.setup_checks import findings as runtime_findings
    return runtime_findings(repo) + plugin_findings(repo)
