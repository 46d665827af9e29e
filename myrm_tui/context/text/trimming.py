"""Structure-aware shortening shared by the filters, the budget guard and compression.

JSON keeps its skeleton (depth, key and item limits from ``ContextConfig``) and stays valid JSON;
text keeps its head and tail lines with a count of what was cut in between.
"""

from __future__ import annotations

import json
from typing import Any


def trim_json_value(value: Any, max_depth: int, max_keys: int, max_items: int, depth: int = 0) -> Any:
    if isinstance(value, dict):
        if depth >= max_depth:
            return f"<object with {len(value)} keys>"
        items = list(value.items())
        out = {k: trim_json_value(v, max_depth, max_keys, max_items, depth + 1) for k, v in items[:max_keys]}
        if len(items) > max_keys:
            out["…"] = f"{len(items) - max_keys} more keys"
        return out
    if isinstance(value, list):
        if depth >= max_depth:
            return [f"<array of {len(value)} items>"]
        # guard: l3-json-skeleton-item-limit
        out_list = [trim_json_value(v, max_depth, max_keys, max_items, depth + 1) for v in value[:max_items]]
        if len(value) > max_items:
            out_list.append(f"… {len(value) - max_items} more items")
        return out_list
    if isinstance(value, str) and len(value) > 200:
        return value[:160] + f"… ({len(value)} chars)"
    return value


def trim_json_text(text: str, max_depth: int = 4, max_keys: int = 12, max_items: int = 6) -> str | None:
    """A valid-JSON skeleton of ``text``, or None when ``text`` is not JSON."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return None
    return json.dumps(trim_json_value(value, max_depth, max_keys, max_items), ensure_ascii=False, indent=1)


def head_tail(text: str, head_lines: int, tail_lines: int, max_chars: int | None = None) -> str:
    """Head and tail lines of ``text`` with a marker for the cut; also bounded by ``max_chars``."""
    lines = text.splitlines()
    if len(lines) > head_lines + tail_lines:
        cut = len(lines) - head_lines - tail_lines
        lines = [*lines[:head_lines], f"[… {cut} lines cut …]", *lines[-tail_lines:]]
    out = "\n".join(lines)
    if max_chars is not None and len(out) > max_chars:
        half = max(max_chars // 2 - 40, 0)
        out = f"{out[:half]}\n[… {len(out) - 2 * half} chars cut …]\n{out[-half:]}"
    return out


def pointer_note(uri: str, how: str, before: int, after: int) -> str:
    return (
        f"\n[{how}: {before:,} → {after:,} chars. Full output: {uri} — read it with "
        f'file_read_tool(paths=["{uri}"], line_range="1:200")]'
    )
