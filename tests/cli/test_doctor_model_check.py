"""``myrm doctor`` sends the model ``ask`` would use one bounded request and prints whether it answered,
or the same one-line reason a turn would give; ``--no-network`` sends nothing. Through the real litellm
HTTP stack to the provider emulator and a closed port, reading doctor's exact output."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import cli_env, run_myrm

MODEL = "openai/gpt-4o-mini"


def _doctor(tmp_path: Path, absent_gguf: dict[str, str], base: str, *more: str) -> tuple[int, list[str]]:
    """Doctor's exit code and report lines (label padding stripped); its log is ``tmp_path/log``."""
    args = ["doctor", "--model", MODEL, "--api-base", base, *more]
    done = run_myrm(args, env=cli_env(tmp_path, MYRM_LOG=str(tmp_path / "log"), **absent_gguf))
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return done.returncode, [line.strip() for line in done.stdout.splitlines()]


def _check_line(lines: list[str]) -> str:
    found = [line for line in lines if line.startswith("model check: ")]
    assert len(found) == 1, lines
    return found[0]


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port bound and not listening: every connection to it is refused (held, so nothing takes it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def test_a_model_that_answers_is_timed(
    tmp_path: Path, absent_gguf: dict[str, str], emulator: ProviderEmulator
) -> None:
    code, lines = _doctor(tmp_path, absent_gguf, emulator.openai_base)
    line = _check_line(lines)
    assert re.fullmatch(rf"model check: {MODEL} at {emulator.openai_base}: answers \(\d+\.\d s\)", line), line
    sent = [r.body for r in emulator.accepted]
    assert len(sent) == 1 and sent[0]["max_tokens"] == 1 and sent[0]["model"] == "gpt-4o-mini"
    # absent_gguf's embedded model is a problem of its own (exit 1); an answering model adds none
    code, lines = _doctor(tmp_path, absent_gguf, emulator.openai_base, "--quiet")
    assert code == 1 and lines[0].startswith("myrm doctor: problems: the embedded model cannot generate")
    assert "model:" not in lines[0], lines


def test_a_base_without_v1_says_to_add_it(
    tmp_path: Path, absent_gguf: dict[str, str], emulator: ProviderEmulator
) -> None:
    emulator.versioned_only = True  # as Ollama and vLLM
    _, lines = _doctor(tmp_path, absent_gguf, emulator.url)
    assert _check_line(lines) == (
        f"model check: {MODEL} at {emulator.url}: {emulator.url}/chat/completions answered 404 Not Found: "
        f"an OpenAI-compatible server's base ends in /v1 (Ollama, vLLM, LM Studio); try --api-base "
        f"{emulator.url}/v1"
    )


def test_a_refused_key_names_the_variable_never_the_key(
    tmp_path: Path, absent_gguf: dict[str, str], emulator: ProviderEmulator
) -> None:
    emulator.api_key = "sk-the-right-one"  # cli_env sends OPENAI_API_KEY=sk-test
    code, lines = _doctor(tmp_path, absent_gguf, emulator.openai_base, "--quiet")
    said = (
        f"{MODEL} at {emulator.openai_base}: {emulator.openai_base}/chat/completions refused the API key "
        f"(HTTP 401): myrm sends OPENAI_API_KEY for {MODEL}; is it set and valid for this server?"
    )
    assert lines[0].startswith("myrm doctor: problems: ") and lines[0].endswith(f", model: {said}"), lines
    assert code == 1
    assert "sk-test" not in "\n".join(lines) and "sk-the-right-one" not in "\n".join(lines)


def test_a_closed_port_asks_if_the_server_runs(
    tmp_path: Path, absent_gguf: dict[str, str], refusing_port: int
) -> None:
    base = f"http://127.0.0.1:{refusing_port}/v1"
    _, lines = _doctor(tmp_path, absent_gguf, base)
    assert _check_line(lines) == (
        f"model check: {MODEL} at {base}: could not reach {base}/chat/completions (connection refused): "
        "is the server running?"
    )


def test_no_network_sends_nothing(
    tmp_path: Path, absent_gguf: dict[str, str], emulator: ProviderEmulator
) -> None:
    code, lines = _doctor(tmp_path, absent_gguf, emulator.openai_base, "--no-network")
    assert _check_line(lines) == "model check: not checked (--no-network)"
    assert code == 1 and emulator.requests == []  # 1: absent_gguf's embedded model


def test_a_server_that_never_answers_is_given_up_on(
    tmp_path: Path, absent_gguf: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A port that takes connections (the kernel's backlog) and never replies: the check ends at its bound."""
    monkeypatch.setattr("myrm_tui.cli._MODEL_CHECK_SECONDS", 0.5)  # 10 s in use; the bound is what is tested
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        base = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        _, lines = _doctor(tmp_path, absent_gguf, base)
    assert _check_line(lines) == f"model check: {MODEL} at {base}: no answer in 0.5 s"
    logged = (tmp_path / "log").read_text()
    assert f"doctor: {base} gave no answer in 0.5 s\nTraceback (most recent call last)" in logged, logged


@pytest.mark.parametrize("model", ["local/smollm2-135m", "replay/a-recording"])
def test_a_model_without_a_server_is_not_sent_a_check(
    tmp_path: Path, absent_gguf: dict[str, str], emulator: ProviderEmulator, model: str
) -> None:
    """The embedded model is checked by generating (as before); a replay has no server to ask."""
    args = ["doctor", "--model", model, "--api-base", emulator.openai_base]
    done = run_myrm(args, env=cli_env(tmp_path, **absent_gguf))
    assert "Traceback" not in done.stderr and f"model: {model}" in done.stdout, done.stdout + done.stderr
    assert "model check:" not in done.stdout and emulator.requests == [], done.stdout
