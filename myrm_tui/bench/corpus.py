"""Reading the trajectory corpus (JSONL or JSONL.gz, OpenAI chat format) and its probe files."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myrm_tui.context.types import Message


@dataclass
class Conversation:
    id: str
    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Probe:
    conv_id: str
    probe_id: str
    question: str
    expected_facts: tuple[str, ...]
    evidence_msg_index: int


def _open(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        for line in f:
            if line.strip():
                yield line


def load_conversations(path: Path, limit: int | None = None, only: str | None = None) -> list[Conversation]:
    out: list[Conversation] = []
    for n, line in enumerate(_open(path)):
        d = json.loads(line)
        cid = str(d.get("id", f"conv-{n}"))
        if only is not None and cid != only:
            continue
        msgs = [Message.from_api(m, id=f"c{n}m{i}") for i, m in enumerate(d["messages"])]
        meta = dict(d.get("meta") or {})
        out.append(Conversation(cid, msgs, list(meta.pop("tools", []) or []), meta))
        if limit is not None and len(out) >= limit:
            break
    return out


def load_probes(path: Path) -> list[Probe]:
    return [
        Probe(d["conv_id"], d["probe_id"], d.get("question", ""), tuple(d.get("expected_facts", [])), int(d.get("evidence_msg_index", -1)))
        for d in (json.loads(line) for line in _open(path))
    ]
