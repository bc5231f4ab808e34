"""The law, pure: lifecycles, state files, the commit grammar and the rules. No git, no files,
no click."""
