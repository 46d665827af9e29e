"""``ContextBudgetGuard``: the hard safety net for one oversized tool output.

Outputs over ``budget_guard_chars`` — or over what the remaining budget can afford (predictive
overflow protection: the fuller the window, the harder the cut) — are stored whole in the vault
and replaced by a structure-aware extract plus a ``vault://`` pointer. File read/edit tools are
exempt: cutting what the agent explicitly asked to read only makes it read again.
"""

from __future__ import annotations

from dataclasses import dataclass

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.text.trimming import head_tail, pointer_note, trim_json_text
from myrm_tui.context.vault import ArtifactVault

MIN_AFFORDABLE_CHARS = 4_000
CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class GuardResult:
    text: str
    uri: str
    how: str


class ContextBudgetGuard:
    def __init__(self, config: ContextConfig) -> None:
        self.config = config

    def affordable_chars(self, remaining_tokens: int) -> int:
        """At most half of what is left of the budget goes to one output; never less than a tenth of the
        budget (at most ``MIN_AFFORDABLE_CHARS``), so a small window is not filled by one output."""
        floor = min(MIN_AFFORDABLE_CHARS, max(800, self.config.input_budget * CHARS_PER_TOKEN // 10))
        return max(floor, remaining_tokens * CHARS_PER_TOKEN // 2)

    def limit(self, remaining_tokens: int) -> int:
        return min(self.config.budget_guard_chars, self.affordable_chars(remaining_tokens))

    def guard(
        self, text: str, tool_name: str, remaining_tokens: int, vault: ArtifactVault
    ) -> GuardResult | None:
        if tool_name in self.config.exempt_tools:
            return None
        limit = self.limit(remaining_tokens)
        if len(text) <= limit:
            return None
        uri = vault.put(text, "tool_output", tool_name, reason="budget_guard")
        c = self.config
        extract = trim_json_text(text, c.json_max_depth, c.json_max_keys, c.json_max_items)
        how = "JSON skeleton (budget guard)"
        if extract is None or len(extract) > limit:
            extract = head_tail(text, c.head_lines, c.tail_lines, max_chars=max(limit - 300, 1000))
            how = "head+tail (budget guard)"
        return GuardResult(extract + pointer_note(uri, how, len(text), len(extract)), uri, how)
