"""The agent loop and its tools. Imports nothing from ``myrm_tui.app``."""
