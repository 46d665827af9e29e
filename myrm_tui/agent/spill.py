"""Vault spill, shared by the oversized-output protections: MCP results, hook output and
background-job output.

The whole text goes to the ArtifactVault; the model gets head and tail, the ``vault://`` pointer and
how to read the rest with ``file_read_tool`` and a line range. Without a vault the fallback is head
truncation, so a layer still bounds what it passes on.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.context.text.trimming import head_tail
from myrm_tui.context.vault import ArtifactVault, VaultKind


def spill(
    text: str, vault: ArtifactVault | None, kind: VaultKind, source: str, preview_chars: int, **meta: Any
) -> tuple[str, str | None]:
    """(what the model sees, the vault URI or None when it fell back to truncation)."""
    # guard: l6-fallback-without-a-vault
    if vault is None:
        return text[:preview_chars] + f"\n[… {source}: cut at {preview_chars:,} of {len(text):,} chars]", None
    uri = vault.put(text, kind, source, **meta)
    preview = head_tail(text, 40, 20, max_chars=preview_chars)
    return (
        f"{preview}\n[{source}: {len(text):,} chars, {text.count(chr(10)) + 1:,} lines; full "
        f"output at {uri} — read it with "
        f'file_read_tool(paths=["{uri}"], line_range="1:200")]'
    ), uri
