"""``ThinkingBlockCleaner``: keep reasoning where the provider needs it, drop it where it only costs.

- Anthropic: ``reasoning_content`` is redundant with ``thinking_blocks`` and is removed; blocks stay
  (signed: the API wants them back unchanged on the tool-use turns that follow a thinking request).
- DeepSeek / MiMo / Kimi: reasoning of turns before the last user message is removed, except on
  assistant messages carrying tool calls (the API requires it there). The current turn keeps it.
  Thinking blocks (left by an Anthropic model before a switch) are removed.
- A thinking model after a non-thinking one: assistant messages with tool calls get an empty
  ``reasoning_content`` back-filled, which those APIs require.
- Any other model: reasoning fields are removed; they would only be billed or rejected.
"""

from __future__ import annotations

from myrm_tui.context.model_facts import family, is_thinking_model
from myrm_tui.context.step import NoSettings, Rewritten, Trace, Unconfigured, View
from myrm_tui.context.types import Message


class ThinkingBlockCleaner(Unconfigured):
    name = "thinking_cleanup"

    async def run(self, v: View, settings: NoSettings) -> Rewritten:
        model, counter, view = v.request.model, v.request.counter, v.messages
        fam = family(model)
        thinking = is_thinking_model(model)
        last_user = max((i for i, m in enumerate(view) if m.role == "user"), default=-1)
        out: list[Message] = []
        removed = 0
        for i, m in enumerate(view):
            if m.role != "assistant":
                out.append(m)
                continue
            new = m
            if fam == "anthropic":
                if m.reasoning is not None:
                    new = m.derive("think", reasoning=None)
            elif fam == "deepseek":
                if m.reasoning and i < last_user and not m.tool_calls:
                    new = m.derive("think", reasoning=None)
                elif thinking and m.tool_calls and m.reasoning is None:
                    new = m.derive("think", reasoning="")
                if new.thinking_blocks:  # an Anthropic model's signed blocks: no other API takes them
                    new = new.derive("think", thinking_blocks=())
            elif m.reasoning is not None or m.thinking_blocks:
                new = m.derive("think", reasoning=None, thinking_blocks=())
            if new is not m:
                removed += counter.message(m) - counter.message(new)
            out.append(new)
        if all(a is b for a, b in zip(out, view, strict=True)):
            return Rewritten(messages=view)
        trace = Trace()
        trace.add_removed(self.name, max(removed, 0))
        return Rewritten(messages=out, trace=trace)
