"""myrm-tui: a terminal chat agent built around a context-management pipeline."""

__version__ = "0.1.0"
