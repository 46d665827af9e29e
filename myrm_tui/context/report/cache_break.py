"""``cache_break_detector``: compare each request's prefix with the previous request's and say where
and why the provider's prefix cache will miss.

A request is seen as segments — the tool schemas, then one segment a message. If the new request
starts with every segment of the previous one, it only appended: a full hit. Otherwise the first
differing segment names the cause: tools changed, system prompt changed, a compaction rewrote the
view, an answered output was trimmed at the tail (by design, when the saving pays for the rewrite), or
history was edited in place (which the only-append policy should make impossible).
"""

from __future__ import annotations

from dataclasses import dataclass

from myrm_tui.context.types import Message


@dataclass(frozen=True)
class CacheBreak:
    index: int  # first segment that differs (0 = tools)
    # "tools_changed" | "system_changed" | "compaction" | "trimmed" | "history_edited" | "model_changed"
    cause: str
    lost_tokens: int  # tokens of the previous request after the break: no longer cacheable

    def as_dict(self) -> dict[str, object]:
        return {"index": self.index, "cause": self.cause, "lost_tokens": self.lost_tokens}


def fingerprints(view: list[Message], tools_fp: str, model: str) -> list[str]:
    return [
        f"tools:{tools_fp}:{model}",
        *(
            f"{m.role}:{m.id}:"
            f"{hash(m.content) if isinstance(m.content, str) else len(m.content or [])}:{len(m.tool_calls)}"
            for m in view
        ),
    ]


def _id(fingerprint: str) -> str:
    """The message id of a ``role:id:hash:calls`` fingerprint."""
    return fingerprint.split(":", 1)[-1].rsplit(":", 2)[0]


def shared_prefix(previous: list[str], current: list[str]) -> int:
    """How many leading segments two requests' fingerprints share."""
    n = min(len(previous), len(current))
    return next((i for i in range(n) if previous[i] != current[i]), n)


def detect(previous: list[str], current: list[str], sizes: list[int], compacted: bool) -> CacheBreak | None:
    """``sizes`` are the previous request's segment token counts (same length as ``previous``)."""
    k = shared_prefix(previous, current)
    if k >= len(previous):
        return None
    lost = sum(sizes[k:])
    # The current request may end where the previous one went on (its tail dropped): there is no
    # segment of its own at the break, and only the previous one's names the cause.
    # guard: cache-break-request-ending-early
    now = current[k] if k < len(current) else ""
    if k == 0:
        cause = (
            "model_changed"
            if now and previous[0].rsplit(":", 1)[-1] != now.rsplit(":", 1)[-1]
            else "tools_changed"
        )
    elif now.startswith("system:") or previous[k].startswith("system:"):
        cause = "system_changed"
    elif compacted:
        cause = "compaction"
    elif now and _id(now).startswith(_id(previous[k]) + "#"):
        cause = "trimmed"  # a sticky rewrite of an answered message at the tail (AnsweredOutputTrim)
    else:
        cause = "history_edited"
    return CacheBreak(k, cause, lost)
