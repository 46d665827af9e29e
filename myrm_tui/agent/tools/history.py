"""``history_search``: full-text search over everything this session ever saw — every message and vaulted
output, its parents' after a fork — so a fact a compaction folded away is one call from the agent
(SQLite FTS5 in the session's own database, ``store/history.py``)."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult
from myrm_tui.store.history import TOOL_NAME

log = logging.getLogger(__name__)

DEFAULT_HITS = 5
MAX_HITS = 8
# A hit is a pointer line and three cut lines (about 150 tokens): the answer stays under ~800 tokens.
# Counted in UTF-8 bytes, which bound the tokens of any byte-level tokenizer: 3,200 characters of CJK or
# emoji output (what a file or a command can hold) were ~10,000 tokens.
MAX_CHARS = 3_200
# A query is echoed in a miss up to this (a model sent 5 MB: the miss carried it all into the history).
SHOWN_QUERY = 200


class HistorySearchTool:
    name = TOOL_NAME
    description = (
        "Search this session's whole history (every earlier message and tool output, also those "
        "compacted out of view) for words or exact strings. Returns the best matches, each with a "
        "vault:// pointer and line range for file_read_tool."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "words or exact strings to find"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_HITS},
        },
        "required": ["query"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str(args.get("query") or "").strip()
        if not query:
            raise ToolError("query is required")
        if ctx.history is None:
            raise ToolError("history_search is not available in this session")
        try:
            limit = max(1, min(MAX_HITS, int(args.get("limit") or DEFAULT_HITS)))
        except (TypeError, ValueError):
            raise ToolError("limit must be a number from 1 to 8") from None
        try:
            hits = await ctx.history(query, limit)
        except sqlite3.Error as exc:  # a query the index cannot read: the model gets one line, not a crash
            log.exception("history_search failed on %r", query[:200])
            raise ToolError(f"history_search could not run this query ({exc}); try plain words") from None
        if not hits:
            # guard: history-search-echoes-a-bounded-query
            shown = query if len(query) <= SHOWN_QUERY else query[:SHOWN_QUERY] + "…"
            return ToolResult(f"no match for {shown!r} in this session's history")
        out: list[str] = []
        size = 0
        for h in hits:
            text = h.render()
            # guard: history-search-answer-bounded-in-bytes
            cost = len(text.encode("utf-8", "replace"))
            if out and size + cost > MAX_CHARS:
                out.append(f"[{len(hits) - len(out)} more hits left out: narrow the query]")
                break
            out.append(text)
            size += cost + 1
        return ToolResult("\n".join(out), meta={"hits": len(hits)})
