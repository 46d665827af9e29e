"""Persistence: one SQLite database (WAL) for sessions, messages, settings, vault, checkpoints, metrics."""

from myrm_tui.store.db import SessionRow, Store

__all__ = ["SessionRow", "Store"]
