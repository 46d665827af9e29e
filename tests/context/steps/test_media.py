"""``MediaFilter`` and ``MediaResolve``: the image window and vault references."""

from __future__ import annotations

from myrm_tui.context.steps.media import MediaFilter, MediaResolve
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault
from tests.helpers import run_step, view_for


def _img(i: int) -> Message:
    return Message(
        role="user",
        content=[
            {"type": "text", "text": f"shot {i}"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 5000}},
        ],
        id=f"img{i}",
    )


async def test_media_window_keeps_last_two_and_vaults_older() -> None:
    raw = [Message(role="user", content="go", id="u"), *[_img(i) for i in range(4)]]
    view = view_for(raw)
    result = await run_step(MediaFilter(), view)
    out = result.messages
    assert [m.has_media for m in out[1:]] == [False, False, True, True]
    assert "vault://" in out[1].text and view.request.vault.pending
    assert result.trace.removed["media_filter"] > 0


async def test_media_resolve_turns_refs_into_images() -> None:
    vault = ArtifactVault("t")
    uri = vault.put("data:image/png;base64,AAAA", "media")
    raw = [
        Message(
            role="user",
            content=[{"type": "image_ref", "uri": uri}, {"type": "image_ref", "uri": "vault://t/missing"}],
            id="u",
        )
    ]
    out = (await run_step(MediaResolve(), view_for(raw, vault=vault))).messages
    parts = out[0].content
    assert isinstance(parts, list)
    assert parts[0]["type"] == "image_url" and parts[0]["image_url"]["url"].startswith("data:")
    assert parts[1]["type"] == "text" and "unavailable" in parts[1]["text"]
