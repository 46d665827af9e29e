"""What ``prompt_cache_key`` does for a session with a subagent, measured on the emulator in its
key-only cache mode (an endpoint taken for native OpenAI): requests, how many carry the root session's
key, input and cached tokens. ``python bench/explore/wire_cache_key.py [--without-body-key]``: the flag
sends the key as a plain litellm argument again (as before the fix), which litellm drops."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from myrm_tui.context.steps import cache_optimize
from myrm_tui.llm import client
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings


async def measure(body_key: bool) -> str:
    cache_optimize.is_native_openai = lambda model, api_base: True  # type: ignore[assignment]
    if not body_key:
        client._to_body = lambda kwargs: None  # type: ignore[assignment]
    emu = ProviderEmulator().start()
    emu.openai_cache_by = "key"
    tmp = Path(tempfile.mkdtemp())
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("\n".join(f"line {i}: value_{i} = {i * 7}" for i in range(600)))
    store = await Store.open(tmp / "t.db")
    agent = await make_agent(store, ws, openai_settings(emu))
    try:
        for t in range(3):
            lines = f"{t * 100 + 1}:{t * 100 + 200}"
            emu.enqueue(
                Reply(tool_calls=[("file_read_tool", {"paths": ["big.txt"], "line_range": lines})]),
                Reply(tool_calls=[("subagent", {"task": "count the lines of big.txt"})]),
                Reply(tool_calls=[("bash", {"command": "wc -l big.txt"})]),
                Reply(text="600"),
                Reply(text=f"done {t}"),
            )
            await collect(agent, f"step {t}")
        reqs = [r for r in emu.accepted if r.body.get("max_tokens") != 1 and r.cache is not None]
        keyed = sum(1 for r in reqs if r.body.get("prompt_cache_key") == agent.session_id)
        total = sum(r.cache.input_tokens for r in reqs if r.cache)
        cached = sum(r.cache.cached_tokens for r in reqs if r.cache)
        return (
            f"{len(reqs)} requests, {keyed} with the root session's key; input {total:,} tokens, "
            f"cached {cached:,} ({cached / max(total, 1):.3f})"
        )
    finally:
        await agent.close()
        await store.close()
        emu.stop()


if __name__ == "__main__":
    print(asyncio.run(measure("--without-body-key" not in sys.argv[1:])))
