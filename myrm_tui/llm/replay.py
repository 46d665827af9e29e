"""Replay provider: recorded assistant turns served as model replies through the litellm path.

``myrm --replay PATH[#ID]`` registers a ``ReplayFeed`` under a model name ``replay/<key>``; each
completion request pops the next recorded assistant message and streams it (text and tool calls,
with their recorded ids). A feed can be paused and has a per-reply delay (the replay speed).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.types import Message

PROVIDER = "replay"
FEEDS: dict[str, ReplayFeed] = {}
END_OF_TURN = "[replay: the recorded agent handed the turn back to the user here]"


@dataclass
class ReplayFeed:
    replies: deque[Message] = field(default_factory=deque)
    delay: float = 0.5
    running: asyncio.Event = field(default_factory=asyncio.Event)
    held: asyncio.Event = field(default_factory=asyncio.Event)  # set while a reply waits on the pause
    served: int = 0

    def __post_init__(self) -> None:
        self.running.set()

    def next_reply(self) -> Message | None:
        return self.replies.popleft() if self.replies else None


def register(key: str, feed: ReplayFeed) -> str:
    FEEDS[key] = feed
    return f"{PROVIDER}/{key}"


async def stream_reply(model: str) -> AsyncIterator[dict[str, Any]]:
    feed = FEEDS.get(model.split("/", 1)[-1])
    if feed is None:
        raise ValueError(f"no replay registered for {model!r}")
    if feed.delay:
        await asyncio.sleep(feed.delay)
    if not feed.running.is_set():  # after the delay too: a pause stops the reply that was about to come
        feed.held.set()
        await feed.running.wait()
        feed.held.clear()
    msg = feed.next_reply()
    feed.served += 1
    text = msg.text if msg is not None else "[replay finished: no more recorded turns]"
    for i in range(0, len(text), 24):
        yield {
            "text": text[i : i + 24],
            "is_finished": False,
            "finish_reason": "",
            "usage": None,
            "index": 0,
            "tool_use": None,
        }
    for k, call in enumerate(msg.tool_calls if msg is not None else ()):
        yield {
            "text": "",
            "is_finished": False,
            "finish_reason": "",
            "usage": None,
            "index": 0,
            "tool_use": {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
                "index": k,
            },
        }
    tokens = max(1, len(text) // 4)
    yield {
        "text": "",
        "is_finished": True,
        "finish_reason": "tool_calls" if msg is not None and msg.tool_calls else "stop",
        "index": 0,
        "tool_use": None,
        "usage": {"prompt_tokens": 0, "completion_tokens": tokens, "total_tokens": tokens},
    }


def make_provider() -> Any:
    from litellm import CustomLLM

    class ReplayProvider(CustomLLM):  # type: ignore[misc]
        async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
            async for chunk in stream_reply(str(kwargs.get("model") or args[0])):
                yield chunk

    return ReplayProvider()


def recorded_tool_outputs(messages: list[Message]) -> dict[str, str]:
    """Recorded tool results by call id."""
    return {m.tool_call_id: m.text for m in messages if m.role == "tool" and m.tool_call_id}


def tool_names(messages: list[Message], tools_meta: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool schemas of the recording: its own if it has them, else minimal ones from the calls made."""
    if tools_meta:
        return tools_meta
    names = sorted({c.name for m in messages for c in m.tool_calls})
    return [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": f"recorded tool {n}",
                "parameters": {"type": "object", "properties": {}},
            },
        }
        for n in names
    ]
