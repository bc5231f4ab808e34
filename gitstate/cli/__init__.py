"""The command line: click commands by topic, their rendering, and the demo."""
