"""What happens to a file while its edit waits in the approval dialog. The edit's diff was made from the
file as it was when the dialog opened; if the user (their editor, a background job) changes the file or
makes the path meanwhile, writing what was approved would drop that change, and a create's "did not exist"
kept for /undo would let /undo delete a file the agent never wrote (review6). Both now refuse, in one line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.permissions import Assessment
from myrm_tui.agent.tools import ToolContext, ToolError
from myrm_tui.agent.tools.base import Approval
from myrm_tui.agent.tools.files import FileEditTool
from myrm_tui.context.vault import ArtifactVault


def _ctx(workspace: Path, meanwhile: Callable[[], object], kept: list[Any]) -> ToolContext:
    async def approver(tool: str, shown: str, assessment: Assessment) -> Approval:
        meanwhile()  # what happens on the disk while the user reads the diff
        return "yes"

    async def keep_file(full: Path, before: str | None, after: str, call_id: str) -> None:
        kept.append((full.name, before, after))

    return ToolContext(workspace=workspace, vault=ArtifactVault("s"), approver=approver, keep_file=keep_file)


async def test_a_file_changed_while_its_edit_waits_is_not_written_over(workspace: Path) -> None:
    target = workspace / "hello.py"
    theirs = "def greet():\n    return 'hello'\n# the user's line\n"
    kept: list[Any] = []
    ctx = _ctx(workspace, lambda: target.write_text(theirs), kept)
    with pytest.raises(ToolError, match="changed while the edit waited for approval; not written"):
        await FileEditTool().run({"path": "hello.py", "old_string": "'hello'", "new_string": "'hi'"}, ctx)
    assert target.read_text() == theirs
    assert kept == []


async def test_a_path_made_while_its_create_waits_is_not_kept_for_undo_nor_written(workspace: Path) -> None:
    target = workspace / "new.py"
    kept: list[Any] = []
    ctx = _ctx(workspace, lambda: target.write_text("the user's file\n"), kept)
    with pytest.raises(ToolError, match="was created by something else while the edit waited"):
        await FileEditTool().run({"path": "new.py", "new_string": "x = 1\n", "create": True}, ctx)
    assert target.read_text() == "the user's file\n"
    assert kept == []  # /undo has nothing that says the agent made it


async def test_nothing_changed_while_waiting_writes_and_keeps_as_before(workspace: Path) -> None:
    kept: list[Any] = []
    ctx = _ctx(workspace, lambda: None, kept)
    await FileEditTool().run({"path": "hello.py", "old_string": "'hello'", "new_string": "'hi'"}, ctx)
    await FileEditTool().run({"path": "new.py", "new_string": "x = 1\n", "create": True}, ctx)
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hi'\n"
    assert (workspace / "new.py").read_text() == "x = 1\n"
    assert [k[0] for k in kept] == ["hello.py", "new.py"]
