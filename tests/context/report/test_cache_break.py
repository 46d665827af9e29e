"""``cache_break.detect`` on any pair of requests (hypothesis): it names the first differing segment and
what was lost after it, and never fails — whether the new request appends, rewrites, or ends early."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.report.cache_break import detect

CAUSES = {"tools_changed", "system_changed", "compaction", "trimmed", "history_edited", "model_changed"}

segment = st.builds(
    lambda role, mid, h, calls: f"{role}:{mid}:{h}:{calls}",
    st.sampled_from(["system", "user", "assistant", "tool"]),
    st.sampled_from(["m1", "m2", "m2#trim", "m3", "", "c0m1", "c0m1#filtered#trim"]),
    st.sampled_from(["h1", "h2"]),
    st.integers(0, 1),
)
tools = st.sampled_from(["tools:fp1:model-a", "tools:fp2:model-a", "tools:fp1:model-b"])


@st.composite
def request_pairs(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A previous request and the next one: a shared prefix (often all of the previous one, or all of
    the next one), then each its own segments."""
    previous = [draw(tools), *draw(st.lists(segment, max_size=8))]
    shared = draw(st.integers(0, len(previous)))
    current = [*previous[:shared], *draw(st.lists(segment, max_size=8))]
    if shared == 0 and draw(st.booleans()):
        current = [draw(tools), *current[1:]]
    return previous, current


@settings(deadline=None)
@given(request_pairs(), st.data(), st.booleans())
def test_detect_names_the_first_difference_and_never_fails(
    pair: tuple[list[str], list[str]], data: st.DataObject, compacted: bool
) -> None:
    previous, current = pair
    sizes = data.draw(st.lists(st.integers(0, 500), min_size=len(previous), max_size=len(previous)))
    brk = detect(previous, current, sizes, compacted)
    if current[: len(previous)] == previous:  # only appended: a full hit
        assert brk is None
        return
    assert brk is not None
    k = brk.index
    assert current[:k] == previous[:k]
    assert k >= len(current) or current[k] != previous[k]
    assert brk.lost_tokens == sum(sizes[k:])
    assert brk.cause in CAUSES
    if k == 0:
        assert brk.cause in {"tools_changed", "model_changed"}
    elif previous[k].startswith("system:") or (k < len(current) and current[k].startswith("system:")):
        assert brk.cause == "system_changed"
    elif compacted:
        assert brk.cause == "compaction"


def test_a_request_that_ends_inside_the_previous_one_lost_its_tail() -> None:
    previous = ["system:s:h:0", "user:a:h:0", "assistant:b:h:1"]
    brk = detect(previous, previous[:2], [1, 2, 3], False)
    assert brk is not None and (brk.index, brk.cause, brk.lost_tokens) == (2, "history_edited", 3)
    brk = detect(previous, previous[:2], [1, 2, 3], True)
    assert brk is not None and brk.cause == "compaction"
