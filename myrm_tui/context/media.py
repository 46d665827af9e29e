"""Media handling: ``MediaFilter`` (sliding visual evidence window) and ``MediaResolve``.

Only the last ``media_window`` messages with images keep them; older images go to the vault and
leave a short text marker. ``MediaResolve`` turns ``image_ref`` parts (images kept in the vault
rather than inline) into the ``image_url`` parts providers accept, just before the request.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.context.processor import PipelineContext
from myrm_tui.context.types import Message


class MediaFilter:
    name = "media_filter"

    async def process(self, view: list[Message], ctx: PipelineContext) -> list[Message]:
        media_idx = [i for i, m in enumerate(view) if _has_images(m)]
        strip = set(media_idx[: -ctx.config.media_window] if ctx.config.media_window else media_idx)
        if not strip:
            return view
        out = list(view)
        for i in strip:
            m = view[i]
            parts: list[dict[str, Any]] = []
            assert isinstance(m.content, list)  # _has_images guarantees a parts list
            for p in m.content:
                if p.get("type") in ("image_url", "image_ref"):
                    url = (p.get("image_url") or {}).get("url", "") if p.get("type") == "image_url" else ""
                    uri = p.get("uri") or (ctx.vault.put(url, "media") if url else "")
                    parts.append({"type": "text", "text": f"[image removed from context; original: {uri}]"})
                else:
                    parts.append(p)
            new = m.derive("media", content=parts)
            ctx.metrics.add_removed(self.name, ctx.counter.message(m) - ctx.counter.message(new))
            out[i] = new
        return out


class MediaResolve:
    name = "media_resolve"

    async def process(self, view: list[Message], ctx: PipelineContext) -> list[Message]:
        out = view
        for i, m in enumerate(view):
            if not isinstance(m.content, list) or not any(p.get("type") == "image_ref" for p in m.content):
                continue
            parts = []
            for p in m.content:
                if p.get("type") != "image_ref":
                    parts.append(p)
                    continue
                entry = ctx.vault.get_cached(str(p.get("uri", "")))
                if entry is None:
                    parts.append({"type": "text", "text": f"[image unavailable: {p.get('uri')}]"})
                else:
                    parts.append({"type": "image_url", "image_url": {"url": entry.content}})
            if out is view:
                out = list(view)
            out[i] = m.derive("resolved", content=parts)
        return out


def _has_images(m: Message) -> bool:
    return isinstance(m.content, list) and any(p.get("type") in ("image_url", "image_ref") for p in m.content)
