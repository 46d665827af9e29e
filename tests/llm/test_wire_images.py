"""Images in the history, read off the raw bodies the emulator received: a PNG read by ``file_read_tool``,
an ``@image.png`` in the prompt, an MCP image result; the media window; models without vision."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

from myrm_tui.agent.images import image_paths_in
from myrm_tui.agent.tools.files import FileReadTool
from myrm_tui.context.steps.cache_optimize import IMAGE_STAND_IN, render
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from myrm_tui.testing.validation import validate_openai
from tests.conftest import FIXTURES
from tests.helpers import anthropic_settings, collect, make_agent, openai_settings

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000b49444154789c6360000200000500017a5eab3f0000000049454e44ae426082"
)
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def _sent(emu: ProviderEmulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.accepted if r.body.get("max_tokens") != 1]


def _image_urls(msg: dict[str, Any]) -> list[str]:
    content = msg.get("content")
    if not isinstance(content, list):
        return []
    out = []
    for p in content:
        if p.get("type") == "image_url":
            out.append(p["image_url"]["url"])
        elif p.get("type") == "image":  # Anthropic
            out.append(f"data:{p['source']['media_type']};base64,{p['source']['data']}")
        elif p.get("type") == "tool_result":
            out += _image_urls(p)
    return out


async def test_file_read_of_a_png_sends_the_image_openai(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(Reply(tool_calls=[("file_read_tool", {"paths": ["shot.png"]})]), Reply(text="a pixel"))
    await collect(agent, "look at shot.png")
    assert emulator.rejected == []
    body = _sent(emulator)[-1]
    tool = next(m for m in body["messages"] if m["role"] == "tool")
    assert isinstance(tool["content"], str) and "[image shot.png: PNG, 68 bytes]" in tool["content"]
    after = body["messages"][body["messages"].index(tool) + 1]
    assert after["role"] == "user" and _image_urls(after) == [PNG_URL]  # OpenAI: images only in user messages


async def test_file_read_of_a_png_sends_the_image_anthropic(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    agent = await make_agent(store, workspace, anthropic_settings(emulator))
    emulator.enqueue(Reply(tool_calls=[("file_read_tool", {"paths": ["shot.png"]})]), Reply(text="a pixel"))
    await collect(agent, "look at shot.png")
    assert emulator.rejected == []
    last = _sent(emulator)[-1]["messages"][-1]
    result = next(b for b in last["content"] if b["type"] == "tool_result")  # inside the tool result
    assert _image_urls(result) == [PNG_URL]


async def test_a_model_without_vision_gets_a_one_line_stand_in(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    agent = await make_agent(store, workspace, openai_settings(emulator, model="openai/gpt-3.5-turbo"))
    emulator.enqueue(Reply(tool_calls=[("file_read_tool", {"paths": ["shot.png"]})]), Reply(text="no eyes"))
    await collect(agent, "look at @shot.png")
    body = _sent(emulator)[-1]
    assert not any(_image_urls(m) for m in body["messages"])
    texts = [m["content"] for m in body["messages"] if isinstance(m.get("content"), str)]
    texts += [p["text"] for m in body["messages"] if isinstance(m.get("content"), list) for p in m["content"]]
    assert sum(IMAGE_STAND_IN in t for t in texts) == 2  # the prompt's and the tool result's
    stored = await store.load_messages(agent.session_id)
    assert any(m.has_media for m in stored)  # kept in the history for a model that can see


async def test_an_at_mention_or_a_pasted_path_attaches_the_image(
    emulator: ProviderEmulator, store: Store, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "ui.png").write_bytes(PNG)
    outside = tmp_path / "my shots" / "bug.png"
    outside.parent.mkdir()
    outside.write_bytes(PNG)
    agent = await make_agent(store, workspace, openai_settings(emulator))
    await collect(agent, f"compare @ui.png with '{outside}' please")
    user = [m for m in _sent(emulator)[-1]["messages"] if m["role"] == "user"][-1]
    assert _image_urls(user) == [PNG_URL, PNG_URL]
    assert user["content"][0] == {"type": "text", "text": f"compare @ui.png with '{outside}' please"}
    assert image_paths_in("see @missing.png and notes.txt", workspace) == []


async def test_mcp_image_results_keep_their_image(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    server = {"name": "fixture", "command": sys.executable, "args": [str(FIXTURES / "mcp_server.py")]}
    agent = await make_agent(store, workspace, openai_settings(emulator, mcp_servers=[server]))
    try:
        emulator.enqueue(Reply(tool_calls=[("mcp__fixture__screenshot", {})]), Reply(text="seen"))
        await collect(agent, "take a screenshot")
        assert emulator.rejected == []
        msgs = _sent(emulator)[-1]["messages"]
        tool = next(m for m in msgs if m["role"] == "tool")
        assert "the screen" in tool["content"] and "[image 1: image/png]" in tool["content"]
        assert _image_urls(msgs[msgs.index(tool) + 1]) == [PNG_URL]
    finally:
        await agent.close()


async def test_the_media_window_keeps_the_last_two_and_vaults_the_rest(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    for i in range(4):
        (workspace / f"s{i}.png").write_bytes(PNG[:-4] + bytes([i]) * 4)  # four different images
    agent = await make_agent(store, workspace, anthropic_settings(emulator))
    for i in range(4):
        emulator.enqueue(
            Reply(tool_calls=[("file_read_tool", {"paths": [f"s{i}.png"]})]), Reply(text=f"saw {i}")
        )
        await collect(agent, f"look at s{i}.png")
    assert emulator.rejected == []
    msgs = _sent(emulator)[-1]["messages"]
    with_images = [m for m in msgs if _image_urls(m)]
    assert len(with_images) == 2
    pointers = [
        b["content"]
        for m in msgs
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result" and "image removed from context" in str(b.get("content"))
    ]
    assert len(pointers) == 2
    uri = str(pointers[0]).split("original: ")[1].split("]")[0]
    read = await FileReadTool().run({"paths": [uri]}, agent.tool_runner.ctx)  # the vaulted image, as an image
    assert read.images and read.images[0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_openai_rejects_images_outside_user_messages_and_render_moves_them() -> None:
    view = [
        Message(role="user", content="go", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=()),
    ]
    from myrm_tui.context.types import ToolCall

    call = ToolCall("c1", "file_read_tool", "{}")
    image = {"type": "image_url", "image_url": {"url": PNG_URL}}
    view = [
        view[0],
        Message(role="assistant", content=None, id="a", tool_calls=(call,)),
        Message(role="tool", content=[{"type": "text", "text": "x"}, image], id="t", tool_call_id="c1"),
    ]
    raw = {"model": "m", "messages": [m.to_api() for m in view]}
    rej = validate_openai(raw)
    assert rej is not None and "Image URLs are only allowed for messages with role 'user'" in rej.message
    sent = render(view, "gpt-4o")
    assert validate_openai({"model": "m", **sent}) is None
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "tool", "user"]


def test_the_emulator_counts_an_image_as_a_flat_amount(emulator: ProviderEmulator) -> None:
    import httpx

    big = "data:image/png;base64," + base64.b64encode(PNG + bytes(300_000)).decode()  # 400K chars of base64
    emulator.window = 2_000
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "see"}, image_part(big)]}],
    }
    r = httpx.post(f"{emulator.openai_base}/chat/completions", json=body)
    assert r.status_code == 200 and 765 <= r.json()["usage"]["prompt_tokens"] < 800


def image_part(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}
