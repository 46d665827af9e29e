"""Secrets at rest (issue 44, item 6): after a compaction, no credential the redactor knows is in any table
but those that keep raw copies on purpose — ``messages`` (the conversation as it happened), ``vault``
(full outputs, read back on request), ``checkpoints`` (the state before a compaction, to roll back to) and
``history_search``'s index of the first two.
A compaction record's gists (the labels of what left the view, stored in ``metrics``) held an output's
first line unredacted: ``AWS_ACCESS_KEY_ID=AKIA…``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings

# Eleven of the token formats of context/privacy/secret_rules.py, each the first line of a file the agent
# reads.
SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    "OPENAI_API_KEY": "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "GITLAB_TOKEN": "glpat-abcdefghijklmnopqrst",
    "GOOGLE_API_KEY": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "SLACK_BOT": "xoxb-123456789012-abcdefghijkl",
    "STRIPE": "sk_live_abcdefghijklmnop1234",
    "HF": "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "NPM": "npm_abcdefghijklmnopqrstuvwxyz0123456789",
}
RAW_TABLES = {"messages", "vault", "checkpoints"}
RAW_INDEX = "history_fts"  # history_search's index of the messages and outputs (and its FTS5 tables)
# context_state keeps the view's recent messages as they are sent to the model (the last rounds, not
# compacted yet): a secret in one of those is a raw copy too; one that left the view must not be there.


def _asks_summary(message: dict[str, Any]) -> bool:
    return "You compact an agent session" in str(message.get("content"))


def leaks(db: Path) -> list[tuple[str, str]]:
    """(table, secret) for each secret found in a table that must not hold one."""
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        out = []
        for table in tables:
            if table in RAW_TABLES or table.startswith(("sqlite_", RAW_INDEX)):
                continue
            text = "\n".join(repr(row) for row in conn.execute(f"SELECT * FROM {table}"))
            out += [(table, s) for s in SECRETS.values() if s in text]
        return out
    finally:
        conn.close()


@pytest.mark.parametrize("summarizer", ["extractive", "llm"])
async def test_no_secret_at_rest_outside_the_raw_tables_after_a_compaction(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, summarizer: str
) -> None:
    for k, (name, secret) in enumerate(SECRETS.items()):
        (workspace / f"env{k}.txt").write_text(f"{name}={secret}\n" + "filler line\n" * 40)
    db = tmp_path / "rest.db"
    store = await Store.open(db)
    model = "extractive" if summarizer == "extractive" else "openai/gpt-4o-mini"
    agent = await make_agent(
        store, workspace, openai_settings(emulator, summarizer_model=model), window=8_000
    )
    emulator.window = 8_000
    # An LLM summary that repeats every secret it was shown: redacted before it is stored. Summary calls
    # (no tools) may come in the background at any time: they are answered apart from the turns' script.
    said = [f"{n}={s}" for n, s in SECRETS.items()]
    fields: dict[str, Any] = {
        k: said for k in ("user_instructions", "active_tasks", "completed_actions", "errors", "decisions")
    }
    fields |= {k: said for k in ("artifacts", "files_examined", "key_facts", "tool_usage", "open_questions")}
    fields |= {"user_goal": " ".join(said), "current_state": " ".join(said), "blocked_items": said[:3]}
    summary = Reply(text=json.dumps({**fields, "next_steps": said[:5]}))
    script: list[Reply] = []

    def route(body: dict[str, Any]) -> Reply:
        # A summary request shares the turns' prefix, tools included: it is told by its instructions.
        asks_summary = any(_asks_summary(m) for m in body["messages"])
        return summary if asks_summary or not script else script.pop(0)

    emulator.default = route
    for k in range(len(SECRETS)):
        script += [Reply(tool_calls=[("bash", {"command": f"cat env{k}.txt"})]), Reply(text=f"read {k}")]
        await collect(agent, f"step {k}: read the next file")
    raw = "".join(m.text for m in await store.load_messages(agent.session_id))
    assert all(s in raw for s in SECRETS.values())  # the raw store keeps them
    await agent.session.prepare(force=True)
    assert agent.session.state.compactions >= 1
    in_view = "".join(
        str(m.content)
        for m in agent.session.state.base
        if m.meta.get("kind") != "summary" and not m.synthetic
    )
    await store.close()
    if (
        summarizer == "llm"
    ):  # the model was asked for a summary (shown every secret): what it wrote is checked
        asked = [r for r in emulator.accepted if any(_asks_summary(m) for m in r.body["messages"])]
        assert asked
    found = leaks(db)
    kept = {s for s in SECRETS.values() if s in in_view}
    assert len(kept) < len(SECRETS) // 2  # most of them left the view: the record lists them
    assert [(t, s) for t, s in found if not (t == "context_state" and s in kept)] == []
