"""Session titles, generated in the background after the first exchange.

Code blocks, URLs and HTML are stripped first; what is left empty gets the local title "Snippet"
with zero tokens spent. The embedded model gets a local title from the first words too (a 135M
model's titles are worse than that); any other model writes one with ``prompts/title.md``.
"""

from __future__ import annotations

import logging
import re

from myrm_tui.context.model_facts import model_kind
from myrm_tui.llm.client import LLMClient, ModelSpec

log = logging.getLogger(__name__)

_CODE = re.compile(r"```.*?(```|$)", re.S)
# an ``@file`` attachment's block (attachments.file_block): the file's text is not the title
_FILE = re.compile(r'<file path="[^"\n]*">\n.*?(\n</file>|$)', re.S)
_INLINE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_HTML = re.compile(r"<[^>\n]+>")
_EMPHASIS = re.compile(r"[*`]+")  # bold, italics, inline code: the words stay
_LABEL = re.compile(r"^(?:#+\s*)?(?:title\s*:\s*)?", re.I)
MAX_WORDS = 6


def strip_for_title(text: str) -> str:
    text = _FILE.sub(" ", text)
    text = _CODE.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _HTML.sub(" ", text)
    text = _INLINE.sub(" ", text)
    return " ".join(text.split())


def local_title(text: str) -> str:
    stripped = strip_for_title(text)
    if not stripped:
        return "Snippet"
    words = stripped.split()
    title = " ".join(words[:MAX_WORDS])
    return (title[:60] + ("…" if len(words) > MAX_WORDS else "")).strip()


async def make_title(
    text: str, llm: LLMClient | None, spec: ModelSpec | None, prompt: str
) -> tuple[str, bool]:
    """(title, used_llm)."""
    stripped = strip_for_title(text)
    if not stripped or llm is None or spec is None or model_kind(spec.model) in ("local", "replay"):
        return local_title(text), False
    try:
        out = await llm.complete(spec, prompt, stripped[:2000], max_tokens=20)
    except Exception:
        log.warning("the title model failed; a local title stands in", exc_info=True)
        return local_title(text), False
    title = model_title(out)
    return (title or local_title(text)), bool(title)


def model_title(out: str) -> str:
    """The model's answer as a title: its first line of prose without markdown, a "Title:" label or
    quotes, which models add despite the prompt (the header and ``myrm sessions`` showed ``**…**``)."""
    # guard: title-the-models-markdown-is-not-shown
    prose = _EMPHASIS.sub("", _CODE.sub("\n", out))
    first = next((line for line in prose.splitlines() if line.strip()), "")
    return " ".join(_LABEL.sub("", first.strip()).strip("\"'“”").split())[:60].strip()
