"""A cloned repository's ``AGENTS.md`` (or ``MYRM.md``, ``CLAUDE.md``) is read at a session's first
message, unasked, and sent to the model provider. git stores symbolic links: the file may be a link to
the user's ssh key, a loop, a FIFO, a folder or gigabytes. Only a regular file inside the workspace is
read, a bounded head of it, without blocking; anything else is skipped (and logged)."""

from __future__ import annotations

import os
import threading
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.prompts import MAX_RULES_CHARS, WORKSPACE_RULE_FILES, PromptLibrary
from myrm_tui.paths import prompts_dir
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import cli_env, emulator_args, run_myrm

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- SSH_SECRET"
KINDS = ["link-out-absolute", "link-out-relative", "link-out-through-a-folder", "loop", "fifo", "folder",
         "huge", "dangling", "link-inside"]  # fmt: skip


def _plant(workspace: Path, outside: Path, name: str, kind: str) -> Path:
    """``name`` in ``workspace`` made the ``kind`` of thing a hostile repository can hold."""
    (outside / "id_ed25519").write_text(SECRET + "\n")
    f = workspace / name
    if kind == "link-out-absolute":
        f.symlink_to(outside / "id_ed25519")
    elif kind == "link-out-relative":
        f.symlink_to(os.path.relpath(outside / "id_ed25519", workspace))
    elif kind == "link-out-through-a-folder":
        (workspace / "docs").symlink_to(outside, target_is_directory=True)
        f.symlink_to("docs/id_ed25519")
    elif kind == "loop":
        f.symlink_to(name)
    elif kind == "fifo":
        os.mkfifo(f)
    elif kind == "folder":
        f.mkdir()
    elif kind == "huge":
        with f.open("wb") as out:
            out.truncate(1 << 30)  # a sparse gigabyte
    elif kind == "dangling":
        f.symlink_to(outside / "gone.md")
    else:
        (workspace / "rules").mkdir()
        (workspace / "rules" / "team.md").write_text("Always run `make check`.\n")
        f.symlink_to("rules/team.md")
    return f


def _environment(workspace: Path) -> tuple[str, int]:
    """The environment message's text (read in a thread: a FIFO must not hold the test) and the memory
    its reading took at its peak."""
    out: list[str] = []

    def read() -> None:
        out.append(PromptLibrary(prompts_dir()).environment_message(workspace).text)

    tracemalloc.start()
    try:
        worker = threading.Thread(target=read, daemon=True)
        worker.start()
        worker.join(30)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if not out:
        fifo = next(workspace / n for n in WORKSPACE_RULE_FILES if (workspace / n).exists())
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # free it
        pytest.fail("reading the workspace's rules blocked")
    return out[0], peak


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), name=st.sampled_from(WORKSPACE_RULE_FILES))
@example(kind="link-out-relative", name="AGENTS.md")
def test_only_a_regular_file_inside_the_workspace_is_read_and_only_its_head(
    tmp_path_factory: pytest.TempPathFactory, kind: str, name: str
) -> None:
    root = tmp_path_factory.mktemp("rules")
    workspace, outside = root / "repo", root / "home" / ".ssh"
    workspace.mkdir()
    outside.mkdir(parents=True)
    _plant(workspace, outside, name, kind)
    text, peak = _environment(workspace)
    assert "SSH_SECRET" not in text
    assert ("Always run `make check`." in text) == (kind == "link-inside")
    assert ("<user_instructions" in text) == (kind in ("link-inside", "huge"))
    assert peak < 20 * MAX_RULES_CHARS, f"{peak:,} bytes read"


def test_ask_sends_no_file_an_agents_md_link_leads_out_to(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """End to end: the provider never gets the key the repository's AGENTS.md points at."""
    home = tmp_path / "home" / ".ssh"
    home.mkdir(parents=True)
    _plant(workspace, home, "AGENTS.md", "link-out-relative")
    emulator.requests.clear()
    emulator.enqueue(Reply(text="Hello."))
    proc = run_myrm(["ask", "hi", *emulator_args(emulator, workspace)], env=cli_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert emulator.requests and all("SSH_SECRET" not in str(r.body) for r in emulator.requests)


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in ("huge", "link-inside")])
def test_a_rules_file_that_is_skipped_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    """Whatever the reason a workspace's AGENTS.md is not read, the log names it: a user wondering why the
    model ignores it finds the line (a FIFO and a folder were skipped without one)."""
    workspace, outside = tmp_path / "repo", tmp_path / "home" / ".ssh"
    workspace.mkdir()
    outside.mkdir(parents=True)
    _plant(workspace, outside, "AGENTS.md", kind)
    with caplog.at_level("WARNING", logger="myrm_tui.safe_files"):
        text, _ = _environment(workspace)
    assert "<user_instructions" not in text
    assert any("AGENTS.md" in r.getMessage() and "not read" in r.getMessage() for r in caplog.records)
