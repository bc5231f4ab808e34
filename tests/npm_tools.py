"""The npm tools the end-to-end tests drive (pinned in .ci/npm/package.json, installed by
.ci/run into .ci/npm/node_modules): the real Claude Code, Codex CLI and Gemini CLI binaries
and the MCP Inspector's command line. A test that needs one and does not find it skips,
saying how to install it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NPM = ROOT / ".ci" / "npm"
PINNED = json.loads((NPM / "package.json").read_text())["dependencies"]
HOW = ("install the pinned npm tools: `npm install --prefix .ci/npm --no-package-lock` "
       "(.ci/run does it, with node and npm from Debian when missing)")


def tool(name: str, package: str, node: bool = True) -> str:
    """Path of an installed npm tool's command, or skip the test."""
    found = NPM / "node_modules" / ".bin" / name
    if found.exists() and os.access(found, os.X_OK) and (not node or shutil.which("node")):
        return str(found)
    pytest.skip(f"{package} {PINNED[package]} is not installed: {HOW}")


def claude() -> str:
    return tool("claude", "@anthropic-ai/claude-code", node=False)   # a native binary


def codex() -> str:
    """The native Codex binary of the platform's optional dependency (@openai/codex-linux-x64,
    ...), run directly: the package's node launcher only finds it and sets an updater's hint."""
    for found in sorted(NPM.glob("node_modules/@openai/codex-*/vendor/*/bin/codex")):
        if os.access(found, os.X_OK):
            return str(found)
    pytest.skip(f"@openai/codex {PINNED['@openai/codex']} (with its native binary) is not "
                f"installed: {HOW}")


def _node_at_least(major: int, what: str) -> None:
    """Skip unless the node on PATH is `major` or newer."""
    import subprocess
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
    found = int(version.strip().lstrip("v").split(".")[0] or 0) if version.strip() else 0
    if found < major:
        pytest.skip(f"{what} needs node {major} or newer, found {version.strip() or 'none'}"
                    ": install a newer nodejs (e.g. from nodesource)")


def gemini() -> str:
    """Gemini CLI's command: a node script (its bundle), run by the node on PATH (20 or
    newer, as its package asks)."""
    found = tool("gemini", "@google/gemini-cli")
    _node_at_least(20, "Gemini CLI")
    return found


def inspector() -> str:
    found = tool("mcp-inspector", "@modelcontextprotocol/inspector")
    # it asks for 22.19; 20 runs its command line (tested), 18 is not tried
    _node_at_least(20, "the MCP Inspector")
    return found
