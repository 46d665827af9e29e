"""history_search is confined to this session's history: its own messages (a fork's copies included), its
own vaulted outputs, and those its ancestors wrote before its line left them; never an unrelated
session's, a sibling fork's, or what a parent wrote after the fork (attacker5)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from myrm_tui.context.types import Message
from myrm_tui.context.vault import VAULT_SCHEME, VaultEntry, readable, slice_lines
from myrm_tui.store.db import SessionNeeded, Store


@dataclass
class Model:
    """What each session's history holds, kept beside the store: facts of its messages and its outputs."""

    said: dict[str, list[str]] = field(default_factory=dict)  # session -> message facts (copies included)
    outputs: dict[str, list[str]] = field(default_factory=dict)  # session -> its own vaulted facts
    inherited: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # (owner, fact) before the fork
    parent: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    # session -> the sessions whose vault:// pointers its messages hold (its own, and a fork's copies)
    owners: dict[str, set[str]] = field(default_factory=dict)

    def line(self, sid: str) -> set[str]:
        """The ancestors the store still reaches: the walk stops past a deleted one."""
        found: set[str] = set()
        at = sid
        while at in self.parent and at not in self.deleted:
            at = self.parent[at]
            found.add(at)
        return found

    def visible(self, sid: str) -> set[str]:
        reach = self.line(sid)
        return {
            *self.said[sid],
            *self.outputs[sid],
            *(f for owner, f in self.inherited[sid] if owner in reach and owner not in self.deleted),
        }


OPS = st.lists(
    st.tuples(st.sampled_from(["say", "fork", "subagent", "delete", "new"]), st.integers(0, 7)),
    min_size=1,
    max_size=14,
)


async def _run(ops: list[tuple[str, int]]) -> None:
    store = await Store.open(":memory:")
    last = 0.0

    def now() -> float:
        """The wall clock, as the vault and the store stamp rows, but never the same time twice."""
        nonlocal last
        last = max(time.time(), last + 1e-6)
        return last

    m = Model()
    live: list[str] = []
    n = 0
    try:
        for op, i in [("new", 0), *ops]:
            if op == "new" or not live:
                s = await store.create_session()
                live.append(s.id)
                m.said[s.id], m.outputs[s.id], m.inherited[s.id] = [], [], []
                m.owners[s.id] = set()
                continue
            sid = live[i % len(live)]
            if op == "say":
                n += 1
                said, out = f"k{n:03d}said", f"k{n:03d}out"
                t = now()
                uri = f"{VAULT_SCHEME}{sid}/{n:04x}"
                await store.append_message(
                    sid,
                    Message(
                        role="tool", content=f"note {said} see {uri}", tool_call_id="c", created_at=now()
                    ),
                    vault=[VaultEntry(uri, f"spilled\n{out} here\nend", "tool_output", "bash", t)],
                )
                m.said[sid].append(said)
                m.outputs[sid].append(out)
                m.owners[sid].add(sid)
            elif op in ("fork", "subagent"):
                if op == "fork":
                    child = (await store.fork_session(sid)).id
                    m.said[child] = list(m.said[sid])
                    m.owners[child] = set(m.owners[sid])  # the copied messages' pointers
                else:
                    child = (await store.create_session(parent_id=sid)).id
                    m.said[child] = []
                    m.owners[child] = set()
                m.outputs[child] = []
                m.inherited[child] = [(sid, f) for f in m.outputs[sid]] + list(m.inherited[sid])
                m.parent[child] = sid
                live.append(child)
            elif op == "delete" and len(live) > 1:
                if any(sid in m.owners[o] for o in live if o != sid):
                    # a fork's copied messages point into its vault: refused, nothing deleted
                    with pytest.raises(SessionNeeded):
                        await store.delete_session(sid)
                    continue
                await store.delete_session(sid)
                live.remove(sid)
                m.deleted.add(sid)
        facts = [f for s in m.said for f in (*m.said[s], *m.outputs[s])]
        for sid in live:
            others = sorted(await store.forked_from(sid))  # as the agent's factory asks
            want = m.visible(sid)
            for fact in set(facts):
                hits = await store.search_history(sid, fact, 8, others)
                shown = [h for h in hits if any(fact in ln for ln in h.lines)]
                assert bool(shown) == (fact in want), (sid, fact, [h.uri for h in hits])
                for h in hits:
                    owner = h.uri.removeprefix(VAULT_SCHEME).split("/", 1)[0]
                    assert owner == sid or owner in others, (sid, h.uri)
                for h in shown:  # the pointer reads back the lines shown
                    entry = await store.vault_get(h.uri)
                    assert entry is not None and fact in slice_lines(readable(entry), f"{h.start}:{h.end}")
    finally:
        await store.close()


@settings(max_examples=40, deadline=None)
@given(ops=OPS)
@example(ops=[("say", 0), ("fork", 0), ("say", 0), ("say", 1)])  # a parent's output after the fork
@example(ops=[("new", 0), ("say", 0), ("say", 1), ("fork", 0), ("fork", 2), ("say", 0), ("say", 2)])
# a parent its fork points into: not deleted
@example(ops=[("say", 0), ("fork", 0), ("say", 1), ("fork", 1), ("delete", 1), ("say", 0)])
@example(ops=[("fork", 0), ("say", 1), ("fork", 0), ("delete", 0), ("say", 1)])  # parent gone
def test_a_sessions_search_finds_its_history_and_nothing_else(ops: list[tuple[str, int]]) -> None:
    asyncio.run(_run(ops))
