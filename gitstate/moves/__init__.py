"""The moves that commit: one agent's (spawn, transition, freeze, wake, bury) and the fleet's
(sweep, reap, shutdown)."""
