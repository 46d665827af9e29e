"""Media handling: ``MediaFilter`` (sliding visual evidence window) and ``MediaResolve``.

Only the last ``media_window`` messages with images keep them; older images go to the vault and
leave a short text marker. ``MediaResolve`` turns ``image_ref`` parts (images kept in the vault
rather than inline) into the ``image_url`` parts providers accept, just before the request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from myrm_tui.context.step import Configured, NoSettings, Rewritten, Trace, Unconfigured, View
from myrm_tui.context.types import Message


@dataclass(frozen=True, slots=True)
class MediaSettings:
    media_window: int


class MediaFilter(Configured[MediaSettings]):
    name = "media_filter"
    Settings = MediaSettings

    async def run(self, v: View, s: MediaSettings) -> Rewritten:
        view, vault, counter = v.messages, v.request.vault, v.request.counter
        media_idx = [i for i, m in enumerate(view) if _has_images(m)]
        strip = set(media_idx[: -s.media_window] if s.media_window else media_idx)
        if not strip:
            return Rewritten(messages=view)
        trace = Trace()
        out = list(view)
        for i in strip:
            m = view[i]
            parts: list[dict[str, Any]] = []
            assert isinstance(m.content, list)  # _has_images guarantees a parts list
            for p in m.content:
                if p.get("type") in ("image_url", "image_ref"):
                    url = (p.get("image_url") or {}).get("url", "") if p.get("type") == "image_url" else ""
                    uri = p.get("uri") or (vault.put(url, "media") if url else "")
                    parts.append({"type": "text", "text": f"[image removed from context; original: {uri}]"})
                else:
                    parts.append(p)
            new = m.derive("media", content=parts)
            trace.add_removed(self.name, counter.message(m) - counter.message(new))
            out[i] = new
        return Rewritten(messages=out, trace=trace)


class MediaResolve(Unconfigured):
    name = "media_resolve"

    async def run(self, v: View, settings: NoSettings) -> Rewritten:
        view = out = v.messages
        for i, m in enumerate(view):
            if not isinstance(m.content, list) or not any(p.get("type") == "image_ref" for p in m.content):
                continue
            parts = []
            for p in m.content:
                if p.get("type") != "image_ref":
                    parts.append(p)
                    continue
                entry = v.request.vault.get_cached(str(p.get("uri", "")))
                if entry is None:
                    parts.append({"type": "text", "text": f"[image unavailable: {p.get('uri')}]"})
                else:
                    parts.append({"type": "image_url", "image_url": {"url": entry.content}})
            if out is view:
                out = list(view)
            out[i] = m.derive("resolved", content=parts)
        return Rewritten(messages=out)


def view_has_images(view: list[Message]) -> bool:
    return any(_has_images(m) for m in view)


def _has_images(m: Message) -> bool:
    return isinstance(m.content, list) and any(p.get("type") in ("image_url", "image_ref") for p in m.content)
