"""The doors: git hook entry points and shims, the ref guard, the hub, install, the checks
of a work tree and of a clone (doctor). Light imports only."""
