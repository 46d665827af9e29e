"""Prompt modes are built once and identical for identical parameters; rules are XML-tagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui.agent.prompts import MODES, PromptLibrary
from myrm_tui.paths import prompts_dir


@pytest.fixture
def lib() -> PromptLibrary:
    return PromptLibrary(prompts_dir())


def test_same_parameters_same_string_object(lib: PromptLibrary) -> None:
    for mode in MODES:
        assert lib.system_prompt(mode, "gpt-4o") is PromptLibrary(prompts_dir()).system_prompt(mode, "gpt-4o")


def test_modes_differ_in_density_and_use_xml_tags(lib: PromptLibrary) -> None:
    full, lean, naked = (lib.system_prompt(m, "claude-sonnet-4-5") for m in ("full", "lean", "naked"))
    assert len(full) > len(lean) > len(naked)
    for tag in (
        "<identity>",
        "<agent_behavior_rules>",
        "<tool_use_enforcement>",
        "<execution_discipline>",
        "<security_rules>",
        "<memory_rules>",
        "<task_integrity>",
        "<response_rules>",
        "<escalation_contract>",
        "<tool_guidance>",
        "<ruleset>",
    ):
        assert tag in full
    assert "<identity>" not in naked and "<security_rules>" in naked
    assert "search mode" in lib.system_prompt("search", "gpt-4o")
    with pytest.raises(ValueError):
        lib.system_prompt("loud", "gpt-4o")


def test_per_model_discipline(lib: PromptLibrary) -> None:
    assert "disclaimers" in lib.system_prompt("full", "anthropic/claude-sonnet-4-5")
    assert "non-interactive" in lib.system_prompt("full", "gemini/gemini-2.5-pro")
    assert "pseudo-code" in lib.system_prompt("full", "deepseek/deepseek-chat")
    assert "Keep going" in lib.system_prompt("full", "gpt-4o")


def test_environment_message_is_dynamic_and_marked(lib: PromptLibrary, tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always run `make test`.")
    msg = lib.environment_message(tmp_path)
    assert msg.role == "user" and msg.synthetic
    assert (
        "<workspace_context>" in msg.text
        and "Always run `make test`." in msg.text
        and "<user_instructions" in msg.text
    )
    assert str(tmp_path) not in lib.system_prompt(
        "full", "gpt-4o"
    )  # dynamic facts stay out of the system prompt
