"""Agent runtimes: Claude Code's hooks (briefing, measured context, the spawn guard), the
settings and CI files `gitstate init --runtime/--ci` writes. A face, next to `cli/`."""
