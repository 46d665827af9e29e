"""The OpenAI SDK's chat-body transform is skipped only where it is a no-op (``llm/openai_body.py``)."""

from __future__ import annotations

import typing
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.llm import openai_body
from myrm_tui.llm.client import LLMClient, ModelSpec, _import_litellm
from myrm_tui.llm.events import TextDelta
from myrm_tui.testing.emulator import ProviderEmulator, Reply


def _walk(tp: Any, seen: set[int], found: list[str], dicts: list[str]) -> None:
    """Every annotation reachable from ``tp``: TypedDict fields, unions, containers, Annotated metadata."""
    from openai._compat import is_typeddict
    from openai._utils import PropertyInfo

    if id(tp) in seen:
        return
    seen.add(id(tp))
    if typing.get_origin(tp) is typing.Annotated:
        found += [f"{tp}: {m}" for m in tp.__metadata__ if isinstance(m, PropertyInfo)]
    if is_typeddict(tp):
        dicts.append(tp.__name__)
        for hint in typing.get_type_hints(tp, include_extras=True).values():
            _walk(hint, seen, found, dicts)
    for arg in typing.get_args(tp):
        _walk(arg, seen, found, dicts)


def test_the_chat_params_have_nothing_the_transform_would_rename_or_format() -> None:
    """What makes the skip exact: no key of a chat-completion body, at any depth, carries ``PropertyInfo``
    (an alias or a format). An SDK upgrade that adds one fails here."""
    found: list[str] = []
    dicts: list[str] = []
    for params in openai_body.chat_params():
        _walk(params, set(), found, dicts)
    assert not found
    from openai.types.beta import response_create_params

    _walk(response_create_params.ResponseCreateParams, set(), found, [])
    assert any("openai-beta" in f for f in found)  # the walk does see an alias where there is one
    assert {"ChatCompletionUserMessageParam", "ChatCompletionMessageFunctionToolCallParam"} <= set(dicts)
    assert len(set(dicts)) > 30  # the walk reached the messages, their parts and the tools


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_call = st.fixed_dictionaries(
    {
        "id": st.text(max_size=8),
        "type": st.just("function"),
        "function": st.fixed_dictionaries({"name": st.text(max_size=8), "arguments": st.text(max_size=20)}),
    }
)
_part = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)}),
    st.fixed_dictionaries(
        {"type": st.just("image_url"), "image_url": st.fixed_dictionaries({"url": st.text(max_size=20)})}
    ),
    st.dictionaries(st.text(max_size=6), _json, max_size=3),  # any other part
)
_message = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user", "developer"]), "content": st.text() | st.lists(_part)}
    ),
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": st.none() | st.text()},
        optional={"tool_calls": st.lists(_call, max_size=3), "reasoning_content": st.text(max_size=10)},
    ),
    st.fixed_dictionaries(
        {"role": st.just("tool"), "tool_call_id": st.text(max_size=8), "content": st.text() | st.lists(_part)}
    ),
    st.dictionaries(st.text(max_size=6), _json, max_size=4),  # a shape the params do not know
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=st.lists(_message, max_size=6),
    extra=st.dictionaries(
        st.sampled_from(["tools", "stop", "metadata", "x_unknown", "n"]), _json, max_size=3
    ),
    unset=st.lists(st.sampled_from(["temperature", "tools", "seed", "user"]), max_size=3),
)
async def test_the_fast_path_gives_what_the_sdks_transform_gives(
    messages: list[Any], extra: dict[str, Any], unset: list[str]
) -> None:
    from openai import omit
    from openai._utils._transform import async_maybe_transform

    body = {"model": "gpt-4o", "stream": True, "messages": messages, **extra}
    body.update(dict.fromkeys(unset, omit))
    for params in openai_body.chat_params():
        assert openai_body.plain_body(body) == await async_maybe_transform(body, params)


async def test_a_body_holding_a_model_object_goes_through_the_sdks_transform() -> None:
    from openai.types.chat import ChatCompletionMessage
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    _import_litellm()
    from openai.resources.chat.completions import completions

    said = ChatCompletionMessage(role="assistant", content="earlier")
    body = {"model": "gpt-4o", "messages": [said, {"role": "user", "content": "hi"}]}
    assert openai_body.plain_body(body) is None
    out = await completions.async_maybe_transform(body, CompletionCreateParamsStreaming)
    assert out["messages"][0] == {"role": "assistant", "content": "earlier"}  # dumped, as the SDK does


async def test_a_real_call_takes_the_fast_path_and_the_wire_body_is_whole(
    emulator: ProviderEmulator, monkeypatch: Any
) -> None:
    calls: list[Any] = []
    real = openai_body.plain_body

    def counted(data: Any) -> Any:
        out = real(data)
        calls.append(out)
        return out

    monkeypatch.setattr(openai_body, "plain_body", counted)
    emulator.enqueue(Reply(text="Hi."))
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "hello"}]},
    ]
    spec = ModelSpec("openai/gpt-4o-mini", api_base=emulator.openai_base, api_key="sk-test")
    events = [ev async for ev in LLMClient().stream(spec, messages, temperature=0.2)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hi."
    assert len(calls) == 1 and calls[0] is not None  # plain JSON: the SDK's walk was skipped
    sent = emulator.requests[-1].body
    assert sent["messages"] == messages and sent["temperature"] == 0.2 and sent["stream"] is True
