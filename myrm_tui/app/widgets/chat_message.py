"""One chat message: user text, a streaming assistant answer, or a notice."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from myrm_tui.safe_text import sanitize

if TYPE_CHECKING:  # Markdown (and markdown-it) load with the first answer, not with the first frame
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from textual.widgets import Markdown
    from textual.widgets._markdown import MarkdownStream


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage { margin: 1 0 0 0; padding: 0 1; border-left: thick $accent; color: $text; }
    """

    def __init__(self, text: str) -> None:
        super().__init__(sanitize(text), markup=False)


class AssistantMessage(Vertical):
    """Streams Markdown deltas (appends; never re-renders the whole message per chunk). A stored answer
    built with ``plain_first`` shows its text plain until ``format`` renders its markdown: a reopened
    session's first page is on screen before its markdown (most of a reopen's time) is built."""

    DEFAULT_CSS = """
    AssistantMessage { height: auto; margin: 1 0 0 0; padding: 0 1; }
    AssistantMessage > .reasoning { color: $text-muted; text-style: italic; display: none; }
    AssistantMessage.-has-reasoning > .reasoning { display: block; }
    AssistantMessage Markdown { margin: 0; padding: 0; }
    """

    def __init__(self, text: str = "", plain_first: bool = False) -> None:
        super().__init__()
        self._initial = sanitize(text)  # model text may hold escape codes: shown, never obeyed
        self._stream: MarkdownStream | None = None
        self._reasoning: list[str] = []
        self.formatted = not (plain_first and self._initial)
        self._formatting = False

    def compose(self) -> ComposeResult:
        yield Static("", classes="reasoning", markup=False)
        if self.formatted:
            yield _chat_markdown()(self._initial)
        else:
            yield Static(self._initial, classes="plain-first", markup=False)

    async def format(self) -> None:
        """The stored text as markdown, in place of the plain text it was shown as first."""
        # Not once the app is quitting (Textual then counts no widget as attached, and mounting raised
        # MountError: ctrl+q while a reopened session's answers were formatted ended myrm with exit code 1).
        # guard: reopen-an-answer-is-not-formatted-once-the-app-quits
        if self.formatted or self._formatting or not self.is_mounted or not self.is_attached:
            return
        self._formatting = True
        plain = self.query(".plain-first")
        await self.mount(_chat_markdown()(self._initial))
        await plain.remove()
        self.formatted = True

    @property
    def markdown(self) -> Markdown:
        from textual.widgets import Markdown

        return self.query_one(Markdown)

    async def append(self, text: str) -> None:
        if self._stream is None:
            from textual.widgets import Markdown

            # Chunks still arrive while the screen is torn down (quit mid-reply): the transcript's item
            # keeps the text, and a removed answer shows nothing more (it raised NoMatches: exit code 1).
            # guard: an-answer-torn-down-mid-stream
            if not (found := self.query(Markdown)):
                return
            self._stream = found.first().get_stream(found.first())
        await self._stream.write(sanitize(text))

    def append_reasoning(self, text: str) -> None:
        self._reasoning.append(sanitize(text))
        self.add_class("-has-reasoning")
        for shown in self.query(".reasoning").results(Static):  # none once torn down (see ``append``)
            shown.update("".join(self._reasoning)[-600:])

    async def finish(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


_ChatMarkdown: type[Markdown] | None = None


def warm_markdown_urls() -> None:
    """Build mdurl's per-character tables here, on the UI thread, before any parse.

    Textual parses markdown in worker threads, and mdurl publishes each table before filling it: two
    messages mounted at once, the first in a process, read a half-built one (``IndexError`` in the
    parse; the app never got ready). These are the tables markdown-it's link normalisers use."""
    import mdurl

    for chars in (mdurl.ENCODE_DEFAULT_CHARS, mdurl.ENCODE_COMPONENT_CHARS):
        mdurl.encode("", chars)
    for chars in (mdurl.DECODE_DEFAULT_CHARS, mdurl.DECODE_DEFAULT_CHARS + "%", mdurl.DECODE_COMPONENT_CHARS):
        mdurl.decode("", chars)


def _hard_breaks(state: StateCore) -> None:
    """Every line break inside a paragraph is kept: a model's poem, numbered steps or log lines
    (``Line 30: …`` ``Line 31: …``) are lines, not one paragraph (strict CommonMark joins them)."""
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"


def chat_parser() -> MarkdownIt:
    """Textual's "gfm-like" parser, line breaks kept as the other agents' transcripts keep them."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("gfm-like")
    md.core.ruler.push("hard_breaks", _hard_breaks)
    return md


def _chat_markdown() -> type[Markdown]:
    """Textual's Markdown whose code fences without a language are plain text and whose line breaks are
    kept (``chat_parser``). Textual guesses a missing language with pygments' ``guess_lexer``, which
    imports every lexer it has: about 250 modules, 8 MB held for good and a second of CPU the first time a
    reopened long session shows one fence. Made on first use: importing Markdown is not free either, and
    the first frame does not need it."""
    global _ChatMarkdown
    if _ChatMarkdown is None:
        warm_markdown_urls()
        from textual.content import Content
        from textual.widgets.markdown import Markdown, MarkdownFence

        class PlainFence(MarkdownFence):
            @classmethod
            def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
                return super().highlight(code, language or "text", ansi, dark)

        class ChatMarkdown(Markdown):
            BLOCKS = {**Markdown.BLOCKS, "fence": PlainFence, "code_block": PlainFence}

            def __init__(self, markdown: str | None = None, **kwargs: Any) -> None:
                kwargs.setdefault("parser_factory", chat_parser)
                super().__init__(markdown, **kwargs)

        _ChatMarkdown = ChatMarkdown
    return _ChatMarkdown


class Notice(Static):
    DEFAULT_CSS = """
    Notice { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    Notice.-warning { color: $warning; }
    Notice.-error { color: $error; text-style: bold; }
    """

    def __init__(self, text: str, level: str = "info") -> None:
        super().__init__(sanitize(text), markup=False, classes=f"-{level}")
