"""Schema migrations, applied in order; ``PRAGMA user_version`` records how far a database is."""

from __future__ import annotations

import sqlite3

MIGRATIONS: tuple[str, ...] = (
    # 1 — the whole initial schema
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL DEFAULT 'New session',
        model TEXT NOT NULL DEFAULT '',
        workspace TEXT NOT NULL DEFAULT '',
        parent_id TEXT,
        forked_from_seq INTEGER,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE messages (
        rowid INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')),
        content TEXT,
        content_is_json INTEGER NOT NULL DEFAULT 0,
        tool_calls TEXT,
        tool_call_id TEXT,
        name TEXT,
        reasoning TEXT,
        meta TEXT,
        token_count INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        UNIQUE (session_id, seq)
    );
    -- Messages are append-only: no update ever, and no delete while their session exists.
    CREATE TRIGGER messages_no_update BEFORE UPDATE ON messages
    BEGIN SELECT RAISE(ABORT, 'messages are append-only'); END;
    CREATE TRIGGER messages_no_delete BEFORE DELETE ON messages
    WHEN EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id)
    BEGIN SELECT RAISE(ABORT, 'messages are append-only'); END;
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE vault (
        uri TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        tool_name TEXT NOT NULL DEFAULT '',
        size INTEGER NOT NULL,
        content TEXT NOT NULL,
        meta TEXT,
        created_at REAL NOT NULL
    );
    CREATE INDEX vault_session ON vault(session_id, created_at);
    CREATE TABLE checkpoints (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,            -- 'precompact' (backup before a compaction) | 'state' (committed)
        status TEXT NOT NULL,          -- 'pending' | 'committed' | 'rolled_back'
        state TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX checkpoints_session ON checkpoints(session_id, id);
    CREATE TABLE context_state (session_id TEXT PRIMARY KEY, state TEXT NOT NULL, updated_at REAL NOT NULL);
    CREATE TABLE metrics (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        data TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX metrics_session ON metrics(session_id, id);
    """,
    # 2 — one writer per session: the write lease, and a version for compare-and-set state saves
    """
    CREATE TABLE session_leases (
        session_id TEXT PRIMARY KEY,
        token TEXT NOT NULL,           -- the holding Store's; its writes check it
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        started TEXT,                  -- the process's start time (Linux): a reused pid is not it
        acquired_at REAL NOT NULL,
        heartbeat REAL NOT NULL        -- refreshed by its writes; a lease from another host expires
    );
    ALTER TABLE context_state ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
    """,
    # 3 — Anthropic thinking blocks of an assistant message, with their signatures (JSON list): the API
    # wants them back, unchanged, on the tool-use turns that follow. NULL for every older row.
    """
    ALTER TABLE messages ADD COLUMN thinking_blocks TEXT;
    """,
    # 4 — history_search's index: how far (rowid) messages and vault entries are indexed. The FTS5 table
    # itself is created at open where this Python's sqlite3 has FTS5 (``history.py``): a virtual table
    # needs its module, and a database must still open without it; the watermark at 0 backfills it.
    """
    CREATE TABLE history_index (source TEXT PRIMARY KEY, upto INTEGER NOT NULL);
    INSERT INTO history_index (source, upto) VALUES ('messages', 0), ('vault', 0);
    """,
    # 5 — /undo: a file's content before the agent's file tool changed it (NULL content: the file did not
    # exist, or was too big to keep), and the turns the user undid. Append-only like the messages.
    """
    CREATE TABLE file_backups (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL,          -- the session's user-turn number (AgentSession.turn)
        prompt TEXT NOT NULL DEFAULT '', -- the start of that turn's user message, for /undo's note
        message_seq INTEGER NOT NULL,   -- the assistant message whose call made it (-1: a subagent's)
        call_id TEXT NOT NULL DEFAULT '',
        path TEXT NOT NULL,             -- resolved, absolute
        existed INTEGER NOT NULL,
        kept INTEGER NOT NULL,          -- 0: over the size kept; /undo cannot restore it
        content TEXT,                   -- the text before the change when existed and kept
        after_sha TEXT NOT NULL,        -- sha256 of what the tool wrote: a different file was changed since
        made_dirs TEXT NOT NULL DEFAULT '', -- folders a new file needed, one a line: removed with it if empty
        created_at REAL NOT NULL
    );
    CREATE INDEX file_backups_session ON file_backups(session_id, turn, id);
    CREATE TABLE file_undos (
        session_id TEXT NOT NULL,       -- the session that undid
        owner_id TEXT NOT NULL,         -- the session whose turn it was (itself, or a fork's parent)
        turn INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX file_undos_session ON file_undos(session_id);
    CREATE TRIGGER file_backups_no_update BEFORE UPDATE ON file_backups
    BEGIN SELECT RAISE(ABORT, 'file backups are append-only'); END;
    CREATE TRIGGER file_backups_no_delete BEFORE DELETE ON file_backups
    WHEN EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id)
    BEGIN SELECT RAISE(ABORT, 'file backups are append-only'); END;
    CREATE TRIGGER file_undos_no_update BEFORE UPDATE ON file_undos
    BEGIN SELECT RAISE(ABORT, 'file undos are append-only'); END;
    CREATE TRIGGER file_undos_no_delete BEFORE DELETE ON file_undos
    WHEN EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id)
    BEGIN SELECT RAISE(ABORT, 'file undos are append-only'); END;
    """,
    # 6 — /undo's total cap a session (``undo_backups_mb``): each backup's size in bytes, and the one change
    # a backup row may undergo: its content dropped (the oldest turns' first), the rest as it was written.
    """
    ALTER TABLE file_backups ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE file_backups ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;
    DROP TRIGGER file_backups_no_update;
    UPDATE file_backups SET bytes = COALESCE(length(CAST(content AS BLOB)), 0);
    CREATE TRIGGER file_backups_no_update BEFORE UPDATE ON file_backups
    WHEN NOT (
        OLD.dropped = 0 AND NEW.dropped = 1 AND NEW.content IS NULL AND NEW.id = OLD.id
        AND NEW.session_id = OLD.session_id AND NEW.turn = OLD.turn AND NEW.prompt = OLD.prompt
        AND NEW.message_seq = OLD.message_seq AND NEW.call_id = OLD.call_id AND NEW.path = OLD.path
        AND NEW.existed = OLD.existed AND NEW.kept = OLD.kept AND NEW.after_sha = OLD.after_sha
        AND NEW.made_dirs = OLD.made_dirs AND NEW.created_at = OLD.created_at AND NEW.bytes = OLD.bytes
    )
    BEGIN SELECT RAISE(ABORT, 'file backups are append-only'); END;
    """,
)


def statements(script: str) -> list[str]:
    """The SQL statements of a migration script, one by one (a trigger body's ``;`` does not split it).

    Migrations run statement by statement inside ``Store.transaction()``: ``executescript`` would
    commit the open transaction first and need its own ``BEGIN``."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip() and not all(ln.strip().startswith("--") or not ln.strip() for ln in buf.splitlines()):
        raise ValueError(f"incomplete SQL statement in a migration: {buf.strip()[:80]!r}")
    return out
