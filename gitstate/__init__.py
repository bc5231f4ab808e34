"""gitstate: a git-native lifecycle state machine for AI agents.

Nothing is imported here: hooks import `gitstate.doors.hooks` directly and must stay light.
"""

__version__ = "0.1.0"
