"""Tools: workspace confinement, file read/edit, vault reads, bash (timeout, binary, invalid UTF-8, spill),
approval."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from myrm_tui.agent.permissions import Assessment
from myrm_tui.agent.tools import ToolContext, ToolError
from myrm_tui.agent.tools.base import Approval, resolve_in_workspace
from myrm_tui.agent.tools.files import FileEditTool, FileReadTool
from myrm_tui.agent.tools.notes import SessionNotesTool
from myrm_tui.agent.tools.search import GlobTool, GrepTool
from myrm_tui.agent.tools.shell import BashTool
from myrm_tui.context.state import ContextState
from myrm_tui.context.steps.reread import ArtifactTracker
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault


@pytest.fixture
def tctx(workspace: Path) -> ToolContext:
    return ToolContext(
        workspace=workspace,
        vault=ArtifactVault("sess"),
        auto_approve=True,
        bash_timeout=10,
    )


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "sub/../../x", "~/.ssh/id_rsa"])
def test_paths_outside_the_workspace_are_refused(workspace: Path, path: str) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, path)


def test_symlink_escape_is_refused(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    os.symlink(tmp_path / "secret.txt", workspace / "link.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, "link.txt")


async def test_read_with_line_range_and_edit(tctx: ToolContext, workspace: Path) -> None:
    res = await FileReadTool().run({"paths": ["hello.py"], "line_range": "2:2"}, tctx)
    assert res.content.endswith("2\t    return 'hello'")
    res = await FileEditTool().run({"path": "hello.py", "old_string": "'hello'", "new_string": "'hi'"}, tctx)
    assert "1 replacement" in res.content and "'hi'" in (workspace / "hello.py").read_text()
    # The ArtifactTracker learns of the edit from the stored call (the tool never writes the state).
    state = ContextState()
    call = ToolCall("c1", "file_edit_tool", '{"path": "hello.py", "old_string": "x", "new_string": "y"}')
    ArtifactTracker(state).observe([Message(role="assistant", content=None, tool_calls=(call,))])
    assert state.artifacts["hello.py"][0] == "modified"
    with pytest.raises(ToolError, match="not found"):
        await FileEditTool().run({"path": "hello.py", "old_string": "nope", "new_string": "x"}, tctx)
    res = await FileEditTool().run({"path": "pkg/new.py", "create": True, "new_string": "x = 1\n"}, tctx)
    assert (workspace / "pkg/new.py").read_text() == "x = 1\n"
    with pytest.raises(ToolError, match="already exists"):
        await FileEditTool().run({"path": "pkg/new.py", "create": True, "new_string": ""}, tctx)


async def test_edit_notices_a_file_changed_since_read(tctx: ToolContext, workspace: Path) -> None:
    await FileReadTool().run({"paths": ["hello.py"]}, tctx)
    (workspace / "hello.py").write_text("def greet():\n    return 'changed elsewhere'\n")
    res = await FileEditTool().run(
        {"path": "hello.py", "old_string": "elsewhere", "new_string": "here"}, tctx
    )
    assert "changed since you last read it" in res.content


async def test_vault_reads_with_line_ranges_stay_in_the_session(tctx: ToolContext) -> None:
    uri = tctx.vault.put("\n".join(f"log line {i}" for i in range(1, 50_001)), "subagent")
    res = await FileReadTool().run({"paths": [uri], "line_range": "100:102"}, tctx)
    assert "100\tlog line 100" in res.content and "103" not in res.content.split("\n", 1)[1]
    with pytest.raises(ToolError, match="another session"):
        await FileReadTool().run({"paths": ["vault://other-session/abc"]}, tctx)
    with pytest.raises(ToolError, match="no vaulted output"):
        await FileReadTool().run({"paths": ["vault://sess/missing"]}, tctx)


async def test_bash_captures_status_and_output(tctx: ToolContext) -> None:
    res = await BashTool().run({"command": "echo out; echo err >&2; exit 3"}, tctx)
    assert res.is_error and res.meta["exit_code"] == 3
    assert "<returncode>3</returncode>" in res.content and "out" in res.content and "err" in res.content


async def test_bash_timeout_kills_the_process_group(tctx: ToolContext) -> None:
    res = await BashTool().run({"command": "sleep 30 & sleep 30", "timeout": 1}, tctx)
    assert res.meta["exit_code"] == 124 and "timeout" in res.content


async def test_bash_binary_and_invalid_utf8_are_labelled(tctx: ToolContext) -> None:
    res = await BashTool().run({"command": "printf 'abc\\x00\\xff\\xfe'"}, tctx)
    assert "[binary output" in res.content
    res = await BashTool().run({"command": "printf 'caf\\xe9 ok'"}, tctx)
    assert "not valid UTF-8" in res.content and "ok" in res.content


async def test_bash_huge_output_is_capped_and_spilled(tctx: ToolContext) -> None:
    tctx.max_output_bytes = 10_000
    res = await BashTool().run({"command": "seq 1 200000"}, tctx)
    assert len(res.content) < 11_000 and "full output: vault://" in res.content
    entry = tctx.vault.get_cached(res.meta["vault_uri"])
    assert entry is not None and entry.content.rstrip().endswith("200000")


async def test_bash_asks_for_approval_and_remembers_always(workspace: Path) -> None:
    answers: list[Approval] = ["no", "always", "no"]
    asked: list[str] = []

    async def approver(tool: str, command: str, assessment: Assessment) -> Approval:
        asked.append(command)
        return answers.pop(0)

    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"), approver=approver)
    # printf, not echo: echo is read-only and runs without asking
    res = await BashTool().run({"command": "printf '%s ' one"}, ctx)
    assert res.is_error and res.meta["declined"]
    assert "one" in (await BashTool().run({"command": "printf '%s ' one"}, ctx)).content
    assert (
        "two" in (await BashTool().run({"command": "printf '%s ' one two"}, ctx)).content
    )  # rule "printf '%s ' one" now allowed
    assert (await BashTool().run({"command": "printf '%s ' two"}, ctx)).meta[
        "declined"
    ]  # ...but not all of printf
    assert asked == ["printf '%s ' one", "printf '%s ' one", "printf '%s ' two"]
    no_ui = ToolContext(workspace=workspace, vault=ArtifactVault("s"))
    assert (await BashTool().run({"command": "printf x"}, no_ui)).meta["declined"]
    assert (
        "x" in (await BashTool().run({"command": "echo x"}, no_ui)).content
    )  # read-only: no approver needed


async def test_grep_glob_and_notes(tctx: ToolContext, workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "hello.py").write_text("greet")
    res = await GrepTool().run({"pattern": "def greet"}, tctx)
    assert res.content.startswith("hello.py:1:") and ".git" not in res.content
    assert (await GlobTool().run({"pattern": "**/*.py"}, tctx)).content == "hello.py"
    with pytest.raises(ToolError):
        await GlobTool().run({"pattern": "../*"}, tctx)
    assert (
        await SessionNotesTool().run({"action": "add", "text": "remember X"}, tctx)
    ).edits  # test_state_edits
