"""Images for the model: recognised by their bytes (PNG, JPEG, GIF, WebP), sent as ``image_url`` parts
with a data URL. Used by ``file_read_tool``, MCP image results and images attached to a user message.

Whether the model sees them is decided when the request is built (``cache_optimize.render``): a model
without vision gets a one-line stand-in, and the media window keeps only the last two image messages.
"""

from __future__ import annotations

import base64
import re
import shlex
from pathlib import Path
from typing import Any

from myrm_tui.context.types import Message

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # Anthropic's limit for one image (OpenAI's is higher)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


def image_mime(data: bytes) -> str | None:
    """The image type of ``data`` by its signature, or None when it is not a supported image."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_part(data: bytes, mime: str) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"},
    }


def describe(name: str, data: bytes, mime: str) -> str:
    return f"[image {name}: {mime.split('/')[1].upper()}, {len(data):,} bytes]"


def too_large(name: str, size: int) -> str:
    return (
        f"[image {name}: {size:,} bytes, over the {MAX_IMAGE_BYTES // (1024 * 1024)} MB a provider takes "
        "for one image; not attached]"
    )


def user_message_with_images(text: str, paths: list[Path], shown: list[str] | None = None) -> Message:
    """A user message: ``text``, then each image file as an image part after a one-line label. A file
    that is missing, not an image or too large is named in a label instead (nothing fails)."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for path, name in zip(paths, shown or [str(p) for p in paths], strict=True):
        try:
            data = path.read_bytes() if path.stat().st_size <= MAX_IMAGE_BYTES else None
        except OSError as exc:
            parts.append({"type": "text", "text": f"[image {name}: cannot read it ({exc.strerror or exc})]"})
            continue
        if data is None:
            parts.append({"type": "text", "text": too_large(name, path.stat().st_size)})
            continue
        mime = image_mime(data)
        if mime is None:
            parts.append({"type": "text", "text": f"[{name}: not a PNG, JPEG, GIF or WebP image]"})
            continue
        parts += [{"type": "text", "text": describe(name, data, mime)}, image_part(data, mime)]
    return Message(role="user", content=parts)


# ``@shot.png`` (a mention) or a path pasted whole (a terminal's drag and drop quotes it or escapes
# its spaces): a word ending in an image suffix.
_MENTION = re.compile(r"(?<!\S)@(\S+)")


def image_paths_in(text: str, workspace: Path) -> list[tuple[str, Path]]:
    """The image files ``text`` names, as (the words written, the file): ``@name.png`` mentions (relative
    to the workspace, or absolute) and pasted absolute paths (``/…``, ``~/…``, ``file:///…``, quoted or
    with escaped spaces) of files that exist. The user names them, so a path outside the workspace is
    allowed (the model's tools stay confined)."""
    try:
        words = shlex.split(text, posix=True)
    except ValueError:  # an unbalanced quote: plain words
        words = text.split()
    # A bare word is a pasted path only when absolute (``shot.png`` in a sentence is prose, not a paste).
    pasted = [w.removeprefix("file://") for w in words if w.startswith(("/", "~/", "file:///"))]
    found: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for word in [*(m.group(1) for m in _MENTION.finditer(text)), *pasted]:
        name = word.rstrip(".,;:!?)")
        if not name.lower().endswith(IMAGE_SUFFIXES):
            continue
        path = Path(name).expanduser()
        path = path if path.is_absolute() else workspace / path
        try:
            if not path.is_file():
                continue
            key = path.resolve()
        except OSError:
            continue
        if key not in seen:
            seen.add(key)
            found.append((name, path))
    return found


def with_images(text: str, workspace: Path) -> str | list[dict[str, Any]]:
    """The content of a user message: ``text`` alone, or text then the images it names (each after a
    one-line label; one that cannot be attached is named in its label instead)."""
    named = image_paths_in(text, workspace)
    if not named:
        return text
    msg = user_message_with_images(text, [p for _, p in named], [n for n, _ in named])
    assert isinstance(msg.content, list)
    return msg.content
