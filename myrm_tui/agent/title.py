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
_INLINE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_HTML = re.compile(r"<[^>\n]+>")
MAX_WORDS = 6


def strip_for_title(text: str) -> str:
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
    title = " ".join(out.strip().strip("\"'").split())[:60]
    return (title or local_title(text)), bool(title)
