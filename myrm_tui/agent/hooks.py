"""User hooks: shell commands run on agent events, whose output reaches the model.

Configured in the user's config file (never read from the workspace, which may be someone else's
repository)::

    [[hooks]]
    event = "post_tool_use"          # session_start | user_prompt_submit | pre_tool_use | post_tool_use
    matcher = "file_edit_tool|bash"  # tool events: regex on the tool name ("" = every tool)
    command = "ruff check --quiet ."
    timeout = 60

A hook runs in the workspace with the event as JSON on stdin (and ``MYRM_HOOK_EVENT``,
``MYRM_SESSION_ID``, ``MYRM_TOOL_NAME`` in its environment). Its combined output goes to the model:
appended to the tool result (``post_tool_use``) or as a marked context message after the user's
(``user_prompt_submit``, ``session_start``). Exit code 2 blocks: the tool does not run
(``pre_tool_use``) or the message is not sent (``user_prompt_submit``), and the output says why.
Any other failure or a timeout is reported and never blocks.

Hook-output spill: output over ``max_tokens`` (2,500) goes whole to the vault; the model gets
a head-and-tail preview with the ``vault://`` pointer (``agent/spill.py``; head truncation without
a vault).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from myrm_tui.agent.proc import run_captured
from myrm_tui.agent.spill import spill
from myrm_tui.context.filters.rules import BASE_SECONDS, user_regex
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.vault import ArtifactVault

log = logging.getLogger(__name__)

EVENTS = ("session_start", "user_prompt_submit", "pre_tool_use", "post_tool_use")
TOOL_EVENTS = ("pre_tool_use", "post_tool_use")
BLOCK_EXIT = 2
MAX_TIMEOUT = 7 * 24 * 3600.0  # as the settings' own seconds (config.MAX_SECONDS)
MAX_CAPTURE = 2_000_000  # bytes a hook's output may take in memory; more is read and counted


@dataclass(frozen=True)
class HookSpec:
    event: str
    command: str
    matcher: str = ""
    timeout: float = 60.0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HookSpec:
        event, command = str(d.get("event", "")), str(d.get("command", "")).strip()
        if event not in EVENTS:
            raise ValueError(f"hook event must be one of {', '.join(EVENTS)}, got {event!r}")
        if not command:
            raise ValueError(f"a {event} hook needs a command")
        matcher = str(d.get("matcher", ""))
        try:
            user_regex(matcher)  # a bad pattern is a configuration error, reported at start
        except ValueError as exc:
            raise ValueError(f"matcher {matcher[:60]!r}: {exc}") from None
        timeout = d.get("timeout", 60.0)
        seconds = not isinstance(timeout, bool) and isinstance(timeout, int | float)
        # guard: hooks-a-bad-timeout-is-a-skipped-hook
        if not seconds or not 0 < timeout <= MAX_TIMEOUT:
            shown = repr(timeout)[:60]
            raise ValueError(f"a {event} hook's timeout must be seconds > 0 and <= 604800, got {shown}")
        return cls(event, command, matcher, float(timeout))

    def matches(self, event: str, tool: str) -> bool:
        if self.event != event:
            return False
        if event not in TOOL_EVENTS or not self.matcher:
            return True
        try:
            # The tool name is the model's to choose: the user's pattern runs bounded on it.
            return user_regex(self.matcher).fullmatch(tool, timeout=BASE_SECONDS) is not None
        except TimeoutError:
            log.warning(
                "hook matcher %r ran over %.2f s on %r: the hook runs",
                self.matcher,
                BASE_SECONDS,
                tool[:80],
                exc_info=True,
            )
            # guard: hooks-a-stalled-matcher-runs-the-hook
            return True  # a pre_tool_use hook may be what blocks the call: when in doubt it runs


@dataclass
class HookResult:
    spec: HookSpec
    exit_code: int
    output: str  # what the model sees (a preview when spilled)
    vault_uri: str | None
    timed_out: bool

    @property
    def blocks(self) -> bool:
        return self.exit_code == BLOCK_EXIT

    @property
    def worth_showing(self) -> bool:
        """The model hears of a hook that printed something or did not succeed."""
        return bool(self.output.strip()) or self.exit_code != 0

    def render(self) -> str:
        status = "timed out" if self.timed_out else f"exit {self.exit_code}"
        return (
            f'<hook event="{self.spec.event}" command="{self.spec.command[:120]}" '
            f'status="{status}">\n{self.output}\n</hook>'
        )


class HookRunner:
    def __init__(
        self,
        specs: Sequence[HookSpec],
        workspace: Path,
        vault: ArtifactVault | None,
        counter: TokenCounter,
        session_id: str,
        max_tokens: int = 2_500,
    ) -> None:
        self.specs = list(specs)
        self.workspace = workspace
        self.vault = vault
        self.counter = counter
        self.session_id = session_id
        self.max_tokens = max_tokens

    @classmethod
    def from_settings(cls, entries: Sequence[dict[str, Any]], **kw: Any) -> tuple[HookRunner, list[str]]:
        """The runner for the valid entries, and a message for each invalid one (they are skipped)."""
        specs, problems = [], []
        for d in entries:
            try:
                specs.append(HookSpec.from_dict(d))
            except ValueError as exc:
                problems.append(f"hook skipped: {exc}")
        return cls(specs, **kw), problems

    def wants(self, event: str, tool: str = "") -> bool:
        return any(s.matches(event, tool) for s in self.specs)

    async def run(self, event: str, payload: dict[str, Any], tool: str = "") -> list[HookResult]:
        """Every matching hook in order; stops at the first that blocks. No hook for the event: ``[]``, at no
        cost."""
        if not self.wants(event, tool):
            return []
        results = []
        stdin = json.dumps(
            {"event": event, "session_id": self.session_id, "workspace": str(self.workspace), **payload},
            ensure_ascii=False,
            default=str,
        ).encode()
        env = {"MYRM_HOOK_EVENT": event, "MYRM_SESSION_ID": self.session_id, "MYRM_TOOL_NAME": tool}
        for spec in self.specs:
            if not spec.matches(event, tool):
                continue
            # a hook is the user's own program (their config), not the agent's: it gets every variable
            out = await run_captured(
                spec.command, self.workspace, spec.timeout, MAX_CAPTURE, stdin=stdin, env=env, keep_env=None
            )
            text = out.full if out.full is not None else out.text
            if out.label:
                text = f"{out.label}\n{text}"
            shown, uri = self.spill(text.rstrip("\n"), spec)
            results.append(HookResult(spec, out.code, shown, uri, out.timed_out))
            if out.code == BLOCK_EXIT:
                break
        return results

    def spill(self, text: str, spec: HookSpec) -> tuple[str, str | None]:
        """Hook-output spill: text within ``max_tokens`` as it is; over it, to the vault with a preview."""
        # guard: l6-hook-output-spiller
        if self.counter.text(text) <= self.max_tokens:
            return text, None
        return spill(
            text,
            self.vault,
            "hook_output",
            f"{spec.event} hook output",
            self.max_tokens * 2,
            reason="hook_spill",
            command=spec.command[:200],
        )
