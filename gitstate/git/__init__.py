"""The one door to git: the process runner, the managed repository, atomic commits, caches."""
