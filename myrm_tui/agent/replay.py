"""Replay mode: a recorded conversation (corpus format) played through the real agent loop,
pipeline, store and UI. Recorded assistant turns come back from the ``replay`` provider (the same
litellm path as any model); recorded tool results are what the replay tools return."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import AgentEvent
from myrm_tui.agent.factory import build_agent
from myrm_tui.agent.tools import ToolContext, ToolResult
from myrm_tui.bench.corpus import Conversation, load_conversations
from myrm_tui.config import Settings
from myrm_tui.context.types import Message
from myrm_tui.llm import replay as provider
from myrm_tui.store.db import Store

if TYPE_CHECKING:
    from myrm_tui.agent.api import ChatSession

DEFAULT_REPLAY_WINDOW = 16_000


def parse_target(target: str) -> tuple[Path, str | None]:
    path, _, conv_id = target.partition("#")
    return Path(path), conv_id or None


def load_recording(target: str) -> Conversation:
    path, conv_id = parse_target(target)
    if not path.is_file():
        raise FileNotFoundError(f"replay file not found: {path}")
    convs = load_conversations(path, limit=None if conv_id else 1, only=conv_id)
    if not convs:
        raise KeyError(f"no conversation {conv_id!r} in {path}")
    return convs[0]


@dataclass
class RecordedTool:
    """A tool that answers with what the recording says this call returned."""

    name: str
    description: str
    parameters: dict[str, Any]
    outputs: dict[str, str]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        call_id = args.get("__call_id__", "")
        text = self.outputs.get(call_id, "[replay: no recorded output for this call]")
        return ToolResult(
            text, is_error="<returncode>0</returncode>" not in text[:40] and text.startswith("<returncode>")
        )


class Replay:
    """Owns the feed and drives the turns; events are those of ordinary turns."""

    def __init__(self, conv: Conversation, delay: float) -> None:
        self.conv = conv
        replies = deque(m for m in conv.messages if m.role == "assistant")
        self.feed = provider.ReplayFeed(replies=replies, delay=delay)
        self.model = provider.register(conv.id.replace("/", "_"), self.feed)
        self.user_turns = [m for m in conv.messages[1:] if m.role == "user"]

    async def start(self, store: Store, settings: Settings, workspace: Path) -> Agent:
        row = await store.create_session(
            title=f"[replay] {self.conv.id}", model=self.model, workspace=str(workspace)
        )
        system = next((m for m in self.conv.messages if m.role == "system"), None)
        if system is not None:
            await store.append_message(row.id, Message(role="system", content=system.content))
        s = replace(
            settings,
            model=self.model,
            api_base=None,
            approval="auto",
            summarizer_model="extractive",
            context_window=settings.context_window or DEFAULT_REPLAY_WINDOW,
            keepalive=False,
            max_steps=10_000,
            repeat_limit=0,  # a recording is replayed as it was, its repeated calls too
        )
        outputs = provider.recorded_tool_outputs(self.conv.messages)
        tools = [
            RecordedTool(
                t["function"]["name"],
                t["function"].get("description", ""),
                t["function"].get("parameters", {}),
                outputs,
            )
            for t in provider.tool_names(self.conv.messages, self.conv.tools)
        ]
        return await build_agent(store, row.id, s, workspace, tools=tools)

    async def play(self, chat: ChatSession) -> AsyncIterator[AgentEvent]:
        """The recording's user messages sent in turn, through the agent API (``Sessions.replay``)."""
        for user in self.user_turns:
            async for ev in chat.send(user.text):
                yield ev
