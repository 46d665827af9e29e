"""System prompts from ``prompts/``: five modes, XML-tagged rule blocks, per-model discipline.

Every prompt is assembled once and cached by its parameters, so the same (mode, family) always
returns the identical string object: the system prompt never changes inside a session and is the
same across sessions, which is what prefix caches reward. Dynamic facts (date, workspace) go into a
separate user-role environment message, never into the system prompt.
"""

from __future__ import annotations

import platform
import time
from functools import cache
from pathlib import Path

from myrm_tui.context.model_facts import family, supports_tools
from myrm_tui.context.types import Message, synthetic_user
from myrm_tui.paths import files_fingerprint
from myrm_tui.safe_files import workspace_head

MODES = ("full", "lean", "naked", "search", "chat")
# ``chat``: the smallest prompt, for a model that gets no tools (the embedded 135M model): every
# prompt token is prefill time on a 2-core CPU before the first token appears.
_RULES_BY_MODE: dict[str, tuple[str, ...]] = {
    "full": (
        "agent_behavior_rules",
        "tool_use_enforcement",
        "response_rules",
        "security_rules",
        "task_integrity",
        "memory_rules",
        "escalation_contract",
        "tool_guidance",
    ),
    "lean": ("security_rules", "task_integrity", "tool_guidance"),
    "naked": ("security_rules", "tool_guidance"),
    "chat": ("security_rules",),
}
_DISCIPLINE = {
    "openai": "openai",
    "gemini": "gemini",
    "anthropic": "anthropic",
    "deepseek": "deepseek",
    "qwen": "deepseek",
}
WORKSPACE_RULE_FILES = ("AGENTS.md", "MYRM.md", "CLAUDE.md")
MAX_RULES_CHARS = 20_000


def mode_for(mode: str, model: str, api_base: str | None = None) -> str:
    """The prompt mode in force: the settings' mode, except that a model which gets no tools gets ``chat``
    instead of the default ``full`` (rules about tools it cannot call would only lengthen its prefill)."""
    return "chat" if mode == "full" and not supports_tools(model, api_base) else mode


class PromptLibrary:
    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, name: str) -> str:
        return (self.root / name).read_text(encoding="utf-8").strip()

    def system_prompt(self, mode: str, model: str) -> str:
        if mode not in MODES:
            raise ValueError(f"prompt mode must be one of {', '.join(MODES)}, got {mode!r}")
        # The version key makes an edited prompt file produce a new string; unchanged files keep
        # returning the identical (cached) object.
        return _build(str(self.root), mode, _DISCIPLINE.get(family(model), ""), files_fingerprint(self.root))

    def environment_message(self, workspace: Path, now: float | None = None) -> Message:
        rules = ""
        for name in WORKSPACE_RULE_FILES:
            # A cloned repository's file, sent to the provider unasked: not where a link leads out of the
            # workspace (git stores links: AGENTS.md -> ~/.ssh/id_ed25519), not a FIFO, not gigabytes.
            head = workspace_head(workspace, name, MAX_RULES_CHARS * 4)
            if head is not None:
                text = head.decode("utf-8", errors="replace")[:MAX_RULES_CHARS]
                rules = f'<user_instructions source="{name}">\n{text}\n</user_instructions>'
                break
        body = self.read("environment.md").format(
            workspace=workspace,
            date=time.strftime("%Y-%m-%d", time.localtime(now)),
            platform=f"{platform.system()} {platform.machine()}",
            workspace_rules=rules,
        )
        return synthetic_user(
            f"<workspace_context>\n{body}\n</workspace_context>", "environment", "environment"
        )


@cache
def _build(root: str, mode: str, discipline: str, version: str) -> str:
    lib = PromptLibrary(Path(root))
    if mode == "search":
        return f"<ruleset>\n<identity>\n{lib.read('search.md')}\n</identity>\n</ruleset>"
    parts = []
    if mode == "chat":
        parts.append(f"<identity>\n{lib.read('chat.md')}\n</identity>")
    elif mode != "naked":
        parts.append(f"<identity>\n{lib.read('identity.md')}\n</identity>")
    for rule in _RULES_BY_MODE[mode]:
        parts.append(f"<{rule}>\n{lib.read(f'rules/{rule}.md')}\n</{rule}>")
    if discipline and mode == "full":
        parts.append(
            f"<execution_discipline>\n{lib.read(f'discipline/{discipline}.md')}\n</execution_discipline>"
        )
    return "<ruleset>\n" + "\n".join(parts) + "\n</ruleset>"
