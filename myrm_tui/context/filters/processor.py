"""``FilterProcessor`` (the pipeline's Smart Filter step): L1 shell compressors and YAML rules, L2
structural/semantic filters, L3 the budget guard — applied once to each new tool output.

Decisions are sticky: a message is filtered the first time it enters the view and looks the same in
every later request, so filtering never breaks the provider's prefix cache. Every filtered original
is kept in the vault and the shortened text says where.
"""

from __future__ import annotations

from pathlib import Path

from myrm_tui.context.budget_guard import ContextBudgetGuard
from myrm_tui.context.filters.rules import RuleEngine
from myrm_tui.context.filters.shell import compress_shell, strip_ansi
from myrm_tui.context.filters.structural import structural_extract
from myrm_tui.context.ledger import condense
from myrm_tui.context.processor import PipelineContext
from myrm_tui.context.signals import COMMAND_TOOLS, command_of
from myrm_tui.context.trimming import head_tail, pointer_note
from myrm_tui.context.types import Message, ToolCall

SEMANTIC_PROMPT = "semantic_filter.md"


class FilterProcessor:
    name = "smart_filter"

    def __init__(self, rules: RuleEngine | None = None, prompts_dir: Path | None = None) -> None:
        self.rules = rules or RuleEngine()
        self.prompts_dir = prompts_dir

    async def process(self, view: list[Message], ctx: PipelineContext) -> list[Message]:
        decisions = ctx.state.decisions
        calls: dict[str, ToolCall] = {}
        out = list(view)
        guard = ContextBudgetGuard(ctx.config)
        running = ctx.counter.messages(view[: ctx.new_start])
        step_tokens = 0
        for i in range(ctx.new_start, len(view)):
            m = view[i]
            if m.role == "assistant":
                step_tokens = 0
                for c in m.tool_calls:
                    calls[c.id] = c
            if m.role != "tool":
                running += ctx.counter.message(m)
                continue
            decided = decisions.get(m.id)
            if decided is None:
                if (
                    ctx.resume
                    and ctx.state.last_request_at
                    and (m.created_at or 0) <= ctx.state.last_request_at
                ):
                    decided = m  # already sent as it is; re-filtering would only break the cache
                else:
                    call = calls.get(m.tool_call_id or "")
                    decided = await self._filter(
                        m, call, ctx, guard, ctx.config.input_budget - running, step_tokens
                    )
                decisions[m.id] = decided
            out[i] = decided
            n = ctx.counter.message(decided)
            running += n
            step_tokens += n
        return out

    async def _filter(
        self,
        m: Message,
        call: ToolCall | None,
        ctx: PipelineContext,
        guard: ContextBudgetGuard,
        remaining: int,
        step_tokens: int,
    ) -> Message:
        tool = call.name if call else (m.name or "")
        text = m.text
        c = ctx.config
        if tool in c.exempt_tools or not text or isinstance(m.content, list):
            return m
        how, new = "", text
        # L1 — shell output
        if tool in COMMAND_TOOLS and call is not None and len(text) >= c.shell_compress_min_chars:
            header, body, footer = _split_header(text)
            command = command_of(call)
            body = strip_ansi(body)  # the original, colours and all, stays in the vault
            hit = self.rules.apply(command, body) or compress_shell(command, body)
            if hit:
                how, new = f"compressed ({hit[0]})", header + hit[1] + footer
        # L2 — large single output, or a large turn
        tokens = ctx.counter.text(new)
        if tokens > c.filter_single_tokens or step_tokens + tokens > c.filter_turn_tokens:
            header, body, footer = _split_header(new)
            st = structural_extract(body, (c.json_max_depth, c.json_max_keys, c.json_max_items))
            if st is not None:
                how, new = f"structural ({st[0]})", header + st[1] + footer
            else:
                summary = await self._semantic(body, tool, ctx)
                if summary is not None:
                    how, new = "semantic summary", header + summary + footer
                else:
                    how = "head+tail"
                    new = (
                        header
                        + condense(body, c.head_lines, c.tail_lines, max_chars=c.filter_single_tokens * 2)
                        + footer
                    )
        # L3 — hard safety net, adaptive to what is left of the budget
        g = guard.guard(new, tool, remaining, ctx.vault)
        if g is not None:
            new, how = g.text, g.how if not how else f"{how}; {g.how}"
            uri = ctx.vault.put(text, "tool_output", tool, reason="filter")
        elif how:
            uri = ctx.vault.put(text, "tool_output", tool, reason="filter")
            new = new + pointer_note(uri, how, len(text), len(new))
        else:
            return m
        if len(new) >= len(text):
            return m
        layer = "budget_guard" if g is not None and how.startswith(g.how) else self.name
        saved = ctx.counter.text(text) - ctx.counter.text(new)
        ctx.metrics.add_removed(layer, saved)
        ctx.metrics.vaulted[layer] = ctx.metrics.vaulted.get(layer, 0) + len(text)
        return m.derive("filtered", content=new, meta={**m.meta, "vault_uri": uri, "filter": how})

    async def _semantic(self, body: str, tool: str, ctx: PipelineContext) -> str | None:
        """``SemanticFilter``: an aux-LLM summary of unstructured output, when an aux LLM is available."""
        if ctx.summarizer is None or self.prompts_dir is None:
            return None
        prompt_file = self.prompts_dir / SEMANTIC_PROMPT
        if not prompt_file.is_file():
            return None
        system = prompt_file.read_text(encoding="utf-8")
        excerpt = head_tail(body, 400, 200, max_chars=60_000)
        try:
            summary = await ctx.summarizer(system, f"Tool: {tool}\n\n{excerpt}")
        except Exception as exc:
            ctx.metrics.events.append(f"semantic filter failed: {type(exc).__name__}")
            return None
        return summary.strip() or None


def _split_header(text: str) -> tuple[str, str, str]:
    """(header, body, footer): the ``<returncode>``/``<output>`` wrapper stays out of what filters shorten."""
    if not text.startswith("<returncode>"):
        return "", text, ""
    end = text.find("\n")
    if end < 0:
        return "", text, ""
    head, rest = text[: end + 1], text[end + 1 :]
    if rest.startswith("<output>\n"):
        head, rest = head + "<output>\n", rest[len("<output>\n") :]
    footer = ""
    stripped = rest.rstrip()
    if stripped.endswith("</output>"):
        rest = stripped[: -len("</output>")].rstrip("\n")
        footer = "\n</output>"
    return head, rest, footer
