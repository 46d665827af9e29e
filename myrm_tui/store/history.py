"""``history_search``'s index: every stored message and vaulted output, in an SQLite FTS5 table of the
same database (no other service).

Kept current by catching up: each write that stores messages or vault entries indexes, in its own
transaction, every row past the ``history_index`` watermark (migration 4). The same catch-up at open
backfills a database written before the index existed, or by a Python whose sqlite3 has no FTS5 (there
the index is off: one warning, and the tool says so). Rows are indexed as the vault pane and
``file_read_tool`` render them, so a hit's line range points at the lines the reader sees; a message's
pointer is ``vault://<session>/m<seq>`` (``vault_get`` resolves it).

Search: the query's words as phrases, all of them first (bm25 order), then any of them; a hit is the
best-matching lines of one source, cut to a few hundred characters.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from myrm_tui.context.vault import VAULT_SCHEME, VaultEntry, readable

log = logging.getLogger(__name__)

# unicode61 splits ``as_sql`` and ``django.db`` into words: a phrase query matches them whole, a single
# word matches inside them.
CREATE_FTS = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5("
    "body, session_id UNINDEXED, ref UNINDEXED, kind UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')"
)
# Vault kinds not indexed: archives repeat messages already indexed, media are data URLs.
SKIP_KINDS = ("archive", "media")
TOOL_NAME = "history_search"
# A pointer is text anyone writes: ASCII digits that fit SQLite's integer (a 30-digit one raised
# OverflowError out of every read of it), and no line end (``$`` takes "m1\n").
# guard: a-message-pointers-number-fits-sqlite
MESSAGE_REF = re.compile(r"^m([0-9]{1,18})\Z")
HIT_LINES = 3  # lines of a hit around its best line
LINE_CHARS = 160  # a hit line is cut to this, around its first match
MAX_TERMS = 16
# Words a hit's lines are ranked by: each line is scanned once a word, so a model's query of 15,000 words
# against a vaulted output of 20,000 lines held the event loop for two minutes.
MAX_WORDS = 4 * MAX_TERMS
CANDIDATES = 8  # rows read per hit asked for, re-ranked exact string first
_WORD = re.compile(r"\w+")
UNAVAILABLE = "history_search is off: this Python's sqlite3 has no FTS5 (a Python with FTS5 turns it on)"


def fts5_available() -> bool:
    """Whether this Python's sqlite3 has FTS5 (a throwaway in-memory table)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def message_uri(sid: str, seq: int) -> str:
    return f"{VAULT_SCHEME}{sid}/m{seq}"


def message_text(
    role: str, content: Any, tool_calls: Any = None, name: str | None = None, call_id: str | None = None
) -> str:
    """A stored message as the vault renders an archived one (header line, text, tool calls)."""
    d: dict[str, Any] = {"role": role, "content": content, "tool_calls": tool_calls or []}
    if role == "tool":
        d |= {"name": name or "", "tool_call_id": call_id or ""}
    return readable(VaultEntry("", json.dumps([d], ensure_ascii=False), "archive"))


def row_text(r: Any, indexed: bool = False) -> str:
    """``message_text`` of a ``messages`` row. ``indexed``: as the index holds it — without searches and
    their results (a search would find the last one's query and hits), which render last, so the other
    lines keep their numbers."""
    content: Any = r["content"]
    if r["content_is_json"] and content is not None:
        content = json.loads(content)
    calls = json.loads(r["tool_calls"] or "[]")
    if indexed:
        # guard: history-search-searches-and-their
        if r["role"] == "tool" and r["name"] == TOOL_NAME:
            return ""
        calls = [c for c in calls if (c.get("function") or {}).get("name") != TOOL_NAME]
    return message_text(r["role"], content, calls, r["name"], r["tool_call_id"])


async def create(conn: aiosqlite.Connection) -> None:
    await conn.execute(CREATE_FTS)


async def current(conn: aiosqlite.Connection) -> bool:
    """Whether the index exists and holds every stored message and vault entry."""
    async with conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'history_fts'") as cur:
        if await cur.fetchone() is None:
            return False
    for table in ("messages", "vault"):
        async with conn.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {table}") as cur:
            row = await cur.fetchone()
        if row is not None and int(row[0]) > await _watermark(conn, table):
            return False
    return True


async def catch_up(conn: aiosqlite.Connection) -> int:
    """Index every message and vault row past the watermark, inside the caller's transaction; the count."""
    n = 0
    upto = await _watermark(conn, "messages")
    rows = list(
        await conn.execute_fetchall(
            "SELECT rowid, session_id, seq, role, content, content_is_json, tool_calls, name, tool_call_id "
            "FROM messages WHERE rowid > ? ORDER BY rowid",
            (upto,),
        )
    )
    if rows:
        await conn.executemany(
            "INSERT INTO history_fts (body, session_id, ref, kind) VALUES (?,?,?,?)",
            [(row_text(r, indexed=True), r["session_id"], f"m{r['seq']}", r["role"]) for r in rows],
        )
        await _advance(conn, "messages", rows[-1]["rowid"])
        n += len(rows)
    upto = await _watermark(conn, "vault")
    vrows = list(
        await conn.execute_fetchall(
            "SELECT rowid, uri, session_id, kind, tool_name, content, created_at FROM vault WHERE rowid > ? "
            "ORDER BY rowid",
            (upto,),
        )
    )
    if vrows:
        await conn.executemany(
            "INSERT INTO history_fts (body, session_id, ref, kind) VALUES (?,?,?,?)",
            [
                (
                    readable(VaultEntry(r["uri"], r["content"], r["kind"], r["tool_name"])),
                    r["session_id"],
                    r["uri"],
                    r["kind"],
                )
                for r in vrows
                if r["kind"] not in SKIP_KINDS
            ],
        )
        await _advance(conn, "vault", vrows[-1]["rowid"])
        n += len(vrows)
    return n


async def rewind(conn: aiosqlite.Connection) -> None:
    """After rows were deleted, inside the caller's transaction: a watermark past the newest row left
    comes back to it. ``vault`` has no AUTOINCREMENT, so SQLite gives a new row the largest rowid + 1:
    once the newest session was deleted, the next outputs of any session took rowids at or under the
    watermark and were never indexed (history_search could not find them)."""
    for table in ("messages", "vault"):
        await conn.execute(
            f"UPDATE history_index SET upto = MIN(upto, (SELECT COALESCE(MAX(rowid), 0) FROM {table})) "
            "WHERE source = ?",
            (table,),
        )


async def _watermark(conn: aiosqlite.Connection, source: str) -> int:
    # One trip to aiosqlite's thread, not three (``base.first_row``): it is read twice a message append.
    rows = await conn.execute_fetchall("SELECT upto FROM history_index WHERE source = ?", (source,))
    row = next(iter(rows), None)
    return int(row[0]) if row else 0


async def _advance(conn: aiosqlite.Connection, source: str, upto: int) -> None:
    await conn.execute(
        "INSERT INTO history_index (source, upto) VALUES (?, ?) "
        "ON CONFLICT(source) DO UPDATE SET upto = excluded.upto",
        (source, upto),
    )


# -- searching -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Hit:
    """One source that matched: where it is (``uri`` a ``vault://`` pointer), which lines, and them."""

    uri: str
    kind: str  # a message's role, or a vault entry's kind
    start: int  # 1-based, inclusive
    end: int
    lines: tuple[str, ...]

    def render(self) -> str:
        head = f"{self.uri} lines {self.start}:{self.end} ({self.kind})"
        return "\n".join([head, *(f"  {ln}" for ln in self.lines)])


def phrases(query: str) -> list[str]:
    """The query's whitespace-separated chunks that hold a word, as FTS5 phrases (quotes doubled)."""
    chunks = [c for c in query.split() if _WORD.search(c)][:MAX_TERMS]
    return ['"' + c.replace('"', '""') + '"' for c in chunks]


async def search(
    conn: aiosqlite.Connection,
    query: str,
    own: str,
    ancestors: Sequence[str] = (),
    limit: int = 5,
    until: Mapping[str, float] | None = None,
) -> list[Hit]:
    """The best ``limit`` sources for ``query`` among session ``own``'s messages and the vault entries of
    it and its ``ancestors`` (a fork holds copies of its parent's messages up to the fork point); an
    ancestor's entries only up to the time in ``until`` (``Store.branch_points``) when there is one."""
    # The model writes the query: FTS5 reads a NUL inside a phrase as the end of its text ("unterminated
    # string"), so it is a separator here; every other character is quoted inside a phrase.
    # guard: history-search-a-nul-in-the-query
    query = query.replace("\x00", " ")
    ps = phrases(query)
    if not ps or limit <= 0:
        return []
    scope = ",".join("?" * len(ancestors))
    # A parent's outputs after the fork are another branch's: found, they read as this session's past.
    # guard: history-search-an-ancestors-later-outputs-are-not-searched
    cut = [(sid, at) for sid, at in (until or {}).items() if sid in ancestors]
    later = " OR ".join("(session_id = ? AND created_at > ?)" for _ in cut)
    where = (
        "(session_id = ? OR (kind IN ('tool_output','subagent','mcp','hook_output') "
        f"AND session_id IN ({scope})"
        + (f" AND ref NOT IN (SELECT uri FROM vault WHERE {later})" if cut else "")
        + "))"
        if ancestors
        else "session_id = ?"
    )
    scoped = (own, *ancestors, *(v for pair in cut for v in pair)) if ancestors else (own,)
    hits: list[Hit] = []
    seen: set[str] = set()
    shown: set[tuple[str, ...]] = set()
    whole = " ".join(query.split()).lower()
    for expr in (" AND ".join(ps), " OR ".join(ps)) if len(ps) > 1 else (ps[0],):
        sql = (
            f"SELECT ref, session_id, kind, body FROM history_fts WHERE history_fts MATCH ? AND {where} "
            "ORDER BY bm25(history_fts) LIMIT ?"
        )
        async with conn.execute(sql, (expr, *scoped, limit * CANDIDATES)) as cur:
            rows = list(await cur.fetchall())
        # The words match ``as_sql`` and ``as sql`` alike: a source holding the exact string comes first,
        # and when the ranked candidates hold too few (``__call__`` is the word ``call``, which every
        # rendered tool call holds), the sources that hold it are read directly, newest first.
        rows.sort(key=lambda r: whole not in " ".join(r[3].split()).lower())
        exact = sum(whole in " ".join(r[3].split()).lower() for r in rows)
        if exact < limit and not hits:
            async with conn.execute(
                f"SELECT ref, session_id, kind, body FROM history_fts WHERE {where} "
                "AND instr(lower(body), ?) > 0 ORDER BY rowid DESC LIMIT ?",
                (*scoped, whole, limit),
            ) as cur:
                rows[exact:exact] = list(await cur.fetchall())
        for r in rows:
            ref = r[0]
            uri = message_uri(r[1], int(ref[1:])) if MESSAGE_REF.match(ref) else ref
            if uri in seen:
                continue
            seen.add(uri)
            hit = best_lines(uri, r[2], r[3], query)
            if hit.lines in shown:  # a vaulted original of a message already shown
                continue
            shown.add(hit.lines)
            hits.append(hit)
            if len(hits) >= limit:
                return hits
    return hits


def best_lines(uri: str, kind: str, body: str, query: str) -> Hit:
    """The ``HIT_LINES`` lines of ``body`` around the line that holds the whole query, else most of its
    words; each line cut around the query (else its first word)."""
    lines = body.splitlines() or [""]
    whole = " ".join(query.split()).lower()
    want = ranked_words(query)

    def score(i: int) -> tuple[bool, int, int]:
        low = lines[i].lower()
        return (whole in low, sum(w in low for w in want), -i)

    best = max(range(len(lines)), key=score)
    start = max(0, min(best - (HIT_LINES - 1) // 2, len(lines) - HIT_LINES))
    end = min(len(lines), start + HIT_LINES)
    return Hit(uri, kind, start + 1, end, tuple(_cut(lines[i], whole, want) for i in range(start, end)))


def ranked_words(query: str) -> set[str]:
    """The query's first ``MAX_WORDS`` distinct words (lower case), which rank a hit's lines."""
    # guard: history-search-ranks-by-a-bounded-set-of-words
    return set(list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:MAX_WORDS])


def _cut(line: str, whole: str, words: set[str]) -> str:
    line = line.rstrip()
    if len(line) <= LINE_CHARS:
        return line
    low = line.lower()
    at = low.find(whole)
    if at < 0:
        at = min((p for w in words if (p := low.find(w)) >= 0), default=0)
    # The query whole when it fits, with some text before it.
    a = max(0, min(at - max((LINE_CHARS - len(whole)) // 3, 0), len(line) - LINE_CHARS))
    return ("…" if a else "") + line[a : a + LINE_CHARS] + ("…" if a + LINE_CHARS < len(line) else "")


# -- an index of a conversation held in memory (the bench) ------------------------------------------
async def memory_index(texts: Sequence[tuple[str, str, str]], sid: str = "bench") -> aiosqlite.Connection:
    """An in-memory index of ``texts`` ((ref, kind, rendered text)) as session ``sid``: the bench asks it
    what ``history_search`` would answer. The caller closes it."""
    conn = await aiosqlite.connect(":memory:")
    await create(conn)
    await conn.executemany(
        "INSERT INTO history_fts (body, session_id, ref, kind) VALUES (?,?,?,?)",
        [(body, sid, ref, kind) for ref, kind, body in texts],
    )
    return conn
