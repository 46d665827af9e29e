"""The pipeline's steps, a module each (``fit`` and ``media`` hold two)."""
