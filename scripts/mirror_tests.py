"""Make the test tree mirror the package (issue #47 item 6a): ``tests/context/steps/test_compress.py`` tests
``myrm_tui/context/steps/compress.py``.

Run from anywhere inside the checkout, after ``scripts/move_context.py``: ``python scripts/mirror_tests.py``
(``--check`` also counts the tests pytest collects before and after, which must be equal). ``PLACES`` says
where each test module belongs, decided by reading what it imports and tests; a test of one module sits beside
that module's path and is named after it, a test that spans a flow (the agent loop, the store and the emulator
together) is under ``tests/flows/``, and the TUI's tests stay under ``tests/app/`` (its ``conftest.py`` and
``__snapshots__/`` apply there). The script ``git mv``s each module still at its old place (with its snapshot
folder, if any), adds the new folders' ``__init__.py``, moves ``Path(__file__).parents[k]`` by the change of
depth, and rewrites every reference: imports between tests, dotted names, ``tests/...py`` paths (node ids in
``tests/protections.py``, the Makefile, pyproject, READMEs, docs, CI) and a renamed module's bare name in
backticks. Idempotent: a second run changes nothing; a test module ``PLACES`` does not know is reported.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from _rewrite import from_package_imports, git, text_files, tidy, toplevel

# Every test module and its place. Same path: it already sits where it belongs (the comment says why when
# that is not its module's name).
PLACES: dict[str, str] = {
    # context/: one test module per module, in the package's rooms
    "tests/context/test_thinking.py": "tests/context/steps/test_thinking.py",
    "tests/context/test_media.py": "tests/context/steps/test_media.py",
    "tests/context/test_trims.py": "tests/context/steps/test_trims.py",  # reasoning.py, answered.py
    "tests/context/test_ttl_prune.py": "tests/context/steps/test_ttl_prune.py",
    "tests/context/test_precompact.py": "tests/context/steps/test_precompact.py",
    "tests/context/test_fit.py": "tests/context/steps/test_fit.py",
    "tests/context/test_fit_properties.py": "tests/context/steps/test_fit_properties.py",
    "tests/context/test_compress.py": "tests/context/steps/test_compress.py",
    "tests/context/test_notes.py": "tests/context/steps/test_notes.py",
    "tests/context/test_summarize.py": "tests/context/steps/test_summarize.py",
    "tests/context/test_compaction_scale.py": "tests/context/steps/test_summarize_scale.py",
    "tests/context/test_reread.py": "tests/context/steps/test_reread.py",
    "tests/context/test_normalize.py": "tests/context/steps/test_normalize.py",
    "tests/context/test_cache_optimize.py": "tests/context/steps/test_cache_optimize.py",
    "tests/context/test_summary_model.py": "tests/context/summary/test_fields.py",
    "tests/context/test_ledger.py": "tests/context/summary/test_ledger.py",
    "tests/context/test_supersede.py": "tests/context/summary/test_supersede.py",  # ledger's merge by meaning
    "tests/context/test_compaction_point.py": "tests/context/steps/test_compaction_point.py",  # precompact.py
    "tests/context/test_ledger_density.py": "tests/context/summary/test_ledger_density.py",
    "tests/context/test_used_facts.py": "tests/context/summary/test_used_facts.py",  # ledger.used_lines
    "tests/context/test_stated_facts.py": "tests/context/summary/test_stated_facts.py",  # ledger.py
    "tests/context/test_intent.py": "tests/context/compaction/test_intent.py",
    "tests/context/test_filters.py": "tests/context/filters/test_filters.py",  # the four filter modules
    "tests/agent/test_redact.py": "tests/context/privacy/test_redact.py",
    "tests/context/test_context_map.py": "tests/context/test_context_map.py",  # README vs build_pipeline
    "tests/context/test_pipeline_properties.py": "tests/context/test_pipeline_properties.py",
    "tests/context/test_message_ids.py": "tests/context/test_message_ids.py",  # invariants.with_unique_ids
    "tests/context/test_cache_break_properties.py": "tests/context/report/test_cache_break.py",
    "tests/context/test_keep_referenced.py": "tests/context/text/test_referred.py",  # and the answered trim
    "tests/context/test_state_edits.py": "tests/context/test_state_edits.py",  # state.py and edits.py
    "tests/context/test_step_contract.py": "tests/context/test_step_contract.py",
    "tests/context/test_config.py": "tests/context/test_config.py",
    "tests/context/test_tokens.py": "tests/context/test_tokens.py",
    "tests/context/test_vault.py": "tests/context/test_vault.py",
    # flows: the agent loop, the store and the emulator together
    "tests/context/test_cache.py": "tests/flows/test_prompt_cache.py",
    "tests/context/test_call_shapes.py": "tests/flows/test_call_shapes.py",
    "tests/context/test_poisons.py": "tests/flows/test_poisons.py",
    "tests/context/test_secrets_at_rest.py": "tests/flows/test_secrets_at_rest.py",
    # agent/ and agent/tools/
    "tests/agent/test_agent.py": "tests/agent/test_agent.py",
    "tests/agent/test_api.py": "tests/agent/test_api.py",
    "tests/agent/test_context_settings_builder.py": "tests/agent/test_context_settings_builder.py",  # factory
    "tests/agent/test_guards_attacks.py": "tests/agent/test_guards_attacks.py",  # permissions and the sandbox
    "tests/agent/test_hooks.py": "tests/agent/test_hooks.py",
    "tests/agent/test_hot_rebuild.py": "tests/agent/test_hot_rebuild.py",
    "tests/agent/test_mcp.py": "tests/agent/test_mcp_client.py",
    "tests/agent/test_over_window_turn.py": "tests/agent/test_over_window_turn.py",  # turn.py, huge history
    "tests/agent/test_permissions.py": "tests/agent/test_permissions.py",
    "tests/agent/test_permissions_writes.py": "tests/agent/test_permissions_writes.py",
    "tests/agent/test_prompts.py": "tests/agent/test_prompts.py",
    "tests/agent/test_reply_bounds.py": "tests/agent/test_tool_runner.py",
    "tests/agent/test_resilience.py": "tests/agent/test_resilience.py",  # summarizer, breaker, aux shields
    "tests/agent/test_sandbox.py": "tests/agent/test_sandbox.py",
    "tests/agent/test_stream_json.py": "tests/agent/test_stream_json.py",
    "tests/agent/test_summary_path.py": "tests/agent/test_summary_prep.py",
    "tests/agent/test_boundary.py": "tests/agent/tools/test_boundary.py",  # files and search tools
    "tests/agent/test_history_search_tool.py": "tests/agent/tools/test_history.py",
    "tests/agent/test_jobs.py": "tests/agent/tools/test_jobs.py",
    "tests/agent/test_subagent.py": "tests/agent/tools/test_subagent.py",
    "tests/agent/test_tool_hardening.py": "tests/agent/tools/test_tool_hardening.py",
    "tests/agent/test_tools.py": "tests/agent/tools/test_tools.py",
    # app/: TUI flows stay here (conftest.py, __snapshots__/); a widget's or a screen's own test beside it
    "tests/app/test_chat_message.py": "tests/app/widgets/test_chat_message.py",
    "tests/app/test_chat_render.py": "tests/app/widgets/test_chat_render.py",
    "tests/app/test_chat_search.py": "tests/app/widgets/test_chat_search.py",
    "tests/app/test_chat_window.py": "tests/app/widgets/test_chat_window.py",
    "tests/app/test_one_handler.py": "tests/app/flows/test_one_handler.py",  # every flow's handlers, once
    "tests/app/test_perf_doc.py": "tests/app/test_perf.py",  # app/perf.py writes docs/perf.md
    "tests/app/test_vault_pane.py": "tests/app/widgets/test_vault_pane.py",
    "tests/app/test_approval_keys.py": "tests/app/screens/test_approval.py",
    "tests/app/test_app_agent_door.py": "tests/app/test_app_agent_door.py",
    "tests/app/test_app_failures_logged.py": "tests/app/test_app_failures_logged.py",
    "tests/app/test_compaction_view.py": "tests/app/test_compaction_view.py",
    "tests/app/test_first_hour_smalls.py": "tests/app/test_first_hour_smalls.py",
    "tests/app/test_focus_keys.py": "tests/app/test_focus_keys.py",
    "tests/app/test_fork.py": "tests/app/test_fork.py",
    "tests/app/test_hangup.py": "tests/app/test_hangup.py",
    "tests/app/test_numbers_agree.py": "tests/app/test_numbers_agree.py",
    "tests/app/test_pickers.py": "tests/app/test_pickers.py",
    "tests/app/test_prompt_input_order.py": "tests/app/test_prompt_input_order.py",  # input + key router
    "tests/app/test_replay.py": "tests/app/test_replay.py",
    "tests/app/test_tui.py": "tests/app/test_tui.py",
    "tests/app/test_tui_cards.py": "tests/app/test_tui_cards.py",
    "tests/app/test_tui_embedded.py": "tests/app/test_tui_embedded.py",
    "tests/app/test_tui_everyday.py": "tests/app/test_tui_everyday.py",
    "tests/app/test_tui_keys.py": "tests/app/test_tui_keys.py",
    "tests/app/test_tui_long_session.py": "tests/app/test_tui_long_session.py",
    "tests/app/test_tui_panels.py": "tests/app/test_tui_panels.py",
    "tests/app/test_tui_signals.py": "tests/app/test_tui_signals.py",
    "tests/app/test_untrusted_text.py": "tests/app/test_untrusted_text.py",
    "tests/app/test_inert_text.py": "tests/app/test_inert_text.py",  # every widget, generated strings
    "tests/app/test_terminal_bytes.py": "tests/app/test_terminal_guard.py",  # terminal_guard's input decoder
    "tests/app/test_quit_mid_reply.py": "tests/app/widgets/test_quit_mid_reply.py",  # chat_message.py
    # llm/ and testing/ (the emulator is myrm_tui/testing/emulator.py)
    "tests/llm/test_emulator.py": "tests/testing/test_emulator.py",
    "tests/llm/test_llm_client.py": "tests/llm/test_client.py",
    "tests/llm/test_local_model.py": "tests/llm/test_local.py",
    "tests/llm/test_endless_stream.py": "tests/llm/test_endless_stream.py",  # progress.py's watchdog
    "tests/llm/test_openai_body.py": "tests/llm/test_openai_body.py",
    "tests/llm/test_registry.py": "tests/llm/test_registry.py",
    "tests/llm/test_wire.py": "tests/llm/test_wire.py",  # what reaches the provider, off the raw bodies
    "tests/llm/test_wire_images.py": "tests/llm/test_wire_images.py",
    "tests/llm/test_wire_small.py": "tests/llm/test_wire_small.py",
    # store/
    "tests/store/test_foreign.py": "tests/store/test_foreign.py",
    "tests/store/test_foreign_layouts.py": "tests/store/test_foreign_layouts.py",  # foreign.py, by layout
    "tests/store/test_foreign_recorded.py": "tests/store/test_foreign_recorded.py",  # bench/foreign data
    "tests/store/test_history_search.py": "tests/store/test_history.py",
    "tests/store/test_session_lease.py": "tests/store/test_leases.py",
    "tests/store/test_store.py": "tests/store/test_store.py",  # db.py, schema.py: the store as a whole
    "tests/store/test_any_text_stored.py": "tests/store/test_base.py",  # base.WholeTextConnection
    "tests/store/test_store_concurrency.py": "tests/store/test_store_concurrency.py",
    "tests/store/test_store_faults.py": "tests/store/test_store_faults.py",
    "tests/store/test_writer_lock.py": "tests/store/test_writer_lock.py",
    # bench/
    "tests/bench/test_bench.py": "tests/bench/test_bench.py",  # run.py end to end on a small corpus
    "tests/bench/test_bench_input.py": "tests/bench/test_corpus.py",
    "tests/bench/test_bench_metrics.py": "tests/bench/test_bench_metrics.py",  # runner.py and report.py
    "tests/bench/test_bench_summarizer.py": "tests/bench/test_summarizer.py",
    "tests/bench/test_corpus_replay.py": "tests/bench/test_corpus_replay.py",  # every corpus conversation
    "tests/bench/test_hand_probes.py": "tests/bench/test_hand_probes.py",  # bench/probes/ data
    "tests/bench/test_one_budget.py": "tests/bench/test_one_budget.py",  # strategies.py and the agent agree
    "tests/bench/test_probegen.py": "tests/bench/test_probegen.py",
    # cli: runs of the command line; config.py's own test at the top, beside the module
    "tests/cli/test_config.py": "tests/test_config.py",
    "tests/cli/test_cli.py": "tests/cli/test_cli.py",
    "tests/cli/test_export.py": "tests/cli/test_export.py",
    "tests/cli/test_global_options.py": "tests/cli/test_global_options.py",
    "tests/cli/test_option_positions.py": "tests/cli/test_option_positions.py",
    "tests/cli/test_untrusted_output.py": "tests/cli/test_untrusted_output.py",
    "tests/cli/test_import_hygiene.py": "tests/cli/test_import_hygiene.py",
    "tests/cli/test_packaging.py": "tests/cli/test_packaging.py",
    "tests/cli/test_tui_options.py": "tests/cli/test_tui_options.py",
    "tests/acp/test_server.py": "tests/acp/test_server.py",
    # the whole package
    "tests/test_aio.py": "tests/test_aio.py",
    "tests/test_failures_logged.py": "tests/test_failures_logged.py",
    "tests/test_gc_policy.py": "tests/test_gc_policy.py",
    "tests/test_import_cycles.py": "tests/test_import_cycles.py",
    "tests/test_protections_fresh.py": "tests/test_protections_fresh.py",
    "tests/test_warm.py": "tests/test_warm.py",
    "tests/test_docs.py": "tests/test_docs.py",  # README, CONTRIBUTING and docs/
    "tests/test_move_scripts.py": "tests/test_move_scripts.py",  # scripts/move_context.py, mirror_tests.py
}
MOVES = {old: new for old, new in PLACES.items() if old != new}
# The scripts and their test hold the old names on purpose.
SKIP = ("scripts/", "tests/test_move_scripts.py")
PARENTS = re.compile(r"(Path\(__file__\)(?:\.resolve\(\))?\.parents\[)(\d+)\]")


def _dotted(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


DOTTED = {_dotted(old): _dotted(new) for old, new in MOVES.items()}
DOTTED_RE = re.compile(r"(?<![\w.])(" + "|".join(re.escape(d) for d in DOTTED) + r")\b")
SLASH_RE = re.compile(r"(?<![\w/.-])(" + "|".join(re.escape(p) for p in MOVES) + r")")
# A renamed module named bare in backticks (``test_approval_keys.py``) becomes its full new path.
RENAMED = {Path(o).name: n for o, n in MOVES.items() if Path(o).name != Path(n).name}
BARE_RE = re.compile(r"(?<=`)(" + "|".join(re.escape(b) for b in RENAMED) + r")(?=`)")
FROM_PARENTS: dict[str, dict[str, tuple[str, str]]] = {}
for _old, _new in DOTTED.items():
    FROM_PARENTS.setdefault(_old.rpartition(".")[0], {})[_old.rpartition(".")[2]] = _new.rpartition(".")[::2]


def _deeper(shift: int) -> Callable[[re.Match[str]], str]:
    """In a module moved ``shift`` folders deeper, ``parents[k]`` becomes ``parents[k + shift]``."""
    return lambda m: f"{m.group(1)}{int(m.group(2)) + shift}]"


def rewrite(path: str, text: str) -> str:
    out = text
    if path.endswith(".py"):
        for parent, moves in FROM_PARENTS.items():
            out = from_package_imports(out, parent, moves)
    out = DOTTED_RE.sub(lambda m: DOTTED[m.group(1)], out)
    out = SLASH_RE.sub(lambda m: MOVES[m.group(1)], out)
    return BARE_RE.sub(lambda m: RENAMED[m.group(1)], out)


def _init_files(root: Path, folder: Path, touched: set[str]) -> None:
    """An ``__init__.py`` in every folder from ``tests/`` down to ``folder`` (the tests are a package)."""
    for d in [folder, *folder.parents]:
        if d == root or not d.is_relative_to(root / "tests"):
            break
        init = d / "__init__.py"
        if not init.exists():
            d.mkdir(parents=True, exist_ok=True)
            init.write_text("", encoding="utf-8")
            git(root, "add", str(init.relative_to(root)))
            touched.add(str(init.relative_to(root)))


def move(root: Path, touched: set[str]) -> None:
    for old, new in MOVES.items():
        src, dst = root / old, root / new
        if src.exists() and dst.exists():
            sys.exit(f"both {old} and {new} exist: merge them by hand")
        if not src.exists():
            if not dst.exists():
                print(f"{old}: gone (renamed or removed since the table was written)")
            continue
        _init_files(root, dst.parent, touched)
        git(root, "mv", old, new)
        touched.add(new)
        snaps = src.parent / "__snapshots__" / src.stem  # pytest-textual-snapshot's folder for this module
        if snaps.is_dir():
            (dst.parent / "__snapshots__").mkdir(exist_ok=True)
            to = dst.parent / "__snapshots__" / dst.stem
            git(root, "mv", str(snaps.relative_to(root)), str(to.relative_to(root)))
        shift = len(Path(new).parts) - len(Path(old).parts)
        if shift:
            text = dst.read_text(encoding="utf-8")
            text = PARENTS.sub(_deeper(shift), text)
            dst.write_text(text, encoding="utf-8")
    known = set(PLACES) | set(PLACES.values())
    for path in git(root, "ls-files", "tests").splitlines():
        if Path(path).name.startswith("test_") and path.endswith(".py") and path not in known:
            print(f"{path}: not in PLACES (new since the table was written): give it a place by hand")


def references(root: Path, touched: set[str]) -> None:
    for path in text_files(root, skip=SKIP):
        p = root / path
        text = p.read_text(encoding="utf-8")
        new = rewrite(path, text)
        if new != text:
            p.write_text(new, encoding="utf-8")
            touched.add(path)


def collected(root: Path) -> int:
    """How many tests pytest collects (the count must not change with the move)."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout
    found = re.search(r"(\d+) tests? collected", out)
    if not found:
        sys.exit("pytest --collect-only failed:\n" + out[-3000:])
    return int(found.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="count the collected tests before and after")
    ap.add_argument("--no-ruff", action="store_true", help="skip ruff check --fix / ruff format")
    args = ap.parse_args()
    root = toplevel()
    before = collected(root) if args.check else 0
    touched: set[str] = set()
    move(root, touched)
    references(root, touched)
    print(f"{len(touched)} files touched")
    if not args.no_ruff:
        tidy(root, sorted(t for t in touched if t.endswith(".py")))
    if args.check:
        after = collected(root)
        print(f"tests collected: {before} before, {after} after")
        return 0 if before == after else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
