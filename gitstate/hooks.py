"""Hook shims written by gitstate 0.1 run `from gitstate.hooks import main`. The hooks live in
`gitstate/doors/hooks.py` now; this module only tells such a shim's user what to do, so that
the shim refuses a state commit with one sentence instead of a traceback (`gitstate doctor`
and `gitstate check` name the outdated shim too)."""

raise SystemExit("gitstate: this hook was written by an older gitstate; run `gitstate init` "
                 "to update it")
