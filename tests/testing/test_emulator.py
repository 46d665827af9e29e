"""The emulator rejects what real providers reject, and its prefix-cache accounting is exact."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from myrm_tui.testing.emulator import ProviderEmulator
from myrm_tui.testing.prefix_cache import PrefixCacheSimulator
from myrm_tui.testing.validation import validate_anthropic, validate_openai

CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
}

OPENAI_BAD = {
    "tool without call": [
        {"role": "user", "content": "x"},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ],
    "call without result": [{"role": "user", "content": "x"}, CALL, {"role": "user", "content": "y"}],
    "unknown tool id": [
        {"role": "user", "content": "x"},
        CALL,
        {"role": "tool", "tool_call_id": "zz", "content": "r"},
    ],
    "null user content": [{"role": "user", "content": None}],
    "empty assistant": [{"role": "user", "content": "x"}, {"role": "assistant", "content": ""}],
    "arguments not a string": [
        {"role": "user", "content": "x"},
        {
            **CALL,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": {}}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ],
}


@pytest.mark.parametrize("case", sorted(OPENAI_BAD))
def test_openai_rules(case: str) -> None:
    assert validate_openai({"messages": OPENAI_BAD[case]}) is not None


def test_openai_valid_and_window() -> None:
    good = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "x"},
        CALL,
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ]
    assert validate_openai({"messages": good}) is None
    rej = validate_openai({"messages": good}, window=10, tokens=11)
    assert rej is not None and rej.code == "context_length_exceeded"


ANTHROPIC_BAD: dict[str, dict[str, Any]] = {
    "starts with assistant": {"messages": [{"role": "assistant", "content": "x"}]},
    "empty content": {"messages": [{"role": "user", "content": ""}]},
    "result without use": {
        "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}
        ]
    },
    "use without result": {
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "b", "input": {}}]},
            {"role": "user", "content": "no result"},
        ]
    },
    "five breakpoints": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"p{i}", "cache_control": {"type": "ephemeral"}}
                    for i in range(5)
                ],
            }
        ]
    },
}


@pytest.mark.parametrize("case", sorted(ANTHROPIC_BAD))
def test_anthropic_rules(case: str) -> None:
    assert validate_anthropic({"max_tokens": 10, **ANTHROPIC_BAD[case]}) is not None


def test_prefix_cache_automatic_and_explicit_hand_computed() -> None:
    auto = PrefixCacheSimulator("automatic", min_tokens=100)
    assert auto.request("k", [("a", 60), ("b", 60)]).cached_tokens == 0
    assert auto.request("k", [("a", 60), ("b", 60), ("c", 10)]).cached_tokens == 120
    assert auto.request("k", [("a", 60), ("x", 60)]).cached_tokens == 0  # 60 < min_tokens
    assert auto.request("other", [("a", 60), ("b", 60)]).cached_tokens == 0  # keys are separate
    exp = PrefixCacheSimulator("explicit", min_tokens=100)
    r1 = exp.request("k", [("a", 60), ("b", 60), ("c", 30)], breakpoints=[1])
    assert (r1.cached_tokens, r1.cache_write_tokens) == (0, 120)
    r2 = exp.request("k", [("a", 60), ("b", 60), ("c", 30), ("d", 30)], breakpoints=[3])
    assert (r2.cached_tokens, r2.cache_write_tokens) == (120, 60)


def test_emulator_http_rejects_and_caches(emulator: ProviderEmulator) -> None:
    url = f"{emulator.openai_base}/chat/completions"
    r = httpx.post(url, json={"model": "m", "messages": OPENAI_BAD["tool without call"]})
    assert r.status_code == 400 and "must be a response" in r.json()["error"]["message"]
    long_user = {"role": "user", "content": "word " * 2000}
    body = {"model": "m", "messages": [long_user], "prompt_cache_key": "s1"}
    first = httpx.post(url, json=body).json()["usage"]
    second = httpx.post(
        url,
        json={
            **body,
            "messages": [
                long_user,
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "more"},
            ],
        },
    ).json()["usage"]
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    assert second["prompt_tokens_details"]["cached_tokens"] == first["prompt_tokens"]
    emulator.window = 100
    r = httpx.post(url, json=body)
    assert r.status_code == 400 and r.json()["error"]["code"] == "context_length_exceeded"
    assert len(emulator.rejected) == 2
    r = httpx.post(url, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert json.loads(r.text)["error"]["type"] == "invalid_request_error"
