"""The session title a model writes is shown as plain words: in the header, the session picker and
``myrm sessions`` (a model answering ``**Greeting in Japanese**`` showed its asterisks there)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.agent.title import local_title, make_title, model_title
from myrm_tui.attachments import attach
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.testing.emulator import ProviderEmulator, Reply


async def test_a_title_the_model_wrote_in_markdown_is_stored_as_plain_words(
    emulator: ProviderEmulator,
) -> None:
    emulator.enqueue(Reply(text="**Title:** *Greeting* in `日本語` 🙂\n\nThis chat starts with a greeting."))
    spec = ModelSpec("openai/gpt-4o-mini", api_base=emulator.openai_base, api_key="sk-test")
    title = await make_title("hi 日本語 🙂", LLMClient(), spec, "title it")
    assert title == ("Greeting in 日本語 🙂", True)


WORD = st.text(
    st.characters(
        blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters="*`#:\"'“”\x85\x1c\x1d\x1e"
    ),
    min_size=1,
    max_size=12,
)
DECORATION = st.sampled_from(["", "*", "**", "`", "***"])
PREFIX = st.sampled_from(["", "# ", "## ", "Title: ", "**Title:** ", "title:", '"', "“"])
AFTER = st.sampled_from(["", "\n", "\n\nA chat about it.", "\n```\ncode\n```"])


@given(st.lists(st.tuples(WORD, DECORATION), min_size=1, max_size=10), PREFIX, AFTER)
def test_any_markdown_around_the_models_title_is_removed_and_its_words_kept(
    words: list[tuple[str, str]], prefix: str, after: str
) -> None:
    answer = prefix + " ".join(f"{mark}{word}{mark}" for word, mark in words) + after
    title = model_title(answer)
    assert title == " ".join(word for word, _ in words)[:60].strip()
    assert "\n" not in title and "*" not in title and "`" not in title


async def test_an_attached_files_text_is_not_the_sessions_title(
    emulator: ProviderEmulator, tmp_path: Path
) -> None:
    """``what is in @main.py`` titled the session "what is in @main.py print("hi")": the title was made
    from the saved message, which carries the attached file's ``<file>`` block."""
    (tmp_path / "main.py").write_text('print("hi")\nSECRET_LOOKING_BODY = 1\n')
    sent, labels = attach("what is in @main.py", tmp_path)
    assert labels and "SECRET_LOOKING_BODY" in sent  # the file really is attached
    assert local_title(sent) == "what is in @main.py"
    emulator.enqueue(Reply(text="Contents of main.py"))
    spec = ModelSpec("openai/gpt-4o-mini", api_base=emulator.openai_base, api_key="sk-test")
    assert await make_title(sent, LLMClient(), spec, "title it") == ("Contents of main.py", True)
    assert "SECRET_LOOKING_BODY" not in json.dumps(emulator.requests[-1].body)
