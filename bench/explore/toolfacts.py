"""How many fact-like spans (identifiers, paths, numbers) of each role's messages are still in each
conversation's last myrm request: a coarse check of what a trim or a compaction loses, wider than the hand
probes. ``python bench/explore/toolfacts.py CORPUS WINDOW [config_key=value ...]``."""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import myrm_tui.bench.strategies as strategies
from myrm_tui.bench.corpus import load_conversations
from myrm_tui.context.tokens import TokenCounter

FACT = re.compile(
    r"`[^`\n]{2,80}`|\b(?:[\w/-]++(?:\.[\w/-]+)*?\.(?:py|txt|cfg|toml|rst|json|c|js)\b|[A-Za-z_]+_[A-Za-z_0-9]+\b"
    r"|[a-z]+[A-Z]\w+\b|[A-Z][a-z]+[A-Z]\w+\b|\d{3,}(?:\.\d+)*\b)"
)


def with_overrides(pairs: list[str]) -> None:
    """ContextConfig defaults replaced for this run (``trim_answered_tokens=0``)."""
    base = strategies.ContextConfig
    kinds = {f.name: type(getattr(base(), f.name)) for f in fields(base)}
    over = {k: kinds[k](v) for k, v in (p.split("=", 1) for p in pairs)}
    strategies.ContextConfig = lambda **kw: base(**{**kw, **over})  # type: ignore[assignment,misc]


async def main(corpus: Path, window: int) -> None:
    strategy = strategies.MyrmStrategy(TokenCounter())
    counts: dict[str, list[int]] = {"tool": [0, 0], "assistant": [0, 0]}
    for conv in load_conversations(corpus):
        strategy.start(conv.id, window)
        turns = [k for k in range(1, len(conv.messages)) if conv.messages[k].role == "assistant"]
        view: list[Any] = []
        for k in turns:
            view = await strategy.build(conv.messages[:k], k)
        text = "\n".join(m.text + " ".join(c.arguments for c in m.tool_calls) for m in view)
        seen: set[str] = set()
        for m in conv.messages[: turns[-1]]:
            if m.role not in counts:
                continue
            for fact in {x.strip("`") for x in FACT.findall(m.text)} - seen:
                seen.add(fact)
                counts[m.role][0] += 1
                counts[m.role][1] += fact in text
    for role, (n, kept) in counts.items():
        print(f"{role}: {kept}/{n} = {kept / max(n, 1):.3f}")


if __name__ == "__main__":
    with_overrides(sys.argv[3:])
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
