"""``ToolError``, alone so that what tools use (the job manager) can raise it without importing the tool
contract that refers back to it."""

from __future__ import annotations


class ToolError(Exception):
    """A failure the model should read (bad arguments, path outside the workspace...)."""
