"""Post-compaction reread, with the ``ArtifactTracker`` and ``FileIntegrityGuard``.

The tracker (state in ``ContextState.artifacts``) records files the agent created or modified.
Right after a summary, the five most recently touched files are read again (at most 50K tokens in
all) and injected as one marked user-role message, so the agent works from current contents, not
from pre-compaction snapshots. The paths are registered with the integrity guard, which otherwise
would report them as "modified since last read".
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from myrm_tui.context.state import ContextState
from myrm_tui.context.step import Configured, Reread, Rewritten, View
from myrm_tui.context.text import signals
from myrm_tui.context.types import Message, synthetic_user


class ArtifactTracker:
    """Feeds ``ContextState.artifacts`` from tool calls; idempotent per call id."""

    def __init__(self, state: ContextState) -> None:
        self.state = state

    def observe(self, messages: Sequence[Message]) -> None:
        for m in messages:
            for c in m.tool_calls:
                for path, op in signals.written_files(c):
                    self.state.touch_artifact(path, op)

    def recent(self, n: int) -> list[str]:
        return self.state.recent_artifacts(n)


class FileIntegrityGuard:
    """Remembers the content hash of each file as the agent last saw it."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    @staticmethod
    def digest(content: str) -> str:
        return hashlib.blake2b(content.encode("utf-8", "replace"), digest_size=16).hexdigest()

    def record(self, path: str, content: str) -> None:
        self._seen[path] = self.digest(content)

    def changed_since_read(self, path: str, current: str) -> bool:
        """True when the agent read ``path`` before and it changed since (someone else edited it)."""
        seen = self._seen.get(path)
        return seen is not None and seen != self.digest(current)

    def known(self, path: str) -> bool:
        return path in self._seen


@dataclass(frozen=True, slots=True)
class RereadSettings:
    reread_files: int
    reread_budget_tokens: int  # the smaller of reread_max_tokens and the re-read files' share of the window


class PostCompactionReread(Configured[RereadSettings]):
    """Files re-read go to the integrity guard when the compaction commits (``Reread.files``)."""

    name = "post_compaction_reread"
    Settings = RereadSettings

    async def run(self, v: View, s: RereadSettings) -> Reread | Rewritten:
        req, view = v.request, v.messages
        if not (v.compacting and v.folded and req.read_file):
            return Rewritten(messages=view)
        budget = s.reread_budget_tokens
        blocks: list[str] = []
        files: list[tuple[str, str]] = []
        for path in req.state.recent_artifacts(s.reread_files):
            content = req.read_file(path)
            if content is None:
                continue
            n = req.counter.text(content)
            if n > budget:
                continue
            budget -= n
            blocks.append(f'<file path="{path}">\n{content}\n</file>')
            files.append((path, content))
        if not blocks:
            return Rewritten(messages=view)
        # Numbered like the summary block this compaction wrote (the Transaction counts it on commit).
        number = req.state.compactions + (1 if v.summary is not None else 0)
        msg = synthetic_user(
            "Current contents of the files you changed most recently (re-read after compaction):\n"
            + "\n".join(blocks),
            f"reread-{number}",
            "reread",
        )
        at = len(req.protected_head)
        while at < len(view) and view[at].synthetic:
            at += 1
        return Reread(messages=[*view[:at], msg, *view[at:]], files=tuple(files))
