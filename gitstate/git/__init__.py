"""The one door to git: the process runner, the managed repository, atomic commits, caches."""

QUEUE_PREFIX = "refs/gitstate/queue/"   # a push there is a move for a hub's queue to land
