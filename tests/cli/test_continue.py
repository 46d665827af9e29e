"""``--continue`` (``-c``): this folder's most recent session, as Claude Code's and Codex's resume it:
for ``myrm ask`` and the full screen (``cli._continued``, which both call before anything opens)."""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui import cli
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import cli_env, emulator_args, run_myrm


def _ask(emulator: ProviderEmulator, tmp: Path, ws: Path, *args: str) -> tuple[int, str, str]:
    done = run_myrm(["ask", *args, *emulator_args(emulator, ws)], env=cli_env(tmp), cwd=ws)
    return done.returncode, done.stdout, done.stderr


def _session_of(stderr: str) -> str:
    return stderr.rsplit("[session ", 1)[1].split("]", 1)[0]


def test_continue_resumes_this_folders_newest_session_not_another_folders(
    emulator: ProviderEmulator, tmp_path: Path
) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    code, _, err = _ask(emulator, tmp_path, here, "-c", "hi")
    assert (
        code == 2
        and err.strip()
        == f"myrm: --continue: no session in {here} yet (`myrm sessions` lists every folder's)"
    )
    emulator.enqueue(Reply(text="noted"), Reply(text="elsewhere"), Reply(text="it was 7"))
    code, _, err = _ask(emulator, tmp_path, here, "remember the number 7")
    assert code == 0, err
    first = _session_of(err)
    code, _, err = _ask(emulator, tmp_path, there, "another folder's work")  # newer, elsewhere
    assert code == 0 and _session_of(err) != first
    code, out, err = _ask(emulator, tmp_path, here, "--continue", "which number?")
    assert code == 0 and out.strip() == "it was 7", err
    assert _session_of(err) == first
    sent = json.dumps(emulator.accepted[-1].body["messages"])
    assert "remember the number 7" in sent and "another folder" not in sent
    # The full screen's start finds the same session (its checks run on it as on --session ID).
    assert cli._continued(tmp_path / "cli.db", here.resolve(), None) == first
    code, _, err = _ask(emulator, tmp_path, here, "-c", "-s", first, "hi")
    assert code == 2 and err.strip() == "myrm: --continue and --session do not go together"
