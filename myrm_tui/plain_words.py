"""Plain words for what the screen, ``myrm ask`` and exports show of internal names.

The model keeps reading the tags it was given (``<compacted_summary …>``, ``<returncode>``); a person
reads "summary of 40 earlier messages" and "exit 0". Only display goes through here, never a request."""

from __future__ import annotations

import re

# Why a vault entry was written (``meta["reason"]``).
REASONS = {
    "compaction_left": "left the view at a compaction",
    "reasoning_trim": "reasoning of an older reply, trimmed from the view",
    "pre_compact": "the conversation as it was before a compaction",
    "output_spill": "output too long to keep whole in the conversation",
}
# What a vault entry holds (its ``kind``).
KINDS = {"archive": "archived messages", "tool_output": "tool output"}

_SUMMARY_OPEN = re.compile(r'<compacted_summary(?: part="(\d+)")?(?: messages="(\d+)")?>')
_SUMMARY_CLOSE = re.compile(r"\n?</compacted_summary>")
_SHELL = re.compile(r"<returncode>(-?\d+)</returncode>\n<output>\n?(.*?)</output>", re.S)
_CODE = re.compile(r"<returncode>(-?\d+)</returncode>\s*(?:<output>\s*)?")  # a gist's cut-off wrapper


def reason(name: str) -> str:
    return REASONS.get(name, name.replace("_", " "))


def kind(name: str) -> str:
    return KINDS.get(name, name.replace("_", " "))


def _summary_head(m: re.Match[str]) -> str:
    part, covered = m.group(1), m.group(2)
    what = f"Summary of {int(covered):,} earlier messages" if covered else "Summary of earlier messages"
    return what + (f" (part {part})" if part else "") + ":"


def text(body: str) -> str:
    """``body`` with the summary tags and the shell result wrapper said in words."""
    body = _SUMMARY_CLOSE.sub("", _SUMMARY_OPEN.sub(_summary_head, body))
    body = _SHELL.sub(lambda m: f"exit {m.group(1)}\n{m.group(2).rstrip()}", body)
    return _CODE.sub(lambda m: f"exit {m.group(1)} ", body).replace("</output>", "").rstrip()
