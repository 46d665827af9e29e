"""Reading the trajectory corpus (JSONL or JSONL.gz, OpenAI chat format) and its probe files.

Bad input raises ``CorpusError`` (a ``ValueError``) whose message names the file and the line:
``myrm bench`` prints it as one line and exits 2.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from myrm_tui.context.types import ROLES, Message


class CorpusError(ValueError):
    """A corpus or probe file that cannot be read as documented."""


@dataclass
class Conversation:
    id: str
    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Probe:
    """A question about one conversation. Each fact is a tuple of alternative wordings: it is kept if
    any of them is in the request (case-insensitive)."""

    conv_id: str
    probe_id: str
    question: str
    facts: tuple[tuple[str, ...], ...]
    evidence_msg_index: int
    type: str = ""

    @property
    def expected_facts(self) -> tuple[str, ...]:
        """The first wording of each fact."""
        return tuple(f[0] for f in self.facts)


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, JSON object) of each non-blank line; any read or parse failure → ``CorpusError``."""
    from myrm_tui.store.foreign_read import open_text

    n = 0
    try:
        # a recording from elsewhere: a regular file only, and no more text than an import reads
        with open_text(path, errors="strict") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CorpusError(f"{path}:{n}: not JSON ({exc.msg} at column {exc.colno})") from None
                # guard: corpus-json-nested-too-deep
                except RecursionError:
                    raise CorpusError(f"{path}:{n}: JSON nested deeper than this reader follows") from None
                if not isinstance(d, dict):
                    raise CorpusError(f"{path}:{n}: expected a JSON object, got {type(d).__name__}")
                yield n, d
    except FileNotFoundError:
        raise CorpusError(f"{path}: file not found") from None
    # guard: bench-a-bad-gzip-corpus-is-one-line
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise CorpusError(f"{path}:{n + 1}: not a readable gzip file ({exc})") from None
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}:{n + 1}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except IsADirectoryError:
        raise CorpusError(f"{path}: is a directory, not a file") from None
    except OSError as exc:  # not a regular file, larger than an import reads
        raise CorpusError(f"{path}:{n + 1}: {exc.strerror or exc}") from None


def _message(path: Path, n: int, i: int, m: Any, conv: int) -> Message:
    where = f"{path}:{n}: message {i}"
    if not isinstance(m, dict):
        raise CorpusError(f"{where} is not an object")
    if m.get("role") not in ROLES:
        raise CorpusError(f"{where} has role {m.get('role')!r} (want system, user, assistant or tool)")
    c = m.get("content")
    if not (c is None or isinstance(c, str) or (isinstance(c, list) and all(isinstance(p, dict) for p in c))):
        raise CorpusError(f"{where}: content must be a string, a list of parts or null")
    calls = m.get("tool_calls") or []
    if not isinstance(calls, list) or not all(
        isinstance(x, dict) and isinstance(x.get("function", {}), dict) for x in calls
    ):
        raise CorpusError(
            f"{where}: tool_calls must be a list of {{id, type, function: {{name, arguments}}}}"
        )
    # Message.from_api keeps these as they come; a list where a string belongs (a call id) broke the replay
    # later, far from the line that held it (a dict keyed by call id: "unhashable type: 'list'").
    # guard: corpus-message-fields-typed
    for key in ("tool_call_id", "name", "reasoning_content"):
        if not (m.get(key) is None or isinstance(m.get(key), str)):
            raise CorpusError(f"{where}: {key} must be a string or null")
    blocks = m.get("thinking_blocks")
    if not (blocks is None or (isinstance(blocks, list) and all(isinstance(b, dict) for b in blocks))):
        raise CorpusError(f"{where}: thinking_blocks must be a list of objects")
    return Message.from_api(m, id=f"c{conv}m{i}")


def load_conversations(path: Path, limit: int | None = None, only: str | None = None) -> list[Conversation]:
    """The corpus at ``path``; another agent's sessions (a Claude Code transcript, a Codex rollout, a Hermes
    session or trajectory file, or a folder of them) are read as one conversation each, so a user can bench
    their own past sessions."""
    from myrm_tui.store.foreign import ForeignError, is_transcript, read_sessions, sessions_in

    if path.is_dir() or is_transcript(path):
        try:
            found = [s for p in sessions_in(path) for s in read_sessions(p)]
        except ForeignError as exc:
            raise CorpusError(str(exc)) from None
        # Ids as a corpus line's messages get them: the engine derives its rewrites' ids from them, and
        # with every id empty it cannot tell one message from another.
        convs = [
            Conversation(
                f.id, [replace(m, id=f"c{n}m{i}") for i, m in enumerate(f.messages)], [], {"agent": f.agent}
            )
            for n, f in enumerate(x for x in found if x.messages)
        ]
        return [c for c in convs if only is None or c.id == only][:limit]
    out: list[Conversation] = []
    for conv, (n, d) in enumerate(_lines(path)):
        cid = str(d.get("id", f"conv-{conv}"))
        if only is not None and cid != only:
            continue
        raw = d.get("messages")
        if not isinstance(raw, list):
            got = "no" if raw is None else f"a {type(raw).__name__} as"
            raise CorpusError(
                f'{path}:{n}: conversation {cid!r} has {got} "messages" (want a list of chat messages)'
            )
        msgs = [_message(path, n, i, m, conv) for i, m in enumerate(raw)]
        meta = d.get("meta") or {}
        if not isinstance(meta, dict):
            raise CorpusError(f'{path}:{n}: "meta" must be an object')
        meta = dict(meta)
        tools = meta.pop("tools", []) or []
        # guard: corpus-tool-definitions-checked
        if not isinstance(tools, list) or not all(
            isinstance(t, dict)
            and isinstance(t.get("function"), dict)
            and isinstance(t["function"].get("name"), str)
            and isinstance(t["function"].get("parameters", {}), dict)
            for t in tools
        ):
            raise CorpusError(
                f"{path}:{n}: meta.tools must be a list of tool definitions "
                "({type, function: {name, parameters}})"
            )
        out.append(Conversation(cid, msgs, list(tools), meta))
        if limit is not None and len(out) >= limit:
            break
    return out


def _facts(path: Path, n: int, raw: Any) -> tuple[tuple[str, ...], ...]:
    bad = CorpusError(
        f'{path}:{n}: "expected_facts" must be a list whose items are strings or non-empty lists of strings'
    )
    if not isinstance(raw, list):
        raise bad
    out: list[tuple[str, ...]] = []
    for f in raw:
        alts = [f] if isinstance(f, str) else f
        if not isinstance(alts, list) or not alts or not all(isinstance(a, str) and a.strip() for a in alts):
            raise bad
        out.append(tuple(alts))
    return tuple(out)


def load_probes(path: Path) -> list[Probe]:
    out: list[Probe] = []
    for n, d in _lines(path):
        for key in ("conv_id", "probe_id"):
            if not isinstance(d.get(key), str) or not d[key]:
                raise CorpusError(f'{path}:{n}: probe needs a string "{key}"')
        idx = d.get("evidence_msg_index", -1)
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise CorpusError(f'{path}:{n}: "evidence_msg_index" must be an integer')
        kind = d.get("type", "")
        if not isinstance(kind, str):
            raise CorpusError(f'{path}:{n}: "type" must be a string')
        out.append(
            Probe(
                d["conv_id"],
                d["probe_id"],
                str(d.get("question", "")),
                _facts(path, n, d.get("expected_facts", [])),
                idx,
                kind,
            )
        )
    return out
