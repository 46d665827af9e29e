"""``myrm ask "summarise @README.md"``: the file the message names is attached as the full screen's ``@``
attaches it (``claude -p`` does too). It was sent as the bare name, and the embedded model, which has no
tools, made a summary up. Asserted on the body the provider received."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import cli_env, emulator_args, last_user_text, run_myrm


def test_a_file_the_message_names_is_attached_and_said_on_stderr(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("# Notes\nThe release is on Friday (REL-7731).\n")
    emulator.requests.clear()
    emulator.enqueue(Reply(text="Friday."))
    got = run_myrm(
        ["ask", "when is the release? see @notes.md", *emulator_args(emulator, workspace)],
        env=cli_env(tmp_path),
    )
    assert got.returncode == 0 and got.stdout.startswith("Friday"), got.stderr
    sent = last_user_text(emulator.accepted[-1].body)
    assert sent.startswith("when is the release? see @notes.md")
    assert '<file path="notes.md">\n# Notes\nThe release is on Friday (REL-7731).\n</file>' in sent
    assert "[attached notes.md · 2 lines]" in got.stderr
    (workspace / "one.txt").write_text("x = 1\n")
    one = run_myrm(["ask", "see @one.txt", *emulator_args(emulator, workspace)], env=cli_env(tmp_path))
    assert "[attached one.txt · 1 line]" in one.stderr, one.stderr


def test_stdin_and_names_outside_the_workspace_attach_nothing(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """What is piped in is a program's output (``@dataclass``, an e-mail address), not the user naming a
    file; a name that leaves the workspace or is not a file is left as written."""
    (tmp_path / "secret.txt").write_text("SECRET-99\n")
    (workspace / "piped.txt").write_text("PIPED-FILE-TEXT\n")
    emulator.requests.clear()
    emulator.enqueue(Reply(text="ok"))
    got = run_myrm(
        ["ask", "read @../secret.txt and @missing.py", *emulator_args(emulator, workspace)],
        env=cli_env(tmp_path),
        stdin="the log names @piped.txt\n",
    )
    assert got.returncode == 0, got.stderr
    sent = last_user_text(emulator.accepted[-1].body)
    assert "<stdin>\nthe log names @piped.txt\n</stdin>" in sent
    assert "SECRET-99" not in sent and "PIPED-FILE-TEXT" not in sent and "<file" not in sent
    assert "attached" not in got.stderr
