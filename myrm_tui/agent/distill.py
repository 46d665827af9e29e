"""Subagent result distillation, three tiers, so a child's output never floods the parent's context.

- Tier 1 ``truncate_result``: hard limit by ``max_result_tokens`` (the last line of defence).
- Tier 2 ``auto_vault_or_truncate``: output over 8,000 chars goes to the vault; the parent gets head
  and tail, the ``vault://`` pointer and the hint to read it with ``file_read_tool`` and a line range.
  Without a vault, it falls back to Tier 1.
- Tier 3 ``AgentHandoverState``: completed tasks, pending todos, risks and relevant files, extracted
  from the child's transcript and kept apart from the raw result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.text.trimming import head_tail
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault

VAULT_CHARS = 8_000


@dataclass
class AgentHandoverState:
    task: str
    completed_tasks: list[str] = field(default_factory=list)
    pending_todos: list[str] = field(default_factory=list)
    risks: list[str] = field(default_factory=list)
    relevant_files: list[str] = field(default_factory=list)

    @classmethod
    def extract(cls, task: str, transcript: Sequence[Message]) -> AgentHandoverState:
        s = summary_model.extract(transcript, task)
        files = [a.split(": ", 1)[-1] for a in s.artifacts] + list(s.files_examined)
        done = [a for a in s.completed_actions if a.endswith(("exit code 0", "ok"))]
        return cls(
            task=task,
            completed_tasks=done[-10:],
            pending_todos=list(s.next_steps),
            risks=list(s.blocked_items) + list(s.errors[-3:]),
            relevant_files=list(dict.fromkeys(files))[:20],
        )

    def render(self) -> str:
        parts = [f'<handover task="{self.task[:80]}">']
        for name in ("completed_tasks", "pending_todos", "risks", "relevant_files"):
            items = getattr(self, name)
            if items:
                parts.append(f"{name.replace('_', ' ')}: " + "; ".join(items))
        parts.append("</handover>")
        return "\n".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def truncate_result(text: str, max_result_tokens: int, counter: TokenCounter) -> str:
    if counter.text(text) <= max_result_tokens:
        return text
    chars = max_result_tokens * 3
    out = head_tail(text, 10**6, 10**6, max_chars=chars)
    while counter.text(out) > max_result_tokens and chars > 200:  # dense text has fewer chars a token
        chars = int(chars * 0.7)
        out = head_tail(text, 10**6, 10**6, max_chars=chars)
    return out


def auto_vault_or_truncate(
    text: str, vault: ArtifactVault | None, max_result_tokens: int, counter: TokenCounter, **meta: Any
) -> tuple[str, str | None]:
    """(what the parent sees, vault URI or None)."""
    # guard: l2-subagent-auto-vault
    if len(text) <= VAULT_CHARS:
        return truncate_result(text, max_result_tokens, counter), None
    if vault is None:
        return truncate_result(text, max_result_tokens, counter), None
    uri = vault.put(text, "subagent", "subagent", **meta)
    preview = head_tail(text, 25, 25, max_chars=min(VAULT_CHARS // 2, max_result_tokens * 3))
    hint = (
        f"\n[subagent output: {len(text):,} chars, {len(text.splitlines()):,} lines, stored at "
        f"{uri}. Read any part with "
        f'file_read_tool(paths=["{uri}"], line_range="1:200")]'
    )
    return truncate_result(preview, max_result_tokens, counter) + hint, uri
