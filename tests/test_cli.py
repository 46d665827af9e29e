"""The command line: ask (one turn to stdout), sessions, doctor — in subprocesses, as scripts use them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from myrm_tui.testing.emulator import ProviderEmulator, Reply

ROOT = Path(__file__).resolve().parents[1]


def _myrm(args: list[str], tmp: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYRM_DB": str(tmp / "cli.db"), "MYRM_CONFIG": str(tmp / "none.toml")}
    return subprocess.run([sys.executable, "-m", "myrm_tui.cli", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120, input=stdin)


def test_ask_streams_the_answer_and_persists(emulator: ProviderEmulator, tmp_path: Path, workspace: Path) -> None:
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "echo from-tool"})]), Reply(text="The tool said from-tool."))
    base = ["--model", "openai/gpt-4o-mini", "--api-base", emulator.openai_base, "--workspace", str(workspace)]
    env_key = {"OPENAI_API_KEY": "sk-test"}
    os.environ.update(env_key)
    try:
        proc = _myrm(["ask", "run the tool", *base, "--yes"], tmp_path)
    finally:
        os.environ.pop("OPENAI_API_KEY")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The tool said from-tool."
    assert "[tool] bash" in proc.stderr and "[session " in proc.stderr
    listing = _myrm(["sessions"], tmp_path)
    assert "run the tool" in listing.stdout and "4 msgs" not in listing.stdout


def test_ask_declines_commands_without_yes_and_reads_stdin(emulator: ProviderEmulator, tmp_path: Path, workspace: Path) -> None:
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "rm -rf build"})]), Reply(text="I was not allowed."))
    os.environ["OPENAI_API_KEY"] = "sk-test"
    try:
        proc = _myrm(["ask", "-", "--model", "openai/gpt-4o-mini", "--api-base", emulator.openai_base, "--workspace", str(workspace), "--json"], tmp_path, stdin="clean up")
    finally:
        os.environ.pop("OPENAI_API_KEY")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[0]["type"] == "UserSaved" and "clean up" in events[0]["message"]
    assert any(e["type"] == "ToolFinished" and "declined" in e["message"] for e in events)


def test_ask_reports_provider_failure_with_exit_code(emulator: ProviderEmulator, tmp_path: Path, workspace: Path) -> None:
    emulator.enqueue(Reply(error=(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})))
    proc = _myrm(["ask", "hi", "--model", "openai/gpt-4o-mini", "--api-base", emulator.openai_base, "--workspace", str(workspace)], tmp_path)
    assert proc.returncode == 1 and "refused the API key" in proc.stderr


def test_doctor_reports_model_and_offline_setup(tmp_path: Path) -> None:
    proc = _myrm(["doctor"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "local/smollm2-135m" in proc.stdout and "embedded default" in proc.stdout
    assert "TIKTOKEN_CACHE_DIR=" in proc.stdout and "tokenizer: ok" in proc.stdout
