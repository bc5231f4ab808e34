"""`gitstate doctor`: the clone's checks (`gitstate.doors.doctor`), then each agent runtime's
own, as the runtimes' registry names them (Claude Code: its hooks, its agents' Bash, its MCP
server, the plugin)."""

from __future__ import annotations

from importlib import import_module

from gitstate.doors.doctor import diagnose as clone_findings
from gitstate.git.repo import Managed
from gitstate.runtime.registry import RUNTIMES


def diagnose(repo: Managed) -> list[dict]:
    out = clone_findings(repo)
    if any(f["check"] == "law" and f["status"] == "fail" for f in out):
        return out    # not managed (yet): nothing of a runtime's to check
    for runtime in RUNTIMES.values():
        out += import_module(runtime.doctor).findings(repo)
    return out
