"""The doors: git hook entry points and shims, the hub, install and the work-tree checks. Light imports only."""
