"""Replay every real conversation of ../shared/corpus through the pipeline at several windows:
no request a provider would reject, and probe facts in protected regions stay in the view."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from myrm_tui.bench.corpus import load_conversations, load_probes
from myrm_tui.bench.runner import view_text
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.invariants import check_view, extract_protected_head
from myrm_tui.context.state import ContextState
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.testing.validation import validate_anthropic, validate_openai
from tests.conftest import corpus_file
from tests.helpers import COUNTER, PIPELINE, config_for, request_for

pytestmark = pytest.mark.corpus


def _anthropic_body(view: list[Message]) -> dict[str, Any]:
    """What litellm sends Anthropic for this view (system out, tool results as user blocks)."""
    msgs: list[dict[str, Any]] = []
    for m in view:
        if m.role == "system":
            continue
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text}
            if msgs and msgs[-1]["role"] == "user" and isinstance(msgs[-1]["content"], list):
                msgs[-1]["content"].append(block)
            else:
                msgs.append({"role": "user", "content": [block]})
            continue
        blocks: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": {}} for c in m.tool_calls]
        if msgs and msgs[-1]["role"] == m.role:
            msgs[-1]["content"].extend(blocks)
        else:
            msgs.append({"role": m.role, "content": blocks})
    return {"max_tokens": 1024, "messages": msgs}


@pytest.mark.parametrize("corpus", ["swe-dev.jsonl.gz", "tau-dev.jsonl.gz"])
@pytest.mark.parametrize("window", [4_000, 16_000, 64_000])
async def test_replay_has_no_rejected_request(corpus: str, window: int) -> None:
    """No request a provider would reject, and at least nine automatic compactions in ten are planned
    (fire at a threshold, not the emergency net), down to a 4K window."""
    convs = load_conversations(corpus_file(corpus))
    requests = 0
    triggers: list[str] = []
    for conv in convs:
        state = ContextState()
        vault = ArtifactVault(conv.id)
        clock = 1_000.0
        for i, m in enumerate(conv.messages):
            if m.role != "assistant" or i == 0:
                continue
            clock += 20
            history = conv.messages[:i]
            req = request_for(history, state, vault=vault, now=clock, model="claude-sonnet-4-5")
            run = await PIPELINE.run(req, config_for(window), conv.id)
            view = run.messages
            if run.metrics.compaction is not None:
                triggers.append(run.metrics.compaction.trigger)
            requests += 1
            tokens = COUNTER.messages(view)
            body = {"messages": [v.to_api() for v in view]}
            assert validate_openai(body, window, tokens) is None, (conv.id, i)
            assert validate_anthropic(_anthropic_body(view)) is None, (conv.id, i)
            assert check_view(view, history) == [], (conv.id, i)
    assert requests > 500
    automatic = [t for t in triggers if t in ("threshold", "emergency", "fit")]
    assert automatic.count("threshold") >= 0.9 * len(automatic), Counter(triggers)


async def test_probe_facts_in_protected_regions_survive() -> None:
    """At every replayed request, each probe fact whose evidence lies in the protected head or in the
    reserved tail (the newest ``tail_budget`` tokens, whole messages) is present in the view."""
    convs = {c.id: c for c in load_conversations(corpus_file("swe-dev.jsonl.gz"))}
    probes = load_probes(corpus_file("swe-dev-probes.jsonl.gz"))
    by_conv: dict[str, list] = {}
    for p in probes:
        by_conv.setdefault(p.conv_id, []).append(p)
    budget = ContextConfig(max_context_tokens=16_000).tail_budget
    checked = 0
    for conv_id, conv in convs.items():
        state, vault = ContextState(), ArtifactVault(conv_id)
        turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
        for k, i in enumerate(turns):
            history = conv.messages[:i]
            req = request_for(history, state, vault=vault, now=1_000.0 + 20 * k)
            view = (await PIPELINE.run(req, config_for(16_000), conv_id)).messages
            head_len = len(extract_protected_head(history))
            tail_from, used = len(history), 0
            while tail_from > head_len and used + COUNTER.message(history[tail_from - 1]) <= budget:
                tail_from -= 1
                used += COUNTER.message(history[tail_from])
            text = None
            for p in by_conv.get(conv_id, []):
                idx = p.evidence_msg_index
                if not (idx < head_len or tail_from <= idx < len(history)):
                    continue
                evidence = view_text(history[idx : idx + 1])
                for fact in p.expected_facts:
                    if fact.lower() in evidence:
                        text = text if text is not None else view_text(view)
                        checked += 1
                        assert fact.lower() in text, (conv_id, i, p.probe_id, fact)
    assert checked > 100
