"""The models of what the setup commands print under `--json`: `init` (with what `--runtime`,
`--ci` or `--watch` wrote) and `presets`."""

from __future__ import annotations

from typing import Literal

from gitstate.schema.described import _InitReport
from gitstate.schema.records import JsonModel


class Integration(JsonModel):
    """What `init --runtime NAME`, `--ci NAME` or `--watch` did to its file."""
    kind: Literal["runtime", "ci", "watch"]
    """runtime, ci or watch"""
    name: str
    """the runtime's or CI's name (claude-code, github, gitlab), or systemd (the watch)"""
    path: str
    """the file it wrote (the watch: its timer)"""
    changed: bool
    """whether the file changed"""
    added: list[str] = []
    """hook events, MCP servers (or CI jobs) added or updated; the watch's units written"""
    kept: list[str] = []
    """what of the user's was kept as it was"""
    then: str | None = None
    """what to do next, where something is (the watch: how to start its timer; a status line
    of the user's own: how to chain gitstate's after it)"""


class Preset(JsonModel):
    """A shipped lifecycle."""
    name: str
    """its name (`init --lifecycle NAME`)"""
    description: str
    """what it is for"""
    initial: str
    """the state a spawned agent starts in"""
    states: list[str]
    """its states"""
    default: bool
    """whether `init` takes it when none is named"""


class PresetList(JsonModel):
    """`gitstate presets`: the shipped lifecycles."""
    presets: list[Preset]
    """every shipped preset"""


class InitReport(_InitReport):
    """What `gitstate init` did, and what `--runtime`, `--ci` or `--watch` wrote."""
    integrations: list[Integration] = []
    """what `--runtime`, `--ci` or `--watch` wrote"""
