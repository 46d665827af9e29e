"""Small items of the wire issue: no session left by a refused first message, the aux ratio shield's warning
shown once (agent events, ``ask``'s stderr), the ``cache_ttl_seconds`` / thinking settings."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from myrm_tui.agent.events import Notice
from myrm_tui.config import ConfigError, resolve
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator
from tests.cli.test_cli import _myrm
from tests.helpers import collect, conversation, make_agent, openai_settings, started

# A model of litellm's registry with a 512-token window: too small for any summary input, so the ratio
# shield always hands the summary to the main model (the small model itself is never called).
SMALL_AUX = "watsonx/ibm/granite-ttm-512-96-r2"


def _base(emulator: ProviderEmulator, workspace: Path) -> list[str]:
    return [
        "--model",
        "openai/gpt-4o-mini",
        "--api-base",
        emulator.openai_base,
        "--workspace",
        str(workspace),
    ]


def test_a_refused_first_message_leaves_no_session(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    env = {"OPENAI_API_KEY": "sk-test", "MYRM_MAX_USER_TOKENS": "50"}
    proc = _myrm(["ask", "word " * 200, *_base(emulator, workspace)], tmp_path, env_extra=env)
    assert proc.returncode == 1 and "Message refused before sending" in proc.stderr
    assert "[session " not in proc.stderr and emulator.requests == []
    listing = _myrm(["sessions"], tmp_path)
    assert "word" not in listing.stdout  # no row titled with the refused text
    ok = _myrm(["ask", "short one", *_base(emulator, workspace)], tmp_path, env_extra=env)
    assert ok.returncode == 0 and "short one" in _myrm(["sessions"], tmp_path).stdout


async def _seed(db: Path, workspace: Path, turns: int = 24) -> str:
    """A session whose history (~64K tokens at 24 turns) compacts in a 48K window."""
    store = await Store.open(db)
    try:
        row = await store.create_session(model="openai/gpt-4o-mini", workspace=str(workspace))
        for m in conversation(turns, output_chars=6_000):
            await store.append_message(row.id, m)
        return row.id
    finally:
        await store.close()


async def _seed_prose(db: Path, workspace: Path) -> str:
    store = await Store.open(db)
    try:
        row = await store.create_session(model="openai/gpt-4o-mini", workspace=str(workspace))
        await store.append_message(row.id, Message(role="system", content="You are a test agent."))
        for i in range(10):
            words = " ".join(f"requirement{i}_{k} holds" for k in range(800))
            await store.append_message(row.id, Message(role="user", content=f"Part {i}: {words}"))
            await store.append_message(row.id, Message(role="assistant", content=f"Noted part {i}."))
        return row.id
    finally:
        await store.close()


async def test_the_ratio_shield_warning_is_a_notice_once(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    settings = openai_settings(emulator, summarizer_model=SMALL_AUX, context_window=48_000)
    agent = await make_agent(store, workspace, settings)
    for m in conversation(24, output_chars=6_000):
        await agent.session.append(m)
    await agent.compact_now()
    events = await collect(agent, "go on")
    shown = [e.text for e in events if isinstance(e, Notice) and SMALL_AUX in e.text]
    assert len(shown) == 1 and "too small" in shown[0]
    for m in conversation(24, output_chars=6_000, prefix="d"):
        await agent.session.append(m)
    await agent.compact_now()
    assert agent.session.aux is not None and agent.session.aux.last_model == "openai/gpt-4o-mini"  # shielded
    events = await collect(agent, "and again")
    assert not [e for e in events if isinstance(e, Notice) and SMALL_AUX in e.text]  # once a session


def test_ask_prints_the_ratio_shield_warning_on_stderr(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    # About half the window: no compaction yet, but the summary of the older messages is prepared in the
    # background after the first request, and that is when the summarizer is chosen.
    sid = asyncio.run(_seed(tmp_path / "cli.db", workspace, turns=9))
    env = {
        "OPENAI_API_KEY": "sk-test",
        "MYRM_SUMMARIZER_MODEL": SMALL_AUX,
        "MYRM_CONTEXT_WINDOW": "48000",
    }
    proc = _myrm(["ask", "summarise", "--session", sid, *_base(emulator, workspace)], tmp_path, env_extra=env)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if SMALL_AUX in ln]
    assert len(lines) == 1 and lines[0].startswith("[warning] The summarizer") and "too small" in lines[0]


def test_cache_ttl_and_thinking_settings_are_checked() -> None:
    s = resolve(
        {"cache_ttl_seconds": 600, "thinking_budget_tokens": 2048, "reasoning_effort": "high"}, {}, {}, env={}
    )
    assert (s.cache_ttl_seconds, s.thinking_budget_tokens, s.reasoning_effort) == (600, 2048, "high")
    with pytest.raises(ConfigError, match="thinking_budget_tokens: expected an integer"):
        resolve({"thinking_budget_tokens": 100}, {}, {}, env={})
    with pytest.raises(ConfigError, match="cache_ttl_seconds: expected a number of seconds"):
        resolve({}, {}, {}, env={"MYRM_CACHE_TTL_SECONDS": "soon"})
    with pytest.raises(ConfigError, match="reasoning_effort: expected one of"):
        resolve({"reasoning_effort": "max"}, {}, {}, env={})


async def test_cache_ttl_seconds_reaches_the_ttl_prune(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator, cache_ttl_seconds=90))
    assert agent.session.config.cache_ttl_seconds == 90
    assert os.environ.get("MYRM_CACHE_TTL_SECONDS") is None


async def test_the_tui_shows_the_ratio_shield_warning_once(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from textual.widgets import Static

    from myrm_tui.app.app import MyrmApp
    from myrm_tui.app.widgets.chat_message import AssistantMessage
    from myrm_tui.app.widgets.chat_message import Notice as NoticeWidget
    from tests.helpers import type_and_send, wait_until

    sid = await _seed(tmp_path / "tui.db", workspace)
    cli = {
        "model": "openai/gpt-4o-mini",
        "api_base": emulator.openai_base,
        "api_key": "sk-test",
        "approval": "auto",
        "summarizer_model": SMALL_AUX,
        "context_window": 48_000,
    }
    app = MyrmApp(db_path=tmp_path / "tui.db", workspace=workspace, cli=cli, session_id=sid)

    def shield_notices() -> list[str]:
        texts = [str(Static.render(w)) for w in app.query(NoticeWidget)]
        return [t for t in texts if SMALL_AUX in t]

    async with started(app, size=(120, 40)) as pilot:
        await type_and_send(pilot, "go on")
        await wait_until(pilot, lambda: not app.busy and bool(shield_notices()), timeout=60)
        # The newest answer, not how many are mounted: a live transcript unmounts its oldest items.
        before = app.query(AssistantMessage).last()
        await type_and_send(pilot, "and more")
        await wait_until(
            pilot, lambda: not app.busy and app.query(AssistantMessage).last() is not before, timeout=60
        )
        assert len(shield_notices()) == 1 and "too small" in shield_notices()[0]
