"""An assistant message's Markdown: a code fence without a language is shown as plain text, never guessed."""

from __future__ import annotations

import pytest
import textual.highlight
from textual.app import App, ComposeResult
from textual.widgets.markdown import MarkdownFence

from myrm_tui.app.widgets.chat_message import AssistantMessage


class _One(App[None]):
    def compose(self) -> ComposeResult:
        yield AssistantMessage("Run this:\n\n```\nmake test\n```\n\nthen\n\n```python\nx = 1\n```\n")


async def test_a_fence_without_a_language_is_not_guessed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Textual guesses a missing language with pygments' guess_lexer, which imports every lexer pygments has
    # (about 250 modules, 8 MB held, a second of CPU): in a reopened long session, the first fence paid it.
    def guess(code: str, path: str | None) -> str:
        raise AssertionError(f"guessed the language of {code!r}")

    monkeypatch.setattr(textual.highlight, "guess_language", guess)
    app = _One()
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        fences = list(app.query(MarkdownFence))
        assert [str(f._highlighted_code).strip() for f in fences] == ["make test", "x = 1"]
        assert [f.lexer for f in fences] == ["", "python"]
        # the named language is still highlighted: its code is split into styled spans
        assert fences[1]._highlighted_code.spans


def test_the_url_tables_markdown_parses_use_are_whole_before_any_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Messages parse in Textual's worker threads, and mdurl publishes a table before filling it: built
    first on the UI thread, none is built (half-way) during a parse."""
    from markdown_it import MarkdownIt
    from mdurl import _decode, _encode

    from myrm_tui.app.widgets.chat_message import warm_markdown_urls

    monkeypatch.setattr(_encode, "encode_cache", {})
    monkeypatch.setattr(_decode, "decode_cache", {})
    warm_markdown_urls()
    tables = {**_encode.encode_cache, **{f"d{k}": v for k, v in _decode.decode_cache.items()}}
    assert tables and all(len(t) == 128 for t in tables.values())
    built = (set(_encode.encode_cache), set(_decode.decode_cache))
    MarkdownIt("gfm-like").parse(
        "See [the file](http://file5.py/a%20b?q=1#x), <https://e.com> and www.x.org."
    )
    assert (set(_encode.encode_cache), set(_decode.decode_cache)) == built  # nothing left to build


class _Lines(App[None]):
    def compose(self) -> ComposeResult:
        yield AssistantMessage("Log:\nLine 30: started\nLine 31: failed\n\nRoses are red,\nviolets blue.")


async def test_line_breaks_inside_a_paragraph_are_shown() -> None:
    """A model's log lines, steps or poem keep their lines (strict CommonMark would join each paragraph
    into one line), and the blank line between paragraphs still separates them."""
    from textual.widgets._markdown import MarkdownParagraph

    app = _Lines()
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        paragraphs = [str(p._content) for p in app.query(MarkdownParagraph)]
        assert paragraphs == ["Log:\nLine 30: started\nLine 31: failed", "Roses are red,\nviolets blue."]


async def test_a_streamed_answer_keeps_its_line_breaks() -> None:
    """The same lines arriving in pieces, as a reply streams."""
    from textual.widgets._markdown import MarkdownParagraph

    from tests.helpers import wait_until

    class _Streamed(App[None]):
        def compose(self) -> ComposeResult:
            yield AssistantMessage()

    app = _Streamed()
    async with app.run_test(size=(80, 20)) as pilot:
        message = app.query_one(AssistantMessage)
        for piece in ("step 1: read", "\nstep 2: ", "fix\nstep 3: test"):
            await message.append(piece)
        await message.finish()

        def paragraphs() -> list[str]:
            return [str(p._content) for p in app.query(MarkdownParagraph)]

        await wait_until(pilot, lambda: "test" in "".join(paragraphs()))
        assert paragraphs() == ["step 1: read\nstep 2: fix\nstep 3: test"]
