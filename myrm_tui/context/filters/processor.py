"""``FilterProcessor`` (Smart Filter): shell compressors and YAML rules, then structural/semantic
filters, then the budget guard (``ContextBudgetGuard``) — applied once to
each new tool output. The shell compressors, the rules and a JSON skeleton run on every large output, and
the lossy cuts (another format's extract, a summary, head and tail, a numbered file view's fact lines) on
every large one that is not prose; prose (a report, an explanation) is cut only where it would crowd the
view (``room.py``), and the budget guard cuts wherever the budget cannot afford it.

Decisions are sticky: a message is filtered the first time it enters the view and looks the same in
every later request, so filtering never breaks the provider's prefix cache. Every filtered original
is kept in the vault and the shortened text says where.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.filters.budget_guard import ContextBudgetGuard
from myrm_tui.context.filters.room import crowds, is_prose
from myrm_tui.context.filters.rules import RuleEngine
from myrm_tui.context.filters.shell import compress_shell, strip_ansi
from myrm_tui.context.filters.structural import structural_extract
from myrm_tui.context.step import Request, Rewritten, Trace, View, settings_for
from myrm_tui.context.steps.precompact import PreCompactSettings, band_for, landed_tokens
from myrm_tui.context.summary.ledger import condense
from myrm_tui.context.text.referred import as_numbered_view, file_view_cut, is_file_view, with_arrows
from myrm_tui.context.text.signals import COMMAND_TOOLS, command_of
from myrm_tui.context.text.trimming import head_tail, pointer_note
from myrm_tui.context.types import Message, ToolCall

log = logging.getLogger(__name__)

SEMANTIC_PROMPT = "semantic_filter.md"
DATA_FORMATS = frozenset({"json"})  # its skeleton keeps every key and the first items: shortened, not cut


@dataclass(frozen=True, slots=True)
class FilterSettings:
    input_budget: int
    exempt_tools: frozenset[str]
    shell_compress_min_chars: int
    filter_single_tokens: int
    filter_turn_tokens: int
    semantic_min_tokens: int  # an aux-LLM summary only for an output this large (it is paid for)
    json_max_depth: int
    json_max_keys: int
    json_max_items: int
    head_lines: int
    tail_lines: int
    guard: ContextBudgetGuard
    compaction: PreCompactSettings  # where the next compaction comes: a lossy cut waits until it would


class FilterProcessor:
    name = "smart_filter"

    def __init__(self, rules: RuleEngine | None = None, prompts_dir: Path | None = None) -> None:
        self.rules = rules or RuleEngine()
        self.prompts_dir = prompts_dir

    def configure(self, c: ContextConfig) -> FilterSettings:
        return FilterSettings(
            c.input_budget,
            c.exempt_tools,
            c.shell_compress_min_chars,
            # At a small window a 2,000-token output is half the budget: one such round jumps from below
            # the compaction point to over the budget. A quarter (half for a turn) keeps rounds plannable.
            min(c.filter_single_tokens, c.input_budget // 4),
            min(c.filter_turn_tokens, c.input_budget // 2),
            c.filter_single_tokens,
            c.json_max_depth,
            c.json_max_keys,
            c.json_max_items,
            c.head_lines,
            c.tail_lines,
            ContextBudgetGuard(c),
            settings_for(PreCompactSettings, c),
        )

    async def run(self, v: View, s: FilterSettings) -> Rewritten:
        req, view = v.request, v.messages
        earlier = req.state.decisions
        decisions: dict[str, Message] = {}
        calls: dict[str, ToolCall] = {}
        out = list(view)
        trace = Trace()
        running = req.counter.messages(view[: req.new_start])
        state = req.state
        point = band_for(s.compaction, state.round_growth, landed_tokens(state)).warm
        step_tokens = 0
        for i in range(req.new_start, len(view)):
            m = view[i]
            if m.role == "assistant":
                step_tokens = 0
                for c in m.tool_calls:
                    calls[c.id] = c
            if m.role != "tool":
                running += req.counter.message(m)
                continue
            decided = decisions.get(m.id)
            if decided is None:
                decided = earlier.get(m.id)
            if decided is None:
                last = req.state.last_request_at
                if req.resume and last and (m.created_at or 0) <= last:
                    decided = m  # already sent as it is; re-filtering would only break the cache
                else:
                    call = calls.get(m.tool_call_id or "")
                    try:
                        decided = await self._filter(
                            m, call, req, s, trace, s.input_budget - running, step_tokens, point, running
                        )
                    except Exception:  # one output the filters cannot read is sent as it is
                        log.exception("filtering output %s failed; it is kept as it is", m.id)
                        decided = m
                decisions[m.id] = decided
            out[i] = decided
            n = req.counter.message(decided)
            running += n
            step_tokens += n
        return Rewritten(messages=out, decisions=decisions, trace=trace)

    async def _filter(
        self,
        m: Message,
        call: ToolCall | None,
        req: Request,
        c: FilterSettings,
        trace: Trace,
        remaining: int,
        step_tokens: int,
        point: int,
        running: int,
    ) -> Message:
        tool = call.name if call else (m.name or "")
        text = m.text
        if tool in c.exempt_tools or not text or isinstance(m.content, list):
            return m
        how, new = "", text
        # Shell stage — shell output
        if tool in COMMAND_TOOLS and call is not None and len(text) >= c.shell_compress_min_chars:
            header, body, footer = split_header(text)
            command = command_of(call)
            body = strip_ansi(body)  # the original, colours and all, stays in the vault
            hit = self.rules.apply(command, body) or compress_shell(command, body)
            for notice in self.rules.take_notices():  # a rule skipped for running too long
                trace.event(notice)
            if hit:
                how, new = f"compressed ({hit[0]})", header + hit[1] + footer
        # Structural/semantic stage — large single output, or a large turn. A data skeleton (JSON) is made
        # whenever it is large; code, logs and listings are cut on arrival (an extract, a summary, head and
        # tail); prose (a subagent's report) only where it would crowd the view (``room.py``): elsewhere it
        # stays whole until the answered trim or a compaction shortens it.
        tokens = req.counter.text(new)
        if tokens > c.filter_single_tokens or step_tokens + tokens > c.filter_turn_tokens:
            header, body, footer = split_header(new)
            st = structural_extract(body, (c.json_max_depth, c.json_max_keys, c.json_max_items))
            # guard: a-lossy-cut-only-where-the-output-crowds
            lossy = crowds(running + tokens, point, req.state.round_growth, req.raw)
            # guard: what-is-not-prose-is-cut-on-arrival
            lossy = lossy or not is_prose(body)
            # guard: a-json-skeleton-wherever-large
            if st is not None and (lossy or st[0] in DATA_FORMATS):
                how, new = f"structural ({st[0]})", header + st[1] + footer
            elif lossy:
                worth_a_call = tokens > c.semantic_min_tokens
                summary = await self._semantic(body, tool, req, trace) if worth_a_call else None
                if summary is not None:
                    how, new = "semantic summary", header + summary + footer
                else:
                    how = "head+tail"
                    view, arrows = as_numbered_view(body)  # a file view's code is not its result lines
                    # guard: a-file-view-keeps-its-fact-lines-first
                    if is_file_view(view):
                        how, cut = "fact lines", file_view_cut(view, c.filter_single_tokens * 2)
                    else:
                        cut = condense(view, c.head_lines, c.tail_lines, max_chars=c.filter_single_tokens * 2)
                    new = header + (with_arrows(cut) if arrows else cut) + footer
        # Budget guard — hard safety net, adaptive to what is left of the budget
        g = c.guard.guard(new, tool, remaining, req.vault)
        if g is not None:
            new, how = g.text, g.how if not how else f"{how}; {g.how}"
            uri = req.vault.put(text, "tool_output", tool, reason="filter")
        elif how:
            uri = req.vault.put(text, "tool_output", tool, reason="filter")
            new = new + pointer_note(uri, how, len(text), len(new))
        else:
            return m
        if len(new) >= len(text):
            return m
        layer = "budget_guard" if g is not None and how.startswith(g.how) else self.name
        trace.add_removed(layer, req.counter.text(text) - req.counter.text(new))
        trace.add_vaulted(layer, len(text))
        return m.derive("filtered", content=new, meta={**m.meta, "vault_uri": uri, "filter": how})

    async def _semantic(self, body: str, tool: str, req: Request, trace: Trace) -> str | None:
        """``SemanticFilter``: an aux-LLM summary of unstructured output, when an aux LLM is available."""
        if req.summarizer is None or self.prompts_dir is None or req.summary_in_background:
            return None  # in the background mode a turn never waits on the summarizer: the rules filter
        prompt_file = self.prompts_dir / SEMANTIC_PROMPT
        if not prompt_file.is_file():
            return None
        system = prompt_file.read_text(encoding="utf-8")
        excerpt = head_tail(body, 400, 200, max_chars=60_000)
        try:
            summary = await req.summarizer(system, f"Tool: {tool}\n\n{excerpt}")
        except Exception as exc:
            log.warning("semantic filter failed", exc_info=True)
            trace.event(f"semantic filter failed: {type(exc).__name__}")
            return None
        return summary.strip() or None


def split_header(text: str) -> tuple[str, str, str]:
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
