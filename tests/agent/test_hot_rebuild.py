"""Hot rebuild: the execution fingerprint, watchfiles on prompts/, session titles."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from pathlib import Path

import pytest

from myrm_tui.agent.fingerprint import compute_execution_fingerprint, execution_parameters
from myrm_tui.agent.title import local_title, make_title, strip_for_title
from myrm_tui.app.controller import Controller
from myrm_tui.config import Settings
from myrm_tui.paths import prompts_dir
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, openai_settings


def test_fingerprint_covers_thirty_plus_parameters_and_changes_with_each() -> None:
    s = Settings(model="gpt-4o")
    params = execution_parameters(s, 128_000)
    assert len(params) >= 30
    base = compute_execution_fingerprint(s, 128_000)
    assert base == compute_execution_fingerprint(Settings(model="gpt-4o"), 128_000)
    for changed in (
        Settings(model="gpt-4.1"),
        Settings(model="gpt-4o", prompt_mode="lean"),
        Settings(model="gpt-4o", full_ratio=0.6),
        Settings(model="gpt-4o", approval="auto"),
    ):
        assert compute_execution_fingerprint(changed, 128_000) != base
    assert compute_execution_fingerprint(s, 64_000) != base
    assert compute_execution_fingerprint(s, 128_000, "prompts-v2") != base


async def test_editing_a_prompt_file_rebuilds_the_agent_with_the_new_prompt(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts = tmp_path / "prompts"
    shutil.copytree(prompts_dir(), prompts)
    monkeypatch.setenv("MYRM_PROMPTS_DIR", str(prompts))
    c = Controller(
        tmp_path / "c.db",
        workspace,
        {
            "model": "openai/gpt-4o-mini",
            "api_base": emulator.openai_base,
            "api_key": "sk-test",
            "approval": "auto",
            "summarizer_model": "extractive",
        },
    )
    await c.open()
    await c.open_session(None)
    agent = await c.ensure_agent()
    emulator.enqueue(Reply(text="one"), Reply(text="two"))
    await collect(agent, "first")
    seen: list[list[str]] = []
    stop = asyncio.Event()

    async def on_change(paths: list[str]) -> None:
        seen.append(paths)
        stop.set()

    watcher = asyncio.ensure_future(c.watch_files(on_change, stop))
    # The watcher has no "started" signal: write until it reports the change (an edit made before it
    # is watching is not seen), so the test waits on the event itself, however slow the machine.
    for n in range(100):
        (prompts / "identity.md").write_text(f"You are myrm, EDITED IDENTITY for this test. ({n})")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(watcher), 0.5)
        if watcher.done():
            break
    await asyncio.wait_for(watcher, 10)
    assert seen and any(p.endswith("identity.md") for p in seen[0])
    rebuilt = await c.ensure_agent()
    assert rebuilt is not agent and c.cache.rebuilds == 1
    await collect(rebuilt, "second")
    system = emulator.accepted[-1].body["messages"][0]["content"]
    assert "EDITED IDENTITY" in system
    assert (
        rebuilt.session.state.cache_breaks.get("system_changed") == 1
    )  # the break detector saw why the cache missed
    await c.close()


def test_title_stripping_and_local_fallback() -> None:
    assert strip_for_title("```py\nprint(1)\n``` see https://x.y/z <b>now</b>") == "see now"
    assert local_title("```\nonly code\n```") == "Snippet"
    assert (
        local_title("Please fix the flaky test in the parser module today") == "Please fix the flaky test in…"
    )


async def test_title_with_an_llm_and_without(emulator: ProviderEmulator) -> None:
    from myrm_tui.llm.client import LLMClient, ModelSpec

    emulator.enqueue(Reply(text="Parser flaky test fix"))
    spec = ModelSpec("openai/gpt-4o-mini", api_base=emulator.openai_base, api_key="sk-test")
    assert await make_title("fix the flaky parser test", LLMClient(), spec, "title it") == (
        "Parser flaky test fix",
        True,
    )
    before = len(emulator.requests)
    assert await make_title("```\ncode only\n```", LLMClient(), spec, "title it") == ("Snippet", False)
    assert len(emulator.requests) == before  # zero tokens spent


def test_fingerprint_covers_the_tool_schemas_the_builder_binds() -> None:
    from myrm_tui.agent.fingerprint import builtin_tool_schemas, tools_fingerprint

    s = Settings(model="gpt-4o")
    assert execution_parameters(s, 128_000)["tools"] == tools_fingerprint(builtin_tool_schemas())
    fewer = builtin_tool_schemas()[:-1]
    assert compute_execution_fingerprint(s, 128_000, tool_schemas=fewer) != compute_execution_fingerprint(
        s, 128_000
    )


async def test_a_changed_tool_set_rebuilds_the_agent(
    emulator: ProviderEmulator, store: Store, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from myrm_tui.agent.factory import build_agent
    from myrm_tui.agent.fingerprint import builtin_tool_schemas
    from myrm_tui.agent.hot_rebuild import ChatAgentExecutionCache
    from myrm_tui.agent.tools.search import GrepTool

    row = await store.create_session(workspace=str(workspace))
    cache = ChatAgentExecutionCache(lambda s, jobs: build_agent(store, row.id, s, workspace, jobs=jobs))
    settings = openai_settings(emulator)
    first = await cache.get(settings, 128_000)
    # The fingerprint covers exactly what is bound.
    assert first.tool_runner.tools.schemas == builtin_tool_schemas()
    assert await cache.get(settings, 128_000) is first and cache.rebuilds == 0
    monkeypatch.setattr(GrepTool, "description", "Search the workspace (a changed tool schema).")
    second = await cache.get(settings, 128_000)
    assert second is not first and cache.rebuilds == 1
    assert second.tool_runner.tools.fingerprint != first.tool_runner.tools.fingerprint
    assert "Search the workspace (a changed tool schema)." in [
        t["function"]["description"] for t in second.tool_runner.tools.schemas
    ]
    await cache.clear()


async def test_two_readies_at_once_build_one_agent(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """An editor's request while the build ``session/new`` started was running built a second agent; the
    first was never closed (its MCP servers and keep-alive ran on)."""
    from myrm_tui.agent.api import Sessions

    store = await Store.open(tmp_path / "r.db")
    try:
        chat = await Sessions(store, workspace).start(openai_settings(emulator))
        first, second = await asyncio.gather(chat.ready(), chat.ready())
        assert first is second and chat.cache.rebuilds == 0
        await chat.close()
    finally:
        await store.close()
