"""Hook shims written by gitstate 0.1 run `from gitstate.hooks import main`; they keep working
until `gitstate init` rewrites them (`gitstate check` says when they are outdated)."""

from gitstate.doors.hooks import main, run_hook  # noqa: F401
