"""FilterProcessor: the shell compressors, the YAML rule engine, the structural formats, the budget guard."""

from __future__ import annotations

import json

import pytest

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.filters.budget_guard import ContextBudgetGuard
from myrm_tui.context.filters.processor import FilterProcessor
from myrm_tui.context.filters.rules import RuleEngine
from myrm_tui.context.filters.shell import COMPRESSORS, compress_shell
from myrm_tui.context.filters.structural import structural_extract
from myrm_tui.context.text.trimming import trim_json_text
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.paths import prompts_dir
from tests.helpers import call, crowded_state, run_step, view_for


def _lines(n: int, fmt: str) -> str:
    return "\n".join(fmt.format(i=i) for i in range(n))


SHELL_CASES = {
    "git_status": (
        "git status",
        "On branch main\nChanges not staged for commit:\n\tmodified:   src/app.py\n"
        + _lines(40, "?? build/tmp_{i}.o"),
    ),
    "git_log": (
        "git log",
        _lines(
            20,
            "commit {i:040d}\nAuthor: A <a@b.c>\nDate:   Mon Jan 1 00:00:00 2024\n\n    Change "
            "number {i}\n\n    Long body text that nobody needs {i}\n",
        ),
    ),
    "git_diff": (
        "git diff",
        "diff --git a/src/app.py b/src/app.py\nindex 1..2 100644\n--- a/src/app.py\n+++ "
        "b/src/app.py\n@@ -1,40 +1,40 @@\n"
        + _lines(30, " context line {i}")
        + "\n-old line\n+new line\n"
        + _lines(30, " more context {i}"),
    ),
    "pytest": (
        "python -m pytest tests",
        "============ test session starts ============\nplatform linux\ncollected 300 items\n\n"
        + _lines(60, "tests/test_mod{i}.py ........................................ [ {i}%]")
        + "\n=================================== FAILURES ===================================\n"
        "___________ test_thing ___________\n\n    def test_thing():\n>       assert 1 == 2\n"
        "E       assert 1 == 2\n\ntests/test_x.py:3: AssertionError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_x.py::test_thing - assert 1 == 2\n"
        "========================= 1 failed, 299 passed in 3.2s ==========================",
    ),
    "npm": (
        "npm install",
        _lines(50, "npm WARN deprecated pkg{i}@1.0.0: use something else")
        + "\nadded 500 packages in 10s\nnpm ERR! code E404",
    ),
    "pip": (
        "pip install -r requirements.txt",
        _lines(50, "Requirement already satisfied: pkg{i} in ./venv")
        + "\nERROR: No matching distribution found for nothing==9",
    ),
    "cargo": (
        "cargo build",
        _lines(50, "   Compiling crate{i} v0.1.{i}")
        + "\nerror[E0308]: mismatched types\n --> src/main.rs:4:5\n  |\n4 |     1u8 + 'a'\n",
    ),
    "compiler": (
        "make all",
        _lines(80, "gcc -c file{i}.c -o file{i}.o")
        + "\nfile7.c:12:3: error: unknown type name 'foo'\n   12 |   foo x;\n      |   ^~~\nmake: "
        "*** [Makefile:3: all] Error 1",
    ),
    "listing": ("find . -name '*.py'", _lines(200, "./pkg/sub{i}/module{i}.py")),
    "grep": (
        "grep -rn TODO .",
        _lines(100, "src/big.py:{i}: # TODO item {i}") + "\n" + _lines(5, "src/other.py:{i}: TODO"),
    ),
    "docker": (
        "docker pull python:3.11",
        _lines(40, "a1b2c3d4e5f{i}: Pulling fs layer") + "\nStatus: Downloaded newer image for python:3.11",
    ),
    "progress": (
        "./download.sh",
        _lines(60, "Downloading part {i}  45%|█████     | 45/100 [00:01<00:01, 30.00it/s]")
        + "\nDone: saved model.bin",
    ),
}


def test_there_are_eleven_command_compressors_plus_progress() -> None:
    assert len(COMPRESSORS) == 12 and COMPRESSORS[-1].name == "progress"


@pytest.mark.parametrize("name", sorted(SHELL_CASES))
def test_each_shell_compressor_shortens_and_keeps_the_signal(name: str) -> None:
    command, output = SHELL_CASES[name]
    hit = compress_shell(command, output)
    assert hit is not None, name
    used, out = hit
    assert used == name
    assert len(out) < len(output) * 0.85
    must_keep = {
        "git_status": "modified:   src/app.py",
        "git_log": "Change number 19",
        "git_diff": "+new line",
        "pytest": "FAILED tests/test_x.py::test_thing",
        "npm": "npm ERR! code E404",
        "pip": "ERROR: No matching distribution",
        "cargo": "error[E0308]",
        "compiler": "error: unknown type name",
        "listing": "./pkg/sub0/module0.py",
        "grep": "src/other.py",
        "docker": "Status: Downloaded",
        "progress": "Done: saved model.bin",
    }[name]
    assert must_keep in out


def test_rule_engine_loads_yaml_and_user_rules_override() -> None:
    engine = RuleEngine.from_dirs([prompts_dir() / "filters"])
    out = engine.apply(
        "apt-get install -y curl", _lines(30, "Get:{i} http://deb x") + "\nE: Unable to locate package nope"
    )
    assert out is not None and "E: Unable to locate" in out[1] and "Get:3" not in out[1]
    engine.load_text("rules:\n  - name: apt\n    command: '^apt-get'\n    drop: ['^E:']\n")
    assert "E: Unable" not in (engine.apply("apt-get install x", "keep\n" + "E: Unable to fetch\n" * 5)[1])  # type: ignore[index]
    with pytest.raises(ValueError, match="bad filter rule"):
        engine.load_text("rules:\n  - name: broken\n    command: '('\n")


STRUCTURED = {
    "json": json.dumps(
        {"items": [{"id": i, "name": f"item {i}", "tags": list(range(20))} for i in range(200)], "total": 200}
    ),
    "stacktrace": "Traceback (most recent call last):\n"
    + _lines(30, '  File "/app/mod{i}.py", line {i}, in f{i}\n    call_{i}()')
    + "\nRuntimeError: deep failure",
    "xml": "<root>"
    + "".join(f"<item id='{i}'><name>n{i}</name><value>{i}</value></item>" for i in range(300))
    + "</root>",
    "csv": "id,name,score\n" + _lines(500, "{i},name{i},{i}.5"),
    "markdown_table": "| a | b |\n|---|---|\n" + _lines(100, "| {i} | v{i} |"),
    "toml": "[tool.x]\n" + _lines(200, "key{i} = {i}") + "\n[tool.y]\nname = 'y'\n",
    "ini": "[section]\n" + _lines(200, "key{i} = value{i}") + "\n[other]\na = b\n",
    "yaml": "services:\n" + _lines(150, "  svc{i}:\n    image: img{i}\n    ports: ['{i}:80']"),
    "log": _lines(300, "2024-05-01 12:00:{i:02d} INFO request {i} served")
    + "\n2024-05-01 12:10:00 ERROR database timeout after 30s",
}


@pytest.mark.parametrize("fmt", sorted(STRUCTURED))
def test_structural_filter_recognises_nine_formats(fmt: str) -> None:
    text = STRUCTURED[fmt]
    hit = structural_extract(text)
    assert hit is not None and hit[0] == fmt
    assert len(hit[1]) < len(text)
    if fmt == "json":
        json.loads(hit[1])  # still valid JSON
    if fmt == "stacktrace":
        assert "RuntimeError: deep failure" in hit[1]
    if fmt == "log":
        assert "ERROR database timeout" in hit[1]


def test_structural_filter_leaves_prose_alone() -> None:
    assert structural_extract("Just a paragraph of ordinary prose.\n" * 50) is None


def test_stacktrace_filter_keeps_every_error_between_the_kept_frames() -> None:
    """A test run with several tracebacks: the middle ones' exception and test-header lines stay verbatim
    (with the frame that raised), only the repeated frames go."""
    block = (
        "=" * 70
        + "\nERROR: test_case_{i} (pkg.tests.T)\n"
        + "-" * 70
        + "\nTraceback (most recent call last):\n"
        + _lines(6, '  File "/app/lib{i}.py", line {i}, in step{i}\n    step_{i}()')
        + '\n  File "/app/enc.py", line 8{i}, in encode\n    return s.encode("ascii")\n'
        + "UnicodeEncodeError: 'ascii' codec can't encode character '\\xe9' in position {i}\n"
    )
    text = "".join(block.replace("{i}", str(k)) for k in range(6)) + "\nFAILED (errors=6)"
    hit = structural_extract(text)
    assert hit is not None and hit[0] == "stacktrace" and len(hit[1]) < len(text) // 2
    for k in range(6):
        assert f"ERROR: test_case_{k} (pkg.tests.T)" in hit[1]
        assert f"character '\\xe9' in position {k}" in hit[1]
        assert f'  File "/app/enc.py", line 8{k}, in encode' in hit[1]
    assert (
        hit[1].endswith("FAILED (errors=6)")
        and hit[1].count('File "/app/lib') < text.count('File "/app/lib') // 3
    )


def test_json_skeleton_limits_depth_keys_items() -> None:
    deep = {
        "a": {"b": {"c": {"d": {"e": {"f": 1}}}}},
        **{f"k{i}": i for i in range(30)},
        "list": list(range(100)),
    }
    out = json.loads(trim_json_text(json.dumps(deep), 4, 12, 6) or "null")
    assert len(out) == 13 and "…" in out
    assert out["a"]["b"]["c"]["d"] == "<object with 1 keys>"


def test_budget_guard_vaults_oversized_output_and_adapts_to_budget() -> None:
    cfg = ContextConfig(max_context_tokens=200_000)
    guard = ContextBudgetGuard(cfg)
    vault = ArtifactVault("t")
    big = json.dumps([{"row": i, "payload": "x" * 100} for i in range(2000)])  # ~200 KB of JSON
    res = guard.guard(big, "bash", remaining_tokens=150_000, vault=vault)
    assert res is not None and res.uri in vault and vault.get_cached(res.uri).content == big  # type: ignore[union-attr]
    skeleton = res.text.split("\n[", 1)[0]
    json.loads(skeleton)
    assert (
        guard.limit(150_000) == 100_000 and guard.limit(2_000) == 4_000
    )  # the fuller the window, the harder the cut
    assert guard.guard(big, "file_read_tool", 150_000, vault) is None  # exempt


async def test_filter_processor_is_sticky_and_vaults_originals() -> None:
    _, output = SHELL_CASES["pytest"]
    raw = [
        Message(role="user", content="run tests", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c1", "python -m pytest tests"),)),
        Message(
            role="tool",
            content=f"<returncode>1</returncode>\n<output>\n{output}\n</output>",
            id="t",
            tool_call_id="c1",
        ),
    ]
    view = view_for(raw)
    proc = FilterProcessor()
    first = await run_step(proc, view)
    out = first.messages
    assert out[2].text.startswith("<returncode>1</returncode>")
    uri = out[2].meta["vault_uri"]
    assert view.request.vault.get_cached(uri).content == raw[2].content  # type: ignore[union-attr]
    assert first.decisions == {"t": out[2]}
    # The Transaction keeps the decision; the next request reuses it (the same message object).
    view.request.state.decisions.update(first.decisions)
    again = (await run_step(proc, view)).messages
    assert again[2] is out[2]


async def test_filter_processor_exempts_file_tools() -> None:
    raw = [
        Message(role="user", content="read", id="u"),
        Message(
            role="assistant",
            content=None,
            id="a",
            tool_calls=(ToolCall("c1", "file_read_tool", '{"paths": ["x.log"]}'),),
        ),
        Message(role="tool", content=STRUCTURED["log"] * 20, id="t", tool_call_id="c1"),
    ]
    out = (await run_step(FilterProcessor(), view_for(raw))).messages
    assert out[2] is raw[2]


async def test_head_tail_fallback_keeps_salient_middle_lines_verbatim() -> None:
    """A long unstructured output cut to head and tail keeps the result and error lines of its middle."""
    from myrm_tui.context.filters.processor import FilterProcessor
    from myrm_tui.context.types import Message
    from tests.helpers import call, crowded_state, run_step, view_for

    middle = [f"step {i}: still working on item {i * 7}" for i in range(900)]
    middle[450] = "sqlite3.OperationalError: no such table: __main___product"
    middle[451] = "FAILED (failures=3, errors=3, skipped=8)"
    body = "\n".join(middle)
    raw = [
        Message(role="user", content="go", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c1", "python run_all.py"),)),
        Message(
            role="tool",
            content=f"<returncode>1</returncode>\n<output>\n{body}\n</output>",
            id="t",
            tool_call_id="c1",
        ),
    ]
    out = (await run_step(FilterProcessor(), view_for(raw, crowded_state()), window=16_000)).messages
    text = out[2].text
    assert len(text) < len(raw[2].text) // 3 and "vault://" in text
    assert "sqlite3.OperationalError: no such table: __main___product" in text
    assert "FAILED (failures=3, errors=3, skipped=8)" in text
    assert text.startswith("<returncode>1</returncode>")


def test_a_coloured_test_run_keeps_its_summary_line() -> None:
    """Colour codes split ``188 passed`` from the ``=====`` rule the pytest compressor looks for."""
    from myrm_tui.context.filters.shell import compress_shell

    run = (
        "\x1b[1m============================= test session starts ==============================\x1b[0m\n"
        "platform linux -- Python 3.9.21, pytest-7.4.4\nrootdir: /testbed\ncollected 188 items\n\n"
        + _lines(
            40,
            "sklearn/tests/test_m{i}.py "
            "\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m                      [ {i}%]\x1b[0m",
        )
        + "\n\x1b[32m============================= \x1b[32m\x1b[1m188 passed\x1b[0m\x1b[32m in "
        "1.04s\x1b[0m\x1b[32m =====\x1b[0m\n"
    )
    hit = compress_shell("pytest sklearn/tests -q", run)
    assert hit is not None and hit[0] == "pytest"
    assert "188 passed in 1.04s" in hit[1] and "collected 188 items" in hit[1] and "\x1b" not in hit[1]


async def test_the_single_output_limit_is_a_quarter_of_a_small_windows_budget() -> None:
    """At a 4K window one 1,500-token output is almost half the input budget: kept whole, the next round
    jumps from below the compaction point to over the budget (the emergency net). In a session whose view it
    crowds it is filtered on arrival there (its whole text in the vault), and left as it is at 16K, where it
    is a tenth."""
    lines = [
        f"row {i}: value={i * 37 % 1000} status={'ok' if i % 5 else 'stale'} owner=team-{i % 9}"
        for i in range(100)
    ]
    raw = [
        Message(role="user", content="go", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c1", "python dump.py"),)),
        Message(role="tool", content="\n".join(lines), id="t", tool_call_id="c1"),
    ]
    small, large = ContextConfig(max_context_tokens=4_000), ContextConfig(max_context_tokens=16_000)
    view = view_for(raw, crowded_state())
    size = view.request.counter.message(raw[2])
    assert small.input_budget // 4 < size < large.filter_single_tokens
    at_4k = (await run_step(FilterProcessor(), view, config=small)).messages[2]
    assert view.request.counter.message(at_4k) <= small.input_budget // 4
    kept = view.request.vault.get_cached(at_4k.meta["vault_uri"])
    assert kept is not None and kept.content == raw[2].content and "vault://" in at_4k.text
    at_16k = (await run_step(FilterProcessor(), view_for(raw, crowded_state()), config=large)).messages[2]
    assert at_16k is raw[2]
