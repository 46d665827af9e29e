"""Proof that every protection is tested: remove each one and check that its tests fail.

Run with ``make protections`` (``python -m tests.protections [NAME ...]``). Each mutant replaces one
snippet of a protection with code that skips it, in a temporary copy of the tree, and runs the
tests named for it: they must fail. Not part of ``make test``: it runs pytest once a mutant.

A guarded place carries a marker line just above it, ``# guard: <id>`` (on its own line, so an edit of
the guarded line does not conflict with it; above the statement when the guarded code is inside one);
the mutant names the id, and its ``old`` snippet is searched only in the few lines after the marker. The
file is found by the marker anywhere under ``myrm_tui/``, so moving a module needs no edit here; a test
is named ``path::name`` and, once its file has moved, found by its name under ``tests/``. A marker or
snippet no longer found is an error (``test_protections_fresh.py`` checks them all at once), so the list
cannot silently go stale. A mutant written the old way, with a path instead of a marker id, is converted
(marker inserted, entry rewritten) by ``python scripts/anchor_protections.py``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^[ \t]*# guard: (\S+)[ \t]*$", re.M)
# How many lines after its marker a snippet may start: a second marker stacked above the same line, a
# statement whose guarded part is on its second or third line, or a guarded line a formatter split.
LOOKAHEAD = 3


@dataclass(frozen=True)
class Mutant:
    name: str
    marker: str  # the id of the ``# guard: <id>`` line above the guarded code
    old: str
    new: str
    tests: tuple[str, ...]


@dataclass(frozen=True)
class Site:
    """Where a mutant's snippet is: the file and the snippet's character span in it."""

    path: Path
    start: int
    end: int


class Stale(Exception):
    """A marker, snippet or test that is no longer where a mutant says; ``str()`` says what to fix."""


@functools.cache
def markers(root: Path = ROOT) -> dict[str, tuple[tuple[Path, int], ...]]:
    """Every marker id under ``root/myrm_tui`` -> where it is (file, offset of the end of its line)."""
    found: dict[str, list[tuple[Path, int]]] = {}
    for path in sorted((root / "myrm_tui").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "# guard: " not in text:
            continue
        for m in MARKER.finditer(text):
            found.setdefault(m.group(1), []).append((path, m.end()))
    return {k: tuple(v) for k, v in found.items()}


def locate(mutant: Mutant, root: Path = ROOT) -> Site:
    """The one place of ``mutant.old`` in the lines after its marker; ``Stale`` when there is none."""
    where = markers(root).get(mutant.marker, ())
    if len(where) != 1:
        if not where and mutant.marker.endswith(".py"):
            raise Stale(f"{mutant.name}: a path, not a marker id: run scripts/anchor_protections.py")
        raise Stale(f"{mutant.name}: marker '# guard: {mutant.marker}' found {len(where)} times in myrm_tui/")
    path, line_end = where[0]
    text = path.read_text(encoding="utf-8")
    stop = line_end
    for _ in range(LOOKAHEAD + mutant.old.count("\n")):
        nl = text.find("\n", stop + 1)
        stop = len(text) if nl < 0 else nl
    window = text[line_end : stop + 1]
    if window.count(mutant.old) != 1:
        rel = path.relative_to(root)
        raise Stale(
            f"{mutant.name}: snippet found {window.count(mutant.old)} times in the "
            f"{LOOKAHEAD} lines after '# guard: {mutant.marker}' ({rel})"
        )
    start = line_end + window.index(mutant.old)
    return Site(path, start, start + len(mutant.old))


def find_test(test: str, root: Path = ROOT) -> str:
    """A test's pytest id (``path::name``, or a whole file): as written while its file exists, else found
    by its function name (or a file by its name) under ``tests/``; ``Stale`` when not exactly one."""
    rel, sep, name = test.partition("::")
    if (root / rel).is_file():
        return test
    if not name:
        hits = list((root / "tests").rglob(Path(rel).name))
    else:
        define = re.compile(rf"^(?:async )?def {re.escape(name)}\(", re.M)
        hits = [
            p for p in (root / "tests").rglob("test_*.py") if define.search(p.read_text(encoding="utf-8"))
        ]
    if len(hits) != 1:
        raise Stale(f"{test}: no file {rel}, and {len(hits)} files under tests/ have it")
    return f"{hits[0].relative_to(root).as_posix()}{sep}{name}"


R, A, T, L, J, H = (
    "tests/agent/test_resilience.py",
    "tests/agent/test_agent.py",
    "tests/agent/tools/test_tools.py",
    "tests/llm/test_client.py",
    "tests/agent/tools/test_jobs.py",
    "tests/agent/test_hooks.py",
)
B = "tests/agent/tools/test_boundary.py"
F, P = "tests/context/steps/test_fit_properties.py", "tests/flows/test_poisons.py"
X = "tests/agent/tools/test_tool_hardening.py"
W = "tests/agent/tools/test_open_world.py"

E3 = "tests/llm/test_reach_errors.py"
RG = "tests/agent/test_repeat_guard.py"
OL = "tests/flows/test_output_limit.py"
AO = "tests/agent/test_approval_order.py"

UNDO = "tests/agent/test_undo.py"
MUTANTS = (
    Mutant(
        "provider errors: an unreachable endpoint, a 404 or a refused key names the address and the fix",
        "reach-errors-name-the-address-and-fix",
        "if endpoint is not None and (line := _endpoint_problem(exc, kind, status, text, endpoint)):",
        "if False and (line := _endpoint_problem(exc, kind, status, text, endpoint)):",
        (
            f"{E3}::test_a_closed_port_names_the_url_and_asks_if_the_server_runs",
            f"{E3}::test_a_connect_timeout_names_the_url",
            f"{E3}::test_a_base_without_v1_gets_a_404_that_suggests_it",
            f"{E3}::test_myrm_ask_prints_the_one_line",
        ),
    ),
    Mutant(
        "provider errors: the key sent, the environment's secrets and a URL's userinfo never in a message",
        "error-messages-hide-known-secrets",
        '        text = text.replace(secret, "***")\n',
        "        pass\n",
        (f"{E3}::test_no_message_holds_a_secret",),
    ),
    Mutant(
        "gateway hygiene: oversized message",
        "gateway-hygiene-oversized-message",
        "if tokens > self.settings.max_user_tokens:",
        "if False:",
        (f"{A}::test_huge_paste_is_refused_before_any_call",),
    ),
    Mutant(
        "dual timeout: inactivity watchdog",
        "dual-timeout-inactivity-watchdog",
        "if idle >= inactivity:",
        "if False:",
        (
            f"{L}::test_watchdog_with_fake_clock_tells_slow_from_dead",
            f"{R}::test_stalled_summarizer_is_cut_and_the_extractive_summary_used",
        ),
    ),
    Mutant(
        "dual timeout: progress touch",
        "dual-timeout-progress-touch",
        "                pc.touch()\n",
        "                pass\n",
        (f"{L}::test_watchdog_with_fake_clock_tells_slow_from_dead",),
    ),
    Mutant(
        "dual timeout: total ceiling",
        "dual-timeout-total-ceiling",
        "        return pc.elapsed() >= total\n",
        "        return False\n",
        (f"{L}::test_watchdog_total_ceiling_cuts_a_stream_that_never_ends",),
    ),
    Mutant(
        "circuit breaker: fail fast while open",
        "circuit-breaker-fail-fast-while-open",
        "if not self.breaker.allow():",
        "if False:",
        (f"{R}::test_open_breaker_skips_the_llm_and_uses_extractive",),
    ),
    Mutant(
        "circuit breaker: half-open probe",
        "circuit-breaker-half-open-probe",
        '            self._to("half_open")',
        "            pass",
        (f"{R}::test_breaker_opens_half_opens_and_closes",),
    ),
    Mutant(
        "aux ratio shield",
        "aux-ratio-shield",
        "tokens > self.aux_window * INPUT_SHARE\n",
        "False\n",
        (f"{R}::test_aux_ratio_shield_and_guard",),
    ),
    Mutant(
        "aux model guard",
        "aux-model-guard",
        "if self.counter.text(user) <= budget:",
        "if True:",
        (f"{R}::test_aux_ratio_shield_and_guard",),
    ),
    Mutant(
        "lite model falls back to the main model",
        "lite-model-falls-back-to-the-main-model",
        "if spec.model == self.main.model:\n                    raise",
        "if True:\n                    raise",
        (f"{R}::test_a_failing_lite_summarizer_falls_back_to_the_main_model",),
    ),
    Mutant(
        "lite model by default",
        "lite-model-by-default",
        "return lite_model(s.model) if not s.api_base else s.model",
        "return s.model",
        (f"{R}::test_summarizer_defaults_to_the_providers_lite_model_else_the_main_one",),
    ),
    Mutant(
        "L1 MCP vault spill",
        "l1-mcp-vault-spill",
        "if len(text) <= self.max_output_chars:",
        "if True:",
        ("tests/agent/test_mcp_client.py::test_mcp_tools_are_bound_called_spilled_and_survive_a_crash",),
    ),
    Mutant(
        "L2 subagent auto-vault",
        "l2-subagent-auto-vault",
        "    if len(text) <= VAULT_CHARS:",
        "    if True:",
        (
            "tests/agent/tools/test_subagent.py::test_child_log_is_vaulted_and_the_parent_stays_in_budget",
            "tests/agent/tools/test_subagent.py::test_distillation_tiers",
        ),
    ),
    Mutant(
        "L3 JSON skeleton item limit",
        "l3-json-skeleton-item-limit",
        "for v in value[:max_items]]",
        "for v in value]",
        (f"{R}::test_200kb_json_result_becomes_a_valid_skeleton_with_the_original_vaulted",),
    ),
    Mutant(
        "L4 stage 1: emergency level",
        "l4-stage-1-emergency-level",
        "level = Level.EMERGENCY  # stage 1",
        "pass  # stage 1",
        (f"{R}::test_overflow_stage_1_shrinks_tool_outputs_under_the_hard_limit",),
    ),
    Mutant(
        "L4 stage 2: drop oldest rounds",
        "l4-stage-2-drop-oldest-rounds",
        "view = self._drop_oldest_rounds(view, first, r, room)",
        "pass",
        (
            f"{R}::test_overflow_stage_2_drops_the_oldest_rounds_when_shrinking_is_not_enough",
            f"{R}::test_provider_overflow_is_recovered_in_one_retry",
        ),
    ),
    Mutant(
        "L4 recovery before the retry",
        "l4-recovery-before-the-retry",
        "await self._recover_overflow(exc, run.tokens)",
        "pass",
        (f"{R}::test_provider_overflow_is_recovered_in_one_retry",),
    ),
    Mutant(
        "L5 preflight guard",
        "l5-preflight-guard",
        "if run.tokens > session.config.input_budget:\n                # The preflight guard",
        "if False:\n                # The preflight guard",
        (f"{R}::test_preflight_refuses_a_request_that_cannot_fit_before_calling_the_api",),
    ),
    Mutant(
        "fit to budget: the last step",
        "fit-to-budget-the-last-step",
        "if v.tokens() <= (landing if v.compacting else budget):\n"
        "            return Fitted(messages=v.messages)",
        "if True:\n            return Fitted(messages=v.messages)",
        (f"{F}::test_every_request_fits_and_compactions_make_progress",),
    ),
    Mutant(
        "fit to budget: a compaction lands under the landing level (progress)",
        "fit-to-budget-a-compaction-lands-under",
        "landing = min(budget, s.landing_tokens - pins)",
        "landing = budget",
        (
            f"{F}::test_every_request_fits_and_compactions_make_progress",
            "tests/context/steps/test_fit.py::test_a_compaction_is_fitted_under_the_landing_level_not_just_under_the_budget",
        ),
    ),
    Mutant(
        "pre-compact: the tight band's point half a usual round over the landing (no thrashing at 4K)",
        "a-tight-point-half-a-usual-round-over-the-landing",
        "warm = max(min(warm, s.fit_budget - usual), min(warm, landed + usual // 2))",
        "warm = min(warm, s.fit_budget - usual)",
        (
            f"{F}::test_every_request_fits_and_compactions_make_progress",
            "tests/context/steps/test_compaction_point.py::test_the_point_is_the_latest_the_guarantee_allows",
        ),
    ),
    Mutant(
        "pipeline: a compaction's landing counts the pinned items",
        "the-landing-counts-the-pinned-items",
        '"landed": after + pinned_tokens(state.pinned, self.config.input_budget, req.counter),',
        '"landed": after,',
        (f"{F}::test_every_request_fits_and_compactions_make_progress",),
    ),
    Mutant(
        "head anchor: a first message over its share is cut into the vault",
        "head-anchor-a-first-message-over",
        "if not v.compacting or req.counter.messages(view[:head_len]) <= s.head_limit_tokens:",
        "if True:",
        (f"{P}::test_head_anchor_cuts_a_first_message_over_its_share_before_compress",),
    ),
    Mutant(
        "pre-compact: a view over the budget always compacts",
        "pre-compact-a-view-over-the-budget",
        "elif tokens > s.fit_budget:",
        "elif False:",
        (
            "tests/context/steps/test_precompact.py::test_a_view_over_the_budget_compacts_even_while_backing_off",
        ),
    ),
    Mutant(
        "tool names checked before anything is stored",
        "tool-names-checked-before-anything",
        "if not TOOL_NAME.match(name):",
        "if False:",
        (f"{P}::test_a_bad_tool_name_gets_an_error_naming_it_and_later_requests_stay_valid",),
    ),
    Mutant(
        "duplicate tool-call ids made unique",
        "duplicate-tool-call-ids-made-unique",
        "if cid in seen:",
        "if False:",
        (f"{P}::test_two_calls_sharing_one_id_each_get_their_own_result",),
    ),
    Mutant(
        "Normalize repairs a stored bad tool name",
        "normalize-repairs-a-stored-bad-tool-name",
        "if any(not TOOL_NAME.match(c.name) for c in calls):",
        "if False:",
        (f"{P}::test_a_stored_bad_tool_name_is_repaired_on_the_way_out",),
    ),
    Mutant(
        "a failing redaction degrades to [redacted]",
        "a-failing-redaction-degrades-to-redacted",
        "        return summary_model.redact_summary(summary)\n    except Exception as exc:",
        "        return summary_model.redact_summary(summary)\n    except ZeroDivisionError as exc:",
        (f"{P}::test_a_failing_redaction_degrades_once_and_the_compaction_commits",),
    ),
    Mutant(
        "summary blocks within their share: kept blocks merged into the new one",
        "summary-blocks-within-their-share-kept",
        "        if kept_blocks and share - kept_tokens < share // CONSOLIDATE_AT:",
        "        if False:",
        (
            "tests/context/summary/test_fields.py::test_summary_blocks_take_at_most_their_share_at_every_request",
        ),
    ),
    Mutant(
        "summary goal from the user's words, not the environment reminder",
        "summary-goal-from-the-users-words-not",
        "        head_user = summary_model.first_user_words(req.protected_head) or",
        '        head_user = next((m.text for m in req.protected_head if m.role == "user"), "") or',
        (
            "tests/context/summary/test_fields.py::"
            "test_a_session_that_starts_with_a_reminder_takes_the_users_first_words_as_its_goal",
        ),
    ),
    Mutant(
        "a stored reminder goal repaired before it is merged or sent as the previous summary",
        "a-stored-reminder-goal-repaired-before",
        "        previous = summary_model.repaired(state.summary, head_user)",
        "        previous = state.summary",
        (
            "tests/context/summary/test_fields.py::"
            "test_a_stored_reminder_goal_is_repaired_when_next_merged_and_never_sent_as_previous",
        ),
    ),
    Mutant(
        "notes within their share",
        "notes-within-their-share",
        "notes = bounded_notes(state.notes, s.injected_tokens, req.counter.text)",
        "notes = list(state.notes)",
        (f"{P}::test_notes_enter_the_view_within_their_share",),
    ),
    Mutant(
        "no summarizer call for a turn that cannot fit",
        "no-summarizer-call-for-a-turn-that",
        "        if floor:  # the turn will be refused",
        "        if False:  # the turn will be refused",
        (f"{P}::test_no_summarizer_call_is_paid_for_a_turn_that_cannot_fit",),
    ),
    Mutant(
        "L6 hook-output spiller",
        "l6-hook-output-spiller",
        "if self.counter.text(text) <= self.max_tokens:",
        "if True:",
        (f"{H}::test_oversized_hook_output_is_spilled_to_the_vault_with_a_preview",),
    ),
    Mutant(
        "L6 fallback without a vault",
        "l6-fallback-without-a-vault",
        "    if vault is None:\n        return text[:preview_chars]",
        "    if False:\n        return text[:preview_chars]",
        (
            f"{H}::test_hook_spiller_keeps_small_output_and_truncates_without_a_vault",
            "tests/agent/test_mcp_client.py::test_oversized_handler_falls_back_to_head_truncation_without_a_vault",
        ),
    ),
    Mutant(
        "L7 job output to disk",
        "l7-job-output-to-disk",
        "stdout=fd,\n                stderr=fd,",
        "stdout=asyncio.subprocess.DEVNULL,\n                stderr=asyncio.subprocess.DEVNULL,",
        (f"{J}::test_job_output_goes_to_an_owner_only_log_on_disk_and_big_reads_spill_to_the_vault",),
    ),
    Mutant(
        "L7 job log owner-only",
        "l7-job-log-owner-only",
        "os.O_TRUNC, 0o600)",
        "os.O_TRUNC, 0o644)",
        (f"{J}::test_job_output_goes_to_an_owner_only_log_on_disk_and_big_reads_spill_to_the_vault",),
    ),
    Mutant(
        "L7 big reads to the vault",
        "l7-big-reads-to-the-vault",
        "if len(text) > ctx.job_output_chars:",
        "if False:",
        (f"{J}::test_job_output_goes_to_an_owner_only_log_on_disk_and_big_reads_spill_to_the_vault",),
    ),
    Mutant(
        "L7 log size limit",
        "l7-log-size-limit",
        "if _log_size(job) > self.log_limit:",
        "if False:",
        (f"{J}::test_a_job_writing_past_the_log_limit_is_stopped",),
    ),
    Mutant(
        "binary output labelled",
        "binary-output-labelled",
        'if b"\\x00" in data[:8192]:',
        "if False:",
        (f"{T}::test_bash_binary_and_invalid_utf8_are_labelled",),
    ),
    Mutant(
        "redaction of summaries",
        "redaction-of-summaries",
        "    return redact_pii(redact_credentials(text))",
        "    return text",
        ("tests/context/privacy/test_redact.py", f"{R}::test_secrets_never_reach_stored_summaries"),
    ),
    Mutant(
        "database owner-only",
        "database-owner-only",
        "os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)",
        "os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)",
        ("tests/store/test_store.py::test_database_file_is_owner_only",),
    ),
    Mutant(
        "shell approval",
        "shell-approval",
        "if verdict.allowed:",
        "if True:",
        (
            f"{T}::test_bash_asks_for_approval_and_remembers_always",
            f"{J}::test_background_commands_still_need_approval",
        ),
    ),
    Mutant(
        "shell: every simple command covered",
        "shell-every-simple-command-covered",
        " and all(c.covered for c in self.commands)",
        "",
        (
            "tests/agent/test_permissions.py::test_smuggled_commands_never_run_without_an_approver",
            "tests/agent/test_permissions.py::test_ask_without_yes_never_runs_a_smuggled_command",
        ),
    ),
    Mutant(
        "shell: a write needs a rule that names it",
        "shell-a-write-needs-a-rule-that-names-it",
        "unnamed = tuple(w for w in c.writes if rule is None or w not in self.writes_named(rule))",
        "unnamed = ()",
        ("tests/agent/test_permissions_writes.py::test_writes_and_reads",),
    ),
    Mutant(
        "shell: a write beside a command that may change files asks",
        "shell-a-write-beside-a-command-that-may",
        "tuple(_check_line_writes(walker.commands))",
        "tuple(walker.commands)",
        (
            "tests/agent/test_permissions_writes.py::test_a_checkout_that_swaps_a_folder_for_a_symlink_writes_nothing_outside",
        ),
    ),
    Mutant(
        "shell: read-only commands stay inside the workspace",
        "shell-read-only-commands-stay-inside",
        "if not _within(workspace, full):",
        "if False:",
        ("tests/agent/test_permissions_writes.py::test_writes_and_reads",),
    ),
    Mutant(
        "shell: rules are token prefixes",
        "shell-rules-are-token-prefixes",
        "if tuple(tokens[: len(rule)]) == rule:",
        "if tokens[0] == rule[0]:",
        ("tests/agent/test_permissions.py::test_rules_are_token_prefixes",),
    ),
    Mutant(
        "shell: expansions are not literal words",
        "shell-expansions-are-not-literal-words",
        '        return "", self._expansion(node)',
        "        return self.text(node), None",
        ("tests/agent/test_permissions.py::test_smuggled_commands_never_run_without_an_approver",),
    ),
    Mutant(
        "shell: redirects confined to the workspace",
        "shell-redirects-confined",
        "if full != self.workspace and self.workspace not in full.parents:",
        "if False:",
        (
            "tests/agent/test_permissions.py::test_a_symlink_out_of_the_workspace_is_outside",
            "tests/agent/test_permissions.py::test_smuggled_commands_never_run_without_an_approver",
        ),
    ),
    Mutant(
        "shell: words after a redirect target are the command's",
        "shell-words-after-a-redirect-target-are",
        "for extra in _split_target(child)[1]:",
        "for extra in []:",
        ("tests/agent/test_permissions.py::test_what_runs_without_asking",),
    ),
    Mutant(
        "shell: background refused",
        "shell-background-refused",
        'self.problems.append("runs in the background (&)")',
        "pass",
        ("tests/agent/test_permissions.py::test_what_runs_without_asking",),
    ),
    Mutant(
        "pre_tool_use hook blocks",
        "pre-tool-use-hook-blocks",
        "if pre and pre[-1].blocks:",
        "if False:",
        (f"{H}::test_pre_tool_use_exit_2_blocks_the_tool_and_says_why",),
    ),
    Mutant(
        "workspace confinement",
        "workspace-confinement",
        "    return full == base or base in full.parents",
        "    return True",
        (
            f"{T}::test_paths_outside_the_workspace_are_refused",
            f"{T}::test_symlink_escape_is_refused",
            f"{B}::test_grep_through_a_symlinked_folder_reads_nothing_outside",
        ),
    ),
    Mutant(
        "grep/glob results confined",
        "grep-glob-results-confined",
        "        full = confined(root, base / rel)\n",
        "        full = (base / rel).resolve()\n",
        (
            f"{B}::test_grep_through_a_symlinked_folder_reads_nothing_outside",
            f"{B}::test_grep_skips_a_symlinked_file_that_leads_outside",
            f"{B}::test_glob_never_lists_what_a_symlink_leads_to_outside",
        ),
    ),
    Mutant(
        "only regular files are read",
        "only-regular-files-are-read",
        '(name for test, name in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a regular file"',
        "(), None",  # next((), None): every file counts as regular
        (
            f"{B}::test_reading_a_fifo_is_refused_at_once_and_never_blocks",
            f"{B}::test_devices_and_sockets_are_refused",
        ),
    ),
    Mutant(
        "file reads off the event loop",
        "file-reads-off-the-event-loop",
        "loaded = await asyncio.to_thread(_load, full, path)",
        "loaded = _load(full, path)",
        (f"{B}::test_file_reads_run_off_the_event_loop",),
    ),
    Mutant(
        "idle limit before the first byte",
        "idle-limit-before-the-first-byte",
        "if idle >= inactivity:",
        "if idle >= inactivity and pc.items:",
        (f"{L}::test_a_server_that_accepts_and_never_answers_is_cut_at_the_idle_limit",),
    ),
    Mutant(
        "watchdog wakes at the deadline",
        "watchdog-wakes-at-the-deadline",
        "await sleep(max(min(check_interval, due), MIN_WAIT))",
        "await sleep(check_interval)",
        (
            f"{L}::test_the_watchdog_fires_at_the_limit_and_says_the_real_numbers",
            f"{L}::test_a_server_that_accepts_and_never_answers_is_cut_at_the_idle_limit",
        ),
    ),
    Mutant(
        "cut stream: litellm's made-up finish is not trusted",
        "cut-stream-litellms-made-up-finish",
        "received = self.response.received_finish_reason or getattr(\n"
        '            self.response, "intermittent_finish_reason", None\n'
        "        )",
        "received = self.finish",
        (
            f"{L}::test_a_cut_stream_is_an_error_not_an_answer",
            f"{L}::test_empty_and_bogus_replies_are_clear_errors",
            f"{R}::test_ask_exits_1_with_one_line_on_a_cut_empty_or_bogus_stream",
        ),
    ),
    Mutant(
        "a stream without usage is counted by us",
        "a-stream-without-usage-is-counted-by-us",
        "            if not usage_seen:",
        "            if False:",
        ("tests/llm/test_local.py::test_embedded_model_streams_an_answer_from_a_child_process",),
    ),
    Mutant(
        "litellm counts no prompt with a tokenizer of its own",
        "litellm-counts-no-prompt-with",
        "    mod.disable_token_counter = True\n",
        "    pass\n",
        (f"{L}::test_a_streamed_call_loads_no_second_tokenizer",),
    ),
    Mutant(
        "empty reply is an error",
        "empty-reply-is-an-error",
        "        if not (self.chars or self.tool_calls):",
        "        if False:",
        (f"{L}::test_empty_and_bogus_replies_are_clear_errors",),
    ),
    Mutant(
        "cut stream retried once",
        "cut-stream-retried-once",
        "if isinstance(exc, IncompleteStreamError) and not cut_retried:",
        "if False:",
        (f"{R}::test_a_cut_stream_is_retried_once_and_its_partial_text_kept_marked",),
    ),
    Mutant(
        "cut stream's partial kept, marked",
        "cut-streams-partial-kept-marked",
        "                    await self._keep_cut_partial(partial)\n",
        "                    pass\n",
        (f"{R}::test_a_cut_stream_is_retried_once_and_its_partial_text_kept_marked",),
    ),
    Mutant(
        "one overflow retry per request, not per turn (13.7)",
        "one-overflow-retry-per-request-not-per",
        "            overflow_retried = cut_retried = False  # the next request",
        "            pass  # the next request",
        (f"{R}::test_every_overflow_of_a_turn_gets_its_own_retry",),
    ),
    # "jobs end with ask" (agent.close() in cli.py) is no longer a mutant of its own: removing it leaves the
    # jobs to the process watcher (agent/proc.py), which ends them when ask exits, so no test can tell;
    # the watcher is guarded by "tool process groups end with myrm (watcher)".
    Mutant(
        "job watcher survives a removed log",
        "job-watcher-survives-a-removed-log",
        "    except OSError:  # the log was removed",
        "    except ZeroDivisionError:  # the log was removed",
        (f"{J}::test_close_ends_a_job_that_removed_its_own_log",),
    ),
    Mutant(
        "vault confinement",
        "vault-confinement",
        "if namespace != ctx.vault.namespace and namespace not in ctx.extra_vault_namespaces:",
        "if False:",
        (
            f"{T}::test_vault_reads_with_line_ranges_stay_in_the_session",
            "tests/flows/test_injection.py::test_a_pointer_to_another_sessions_vault_in_a_file_is_not_followed",
        ),
    ),
    Mutant(
        "store: one transaction at a time",
        "store-one-transaction-at-a-time",
        "        async with self._lock:\n",
        '        async with __import__("contextlib").nullcontext():\n',
        (
            "tests/store/test_store_concurrency.py::test_fifty_concurrent_writers_never_raise_and_lose_nothing",
            "tests/store/test_store_concurrency.py::test_another_task_waits_for_the_transaction_and_is_not_rolled_back_with_it",
        ),
    ),
    Mutant(
        "store: a nested transaction is a savepoint",
        "store-a-nested-transaction",
        "if task is not None and task is self._owner:",
        "if False:",
        ("tests/store/test_store_concurrency.py::test_nested_transaction_in_the_same_task_is_a_savepoint",),
    ),
    Mutant(
        "store: an unusable database is one line",
        "store-an-unusable-database-is-one-line",
        "            if isinstance(exc, sqlite3.Error):\n                raise explain(",
        "            if False:\n                raise explain(",
        (
            "tests/store/test_store.py::test_garbage_file_is_refused_and_left_untouched",
            "tests/store/test_store.py::test_cli_on_a_garbage_database_exits_2_with_one_line",
        ),
    ),
    Mutant(
        "store: connection closed when open fails",
        "store-connection-closed-when-open-fails",
        "                await asyncio.shield(conn.close())",
        "                pass",
        ("tests/store/test_store.py::test_cli_on_a_garbage_database_exits_2_with_one_line",),
    ),
    Mutant(
        "api: news posted during a turn is the turn's to yield",
        "api-news-posted-during-a-turn",
        "        self.session.outbox.turn(True)\n",
        "",
        ("tests/agent/test_api.py::test_news_between_turns_reaches_on_event_and_during_a_turn_its_stream",),
    ),
    Mutant(
        "api: the approver a front-end passes in is the one asked",
        "api-the-approver-a-front-end-passes",
        "            self.approver,\n",
        "            None,\n",
        ("tests/agent/test_api.py::test_the_approver_passed_in_answers_a_command",),
    ),
    Mutant(
        "fork: one transaction",
        "fork-one-transaction",
        "            async with store.transaction():\n                row = await store.fork_session(",
        '            async with __import__("contextlib").nullcontext():\n                row = '
        "await store.fork_session(",
        ("tests/app/test_fork.py::test_a_fork_whose_compaction_commit_fails_creates_nothing_and_says_so",),
    ),
    Mutant(
        "crash: half-done compaction rolled back",
        "crash-half-done-compaction-rolled-back",
        "for cid, sid in pending:",
        "for cid, sid in pending[:0]:",
        ("tests/store/test_store.py::test_kill_9_during_compaction_rolls_back_on_restart",),
    ),
    Mutant(
        "failed compaction step restores the backup",
        "failed-compaction-step-restores",
        "return self._rolled_back(tx, view, start, metrics, t0)",
        "pass",
        (f"{R}::test_a_failing_compaction_step_rolls_back_to_the_backup",),
    ),
    Mutant(
        "a trim keeps the lines the reply refers to",
        "a-trim-keeps-the-lines-the-reply-refers-to",
        "lines = merged(lines, refs, source)",
        "lines = list(lines)",
        (
            "tests/context/text/test_referred.py::"
            "test_a_line_the_filter_cut_comes_back_when_the_reply_refers_to_it",
        ),
    ),
    Mutant(
        "raw ids made unique on entry",
        "raw-ids-made-unique-on-entry",
        "raw = with_unique_ids(request.raw)",
        "raw = request.raw",
        (
            "tests/context/test_message_ids.py::test_a_session_whose_ids_are_all_empty_still_carries_its_outputs",
        ),
    ),
    Mutant(
        "cache break: a request ending inside the previous one",
        "cache-break-request-ending-early",
        'now = current[k] if k < len(current) else ""',
        "now = current[k]",
        (
            "tests/context/report/test_cache_break.py::test_a_request_that_ends_inside_the_previous_one_lost_its_tail",
        ),
    ),
    Mutant(
        "config: types validated",
        "config-types-validated",
        "            checked[key] = _adapter(key).validate_python(value)\n",
        "            checked[key] = value\n",
        (
            "tests/test_config.py::test_a_bad_value_is_one_line_naming_file_key_expected_and_seen",
            "tests/cli/test_cli.py::test_bad_config_file_is_one_line_exit_2",
        ),
    ),
    Mutant(
        "config: unknown keys warned",
        "config-unknown-keys-warned",
        '        problems.append(Problem(source, f"unknown key {json.dumps(key)} '
        '(ignored){hint}", fatal=False))',
        "        pass",
        (
            "tests/test_config.py::test_unknown_keys_warn_with_the_closest_key_and_the_rest_applies",
            "tests/cli/test_cli.py::test_doctor_reports_the_same_problems",
        ),
    ),
    Mutant(
        "config: model strings checked",
        "config-model-strings-checked",
        '        problem = model_problem(values.get("model", ""), api_base)\n',
        "        problem = None\n",
        ("tests/cli/test_cli.py::test_bad_model_strings_are_refused_before_anything_runs",),
    ),
    Mutant(
        "filter rules: a bad file is skipped",
        "filter-rules-a-bad-file-is-skipped",
        "        except yaml.YAMLError as exc:",
        "        except ZeroDivisionError as exc:",
        (
            "tests/test_config.py::test_a_malformed_workspace_filter_does_not_stop_the_pipeline",
            "tests/cli/test_cli.py::test_unknown_key_and_bad_workspace_filter_warn_and_the_turn_runs",
        ),
    ),
    Mutant(
        "foreign: a file of several conversations is refused, not cut to one",
        "foreign-several-conversations-refused",
        "    if len(found) != 1:",
        "    if False:",
        ("tests/store/test_foreign_hermes.py::test_trajectories_one_conversation_a_line",),
    ),
    Mutant(
        "a terminal a few columns wide: the prompt keeps a minimum width",
        "prompt-keeps-a-minimum-width",
        " min-width: 8;",
        "",
        ("tests/app/test_tiny_terminal.py::test_any_tiny_size_keeps_the_app_running",),
    ),
    Mutant(
        "sessions: failures logged to the file, not the terminal",
        "sessions-logs-to-the-file",
        "    setup_logging()\n",
        "    pass\n",
        (
            "tests/cli/test_sessions_log.py::test_an_import_that_fails_is_one_line_and_its_traceback_is_in_the_log",
        ),
    ),
    Mutant(
        "sessions table: one session a line",
        "the-sessions-table-one-line-a-session",
        "            title, model = one_line(s.title, _TITLE_WIDTH), one_line(s.model, 200)",
        "            title, model = s.title, s.model",
        ("tests/cli/test_sessions_table_rows.py::test_one_session_a_line_whatever_its_title",),
    ),
    Mutant(
        "foreign: a message id that is not a string is no reply id",
        "foreign-reply-id-a-string",
        "    return mid if isinstance(mid, str) else None",
        "    return mid",
        (
            "tests/store/test_foreign_wrong_types.py::test_any_field_of_any_type_imports_or_is_refused_in_one_line",
            "tests/store/test_foreign_wrong_types.py::test_a_transcript_whose_ids_are_lists_imports",
        ),
    ),
    Mutant(
        "corpus: a message's call id, name and reasoning are strings or null",
        "corpus-message-fields-typed",
        "        if not (m.get(key) is None or isinstance(m.get(key), str)):",
        "        if False:",
        (
            "tests/bench/test_corpus_wrong_types.py::test_a_recording_with_fields_of_any_type_plays_or_is_refused_by_the_reader",
        ),
    ),
    Mutant(
        "corpus: meta.tools holds tool definitions",
        "corpus-tool-definitions-checked",
        "        if not isinstance(tools, list) or not all(",
        "        if not isinstance(tools, list) or False and all(",
        (
            "tests/bench/test_corpus_wrong_types.py::test_a_recording_with_fields_of_any_type_plays_or_is_refused_by_the_reader",
        ),
    ),
    Mutant(
        "bench: a request is sent as the live client renders it (a tool result's image in a user message)",
        "bench-requests-rendered-as-the-client-sends-them",
        'render(view, "bench")["messages"]',
        "[v.to_api() for v in view]",
        ("tests/bench/test_bench.py::test_a_tool_result_image_is_sent_where_the_provider_takes_it",),
    ),
    Mutant(
        "foreign: a Hermes session log beside its session file is left out",
        "foreign-hermes-log-beside-its-session-file",
        '            p.name.removesuffix(".gz").endswith(".jsonl")',
        "            False",
        ("tests/store/test_foreign_hermes.py::test_a_folder_of_hermes_sessions_is_a_bench_corpus",),
    ),
    Mutant(
        "foreign: a Hermes request dump beside its session's file or log is left out",
        "foreign-hermes-dump-beside-its-session",
        '            p.name.startswith("request_dump_")',
        "            False",
        ("tests/store/test_foreign_hermes.py::test_a_folder_of_hermes_sessions_is_a_bench_corpus",),
    ),
    Mutant(
        "foreign: a Hermes log without a session_meta line keeps its first message",
        "foreign-hermes-log-keeps-its-first-message",
        '[o for o in objects if o.get("role") != "session_meta"]',
        '[o for o in objects[1:] if o.get("role") != "session_meta"]',
        (
            "tests/store/test_foreign_hermes.py::"
            "test_a_spring_2026_log_that_begins_with_the_users_words_keeps_them",
        ),
    ),
    Mutant(
        "foreign: a <tool_call> inside a Hermes trajectory's <think> is no call",
        "foreign-hermes-a-call-only-thought-of-is-no-call",
        '            found, text = _blocks(said, "tool_call")',
        '            found, text = _blocks(value, "tool_call")[0], _blocks(said, "tool_call")[1]',
        ("tests/store/test_foreign_hermes.py::test_a_tool_call_the_model_only_thought_about_is_no_call",),
    ),
    Mutant(
        "foreign: a Codex Desktop rollout's words, only in its UI events, come over",
        "foreign-codex-words-only-in-ui-events",
        '        if kind == "event_msg" and from_events and p.get("type") == "user_message":',
        '        if kind == "event_msg" and False and p.get("type") == "user_message":',
        (
            "tests/store/test_foreign_layouts.py::"
            "test_a_codex_desktop_rollout_keeps_the_words_only_its_ui_events_hold",
        ),
    ),
    Mutant(
        "foreign: a TypeScript Codex CLI rollout (.json) is read",
        "foreign-codex-typescript-rollout-read",
        'if isinstance(as_dict(obj).get("items"), list)',
        'if False and isinstance(as_dict(obj).get("items"), list)',
        (
            "tests/store/test_foreign_shapes.py::test_older_codex_rollouts_are_recognised",
            "tests/store/test_foreign_shapes.py::test_a_written_fixture_of_each_shape_imports_with_its_facts",
            "tests/store/test_foreign_shapes.py::test_a_fact_in_any_content_bearing_shape_comes_over",
        ),
    ),
    Mutant(
        "foreign: a Codex rollout of bare items (before the envelope) is read",
        "foreign-codex-bare-rollout-read",
        "            if _is_codex(obj, k == 0):",
        '            if "payload" in obj and obj.get("type") in _CODEX_LINES:',
        (
            "tests/store/test_foreign_shapes.py::test_older_codex_rollouts_are_recognised",
            "tests/store/test_foreign_shapes.py::test_a_written_fixture_of_each_shape_imports_with_its_facts",
            "tests/store/test_foreign_shapes.py::test_a_fact_in_any_content_bearing_shape_comes_over",
        ),
    ),
    Mutant(
        "foreign: a Codex output of content items is read as its text and images",
        "foreign-codex-output-items-read",
        "        return _codex_text(output), False",
        "        return json.dumps(output), False",
        ("tests/store/test_foreign_shapes.py::test_codex_output_items_come_over_as_text_and_image",),
    ),
    Mutant(
        "foreign: Codex's thread_rolled_back drops the undone turns",
        "foreign-codex-rollback-read",
        '        elif kind == "event_msg" and p.get("type") == "thread_rolled_back":',
        '        elif kind == "event_msg" and p.get("type") == "no_such_event":',
        (
            "tests/store/test_foreign_shapes.py::test_a_rolled_back_turn_is_not_in_the_history",
            "tests/store/test_foreign_shapes.py::test_a_written_fixture_of_each_shape_imports_with_its_facts",
        ),
    ),
    Mutant(
        "foreign: a rollback's count is a positive integer",
        "foreign-rollback-a-positive-count",
        "        if not (isinstance(turns, int) and not isinstance(turns, bool) and turns > 0 and starts):",
        "        if not starts:",
        ("tests/store/test_foreign_shapes.py::test_every_shape_damaged_imports_or_is_refused_in_one_line",),
    ),
    Mutant(
        "foreign: a forked Codex rollout keeps its own session id",
        "foreign-codex-first-session-meta",
        '            sid = sid or str(p.get("id") or p.get("session_id") or "")',
        '            sid = str(p.get("id") or p.get("session_id") or sid)',
        ("tests/store/test_foreign_shapes.py::test_a_forked_rollout_is_its_own_session",),
    ),
    Mutant(
        "foreign: a remote (encrypted) Codex compaction brings no empty summary",
        "foreign-codex-encrypted-summary-skipped",
        '            if isinstance(p.get("message"), str) and p["message"].strip():',
        "            if True:",
        ("tests/store/test_foreign_shapes.py::test_an_encrypted_compaction_brings_no_empty_summary",),
    ),
    Mutant(
        "foreign: Codex raw reasoning content is read",
        "foreign-codex-reasoning-content-read",
        '            for part in ("summary", "content")',
        '            for part in ("summary",)',
        (
            "tests/store/test_foreign_shapes.py::test_a_fact_in_any_content_bearing_shape_comes_over",
            "tests/store/test_foreign_shapes.py::test_a_written_fixture_of_each_shape_imports_with_its_facts",
        ),
    ),
    Mutant(
        "foreign: a Codex web search comes over as a call and its result",
        "foreign-codex-web-search-read",
        '    elif t == "web_search_call":',
        '    elif t == "no_such_item":',
        (
            "tests/store/test_foreign_shapes.py::test_a_fact_in_any_content_bearing_shape_comes_over",
            "tests/store/test_foreign_shapes.py::test_a_written_fixture_of_each_shape_imports_with_its_facts",
            "tests/store/test_foreign_recorded.py::test_a_recorded_session_imports_without_loss",
        ),
    ),
    Mutant(
        "foreign: a Claude Code queued prompt (attachment) is the user's words",
        "foreign-claude-queued-prompt-is-the-users",
        'if queued.get("type") == "queued_command"',
        'if queued.get("type") == "no_such_kind"',
        (
            "tests/store/test_foreign_shapes.py::test_a_fact_in_any_content_bearing_shape_comes_over",
            "tests/store/test_foreign_shapes.py::test_a_written_fixture_of_each_shape_imports_with_its_facts",
        ),
    ),
    Mutant(
        "foreign: a Claude Code server tool's result is read",
        "foreign-claude-server-tool-result-read",
        'b.result(str(blk.get("tool_use_id")),',
        '(lambda *_: None)(str(blk.get("tool_use_id")),',
        (
            "tests/store/test_foreign_shapes.py::test_a_fact_in_any_content_bearing_shape_comes_over",
            "tests/store/test_foreign_shapes.py::test_a_written_fixture_of_each_shape_imports_with_its_facts",
        ),
    ),
    Mutant(
        "foreign: Claude Code's API error notices are left out",
        "foreign-claude-api-error-notice-left-out",
        '            if e.get("isApiErrorMessage"):',
        "            if False:",
        (
            "tests/store/test_foreign_shapes.py::test_a_fact_in_any_content_bearing_shape_comes_over",
            "tests/store/test_foreign_shapes.py::test_a_written_fixture_of_each_shape_imports_with_its_facts",
        ),
    ),
    Mutant(
        "foreign: a Claude Code block of a kind read nowhere else gives its readable text",
        "foreign-claude-unknown-block-read",
        '        elif said := "\\n".join(readable(b)):',
        '        elif False and (said := ""):',
        ("tests/store/test_foreign_shapes.py::test_a_fact_in_any_content_bearing_shape_comes_over",),
    ),
    Mutant(
        "filter rules: matching has a deadline",
        "filter-rules-matching-has-a-deadline",
        "timeout=min(left, 3600.0)",
        "timeout=None",
        (
            "tests/context/filters/test_rule_bounds.py::"
            "test_a_catastrophic_rule_is_skipped_once_and_the_next_output_is_not_held_up",
        ),
    ),
    Mutant(
        "filter rules: a stalled rule is skipped from then on",
        "filter-rules-a-stalled-rule-is-skipped",
        "self.stalled.add(rule.name)",
        "pass",
        (
            "tests/context/filters/test_rule_bounds.py::"
            "test_a_catastrophic_rule_is_skipped_once_and_the_next_output_is_not_held_up",
        ),
    ),
    Mutant(
        "filter rules: huge counted repeats are refused",
        "filter-rules-huge-repeats-refused",
        "if product > MAX_REPEAT_PRODUCT:",
        "if False:",
        (
            "tests/context/filters/test_rule_bounds.py::test_patterns_that_would_stall_their_compilation_are_refused",
        ),
    ),
    Mutant(
        "hooks: a stalled matcher runs the hook",
        "hooks-a-stalled-matcher-runs-the-hook",
        "return True  # a pre_tool_use hook",
        "return False  # a pre_tool_use hook",
        (
            "tests/agent/test_hooks.py::"
            "test_a_catastrophic_matcher_on_a_model_chosen_tool_name_runs_bounded_and_runs_the_hook",
        ),
    ),
    Mutant(
        "trust: a folder never trusted is untrusted",
        "trust-an-unasked-folder-is-untrusted",
        "return setting or remembered(workspace) is True",
        "return True",
        (
            "tests/test_trust.py::"
            "test_an_untrusted_folders_rules_are_skipped_with_one_notice_and_the_model_sees_every_line",
            "tests/test_trust.py::"
            "test_a_folder_the_user_did_not_trust_stays_untrusted_and_another_folder_is_not_trusted_by_it",
        ),
    ),
    Mutant(
        "trust: the workspace's filter rules only in a trusted folder",
        "trust-workspace-filters-only-when-trusted",
        "if trusted else [mine]",
        "if True else [mine]",
        (
            "tests/test_config.py::test_a_malformed_workspace_filter_does_not_stop_the_pipeline",
            "tests/test_trust.py::"
            "test_an_untrusted_folders_rules_are_skipped_with_one_notice_and_the_model_sees_every_line",
        ),
    ),
    Mutant(
        "@-attach: opens without blocking or following a swapped-in link",
        "attach-opens-without-blocking-or-following",
        "os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC",
        "os.O_RDONLY | os.O_CLOEXEC",
        (
            "tests/app/test_mentions_swap.py::"
            "test_a_file_swapped_for_a_fifo_after_the_check_is_not_attached_and_does_not_block",
            "tests/app/test_mentions_swap.py::test_a_file_swapped_for_a_link_out_of_the_workspace_is_not_attached",
        ),
    ),
    Mutant(
        "approval dialog: invisible characters are shown marked",
        "invisible-characters-shown-marked",
        'f"⟨U+{ord(c):04X}⟩" if invisible(c) else c',
        "c",
        (
            "tests/app/test_invisible_marked.py::test_reveal_marks_every_invisible_character_and_keeps_the_rest",
            "tests/app/test_invisible_marked.py::test_the_approval_dialog_marks_hidden_characters_and_says_how_many",
        ),
    ),
    Mutant(
        "history_search: a NUL in the model's query separates words",
        "history-search-a-nul-in-the-query",
        'query = query.replace("\\x00", " ")',
        "query = query",
        ("tests/store/test_history_hostile.py::test_any_query_is_searched_as_words_and_never_raises",),
    ),
    Mutant(
        "import: only regular files are read (a FIFO named *.jsonl never blocks)",
        "foreign-only-regular-files-are-read",
        "fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)",
        "fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)",
        (
            "tests/store/test_foreign_fifo.py::test_a_fifo_in_a_folder_of_transcripts_is_skipped",
            "tests/store/test_foreign_fifo.py::test_importing_a_fifo_is_one_line",
        ),
    ),
    Mutant(
        "acp: a line nested thousands deep is a parse error, not the end of the connection",
        "acp-deep-nesting-is-a-parse-error",
        "except (ValueError, RecursionError):",
        "except ValueError:",
        (
            "tests/acp/test_screen_hostile.py::test_every_line_is_forwarded_or_answered_and_the_next_one_is_read",
        ),
    ),
    Mutant(
        "acp: an editor's answer over the line limit fails its request (the turn never waits for ever)",
        "acp-overlong-answer-fails-its-request",
        'if kind == "response":',
        "if False:",
        (
            "tests/acp/test_editor_tried.py::test_an_answer_over_the_line_limit_fails_its_request_and_the_turn_goes_on",
            "tests/acp/test_screen_hostile.py::test_every_line_is_forwarded_or_answered_and_the_next_one_is_read",
        ),
    ),
    Mutant(
        "acp: what the editor shows (replies, titles, output) holds no escape sequence a terminal obeys",
        "acp-shown-text-is-inert",
        "return sanitize(strip_ansi(text))",
        "return text",
        (
            "tests/acp/test_editor_tried.py::test_a_loaded_session_shows_no_control_sequence",
            "tests/acp/test_editor_tried.py::test_what_the_editor_shows_of_a_turn_holds_no_control_sequence",
        ),
    ),
    Mutant(
        "acp: a permission request's title shows the command's invisible characters marked",
        "acp-permission-shows-the-command-revealed",
        'title=reveal(convert.tool_title(call) if call else f"{tool} {assessment.command}"),',
        'title=convert.tool_title(call) if call else f"{tool} {assessment.command}",',
        ("tests/acp/test_editor_tried.py::test_what_the_editor_shows_of_a_turn_holds_no_control_sequence",),
    ),
    Mutant(
        "acp: an embedded file is attached within @file's budget (a large one no longer refuses the prompt)",
        "acp-embedded-text-within-the-attachment-budget",
        'block, _ = file_block(shown, res.text, room, f"{len(res.text):,} characters")',
        'block, _ = file_block(shown, res.text, len(res.text), f"{len(res.text):,} characters")',
        (
            "tests/acp/test_editor_tried.py::test_an_embedded_file_is_attached_within_the_budget_of_an_at_file",
        ),
    ),
    Mutant(
        "acp: the permission question holds the command or diff in one fenced block (editors show Markdown)",
        "acp-question-fenced",
        'fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", shown)), default=0))',
        'fence = "```"',
        ("tests/acp/test_editor_tried.py::test_a_permission_question_holds_the_command_in_one_code_block",),
    ),
    Mutant(
        "acp: requests received before stdin ends are answered before myrm exits",
        "acp-answers-before-exit",
        "await unanswered.settled(writer, ANSWER_GRACE)",
        "pass",
        ("tests/acp/test_server.py::test_requests_sent_before_the_input_ends_are_all_answered",),
    ),
    Mutant(
        "config: a file nested thousands deep is one problem, not a traceback",
        "config-nesting-too-deep-is-one-problem",
        "except RecursionError:",
        "except ZeroDivisionError:",
        ("tests/test_config_hostile.py::test_any_settings_file_is_problems_or_settings_that_load",),
    ),
    Mutant(
        "hooks: a timeout that is not seconds skips the hook",
        "hooks-a-bad-timeout-is-a-skipped-hook",
        "if not seconds or not 0 < timeout <= MAX_TIMEOUT:",
        "if False:",
        ("tests/test_config_hostile.py::test_any_settings_file_is_problems_or_settings_that_load",),
    ),
    Mutant(
        "mcp: a bad server entry is skipped with a line",
        "mcp-a-bad-entry-is-skipped",
        "configs.append(McpServerConfig.from_dict(d))",
        "configs.append(McpServerConfig(**d))",
        ("tests/test_config_hostile.py::test_any_settings_file_is_problems_or_settings_that_load",),
    ),
    Mutant(
        "bench: a bad gzip corpus is one line",
        "bench-a-bad-gzip-corpus-is-one-line",
        "    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:",
        "    except ZeroDivisionError as exc:",
        (
            "tests/bench/test_corpus.py::test_garbage_gz",
            "tests/bench/test_corpus.py::test_truncated_gz",
        ),
    ),
    Mutant(
        "TUI: SIGTERM/SIGHUP or a closed terminal exit like ctrl+q (session saved, lease released)",
        "tui-sigterm-sighup-or-a-closed-terminal",
        "            guard.attach(self._stop, self._held_leases)",
        "            pass",
        (
            "tests/app/test_hangup.py::test_a_stop_at_any_moment_exits_in_bounded_time_with_the_session_saved",
            "tests/app/test_tui_signals.py",
        ),
    ),
    Mutant(
        "hangup: a terminal that is gone gets no more writes (the streams go to /dev/null)",
        "hangup-a-terminal-that-is-gone-gets-no",
        "                    os.dup2(null, fd)",
        "                    pass",
        ("tests/app/test_hangup.py::test_a_stop_at_any_moment_exits_in_bounded_time_with_the_session_saved",),
    ),
    Mutant(
        "hangup: a stop that the app does not finish ends at the deadline, the lease released",
        "hangup-a-stop-that-the-app-does-not",
        "                self._exit_now("
        'saved, "saved; the exit did not finish" if saved else "not saved in time")',
        "                pass",
        (
            "tests/app/test_hangup.py::test_a_loop_blocked_for_ever_still_exits_at_the_deadline_with_the_lease_released",
        ),
    ),
    Mutant(
        "hangup: a SIGCONT (sent with a hang-up's SIGHUP) does not restart the terminal mode",
        "hangup-a-sigcont-sent-with-a-hang-ups",
        "        if self._must_signal_resume and not self._guard.terminal_gone:",
        "        if True:",
        ("tests/app/test_hangup.py::test_a_sigcont_that_no_stop_came_before_leaves_the_terminal_mode_alone",),
    ),
    Mutant(
        "hangup: a second signal exits at once",
        "hangup-a-second-signal-exits-at-once",
        '                            self._exit_now(saved, f"a second signal ({signal.Signals(byte).name})")',
        "                            pass",
        ("tests/app/test_hangup.py::test_a_second_signal_exits_at_once",),
    ),
    Mutant(
        "embedded model: a second request queues, it does not cut the running stream",
        "embedded-model-a-second-request-queues",
        '            "--interrupt_requests",\n            "false",\n',
        "",
        ("tests/llm/test_local.py::test_a_second_request_waits_instead_of_cutting_the_running_stream",),
    ),
    Mutant(
        "embedded model: a dead child is named, not a transport error",
        "embedded-model-a-dead-child-is-named-not",
        "        if proc is None:\n            return None\n        if proc.poll() is None:",
        "        if True:\n            return None\n        if proc.poll() is None:",
        (
            "tests/llm/test_local.py::test_child_dying_mid_stream_ends_the_turn_clearly_and_the_next_turn_works",
        ),
    ),
    Mutant(
        "embedded model: each call learns its own child died",
        "embedded-model-each-call-learns-its-own",
        "        proc = child if child is not None else self.proc\n",
        "        proc = self.proc\n",
        ("tests/llm/test_local.py::test_each_call_learns_its_own_child_died_whoever_saw_it_first",),
    ),
    Mutant(
        "embedded model: the child watches its parent",
        "embedded-model-the-child-watches",
        "        if os.getppid() != parent:\n            os._exit(0)",
        "        if False:\n            os._exit(0)",
        ("tests/llm/test_local.py::test_the_child_exits_when_myrm_is_killed_with_sigkill",),
    ),
    Mutant(
        "ask: SIGTERM/SIGHUP run its cleanup",
        "ask-sigterm-sighup-run-its-cleanup",
        "    signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)",
        "    signals: tuple[signal.Signals, ...] = ()",
        (f"{J}::test_sigterm_to_ask_ends_its_background_jobs",),
    ),
    Mutant(
        "an edit checks the file again after approval (a change made while it waited is kept)",
        "an-edit-checks-the-file-again-after-approval",
        "        if await _current(ctx, full, path) != text:",
        "        if False:",
        (
            "tests/agent/tools/test_edit_waits.py::test_a_file_changed_while_its_edit_waits_is_not_written_over",
        ),
    ),
    Mutant(
        "a create checks the path again after approval (nothing kept for /undo)",
        "a-create-checks-again-after-approval",
        "            if full.exists() or full.is_symlink():  # made by something else while the user decided",
        "            if False:",
        (
            "tests/agent/tools/test_edit_waits.py::"
            "test_a_path_made_while_its_create_waits_is_not_kept_for_undo_nor_written",
        ),
    ),
    Mutant(
        "a fork's read of a parent's vault stops at the fork (another branch's outputs are refused)",
        "a-forks-read-stops-at-its-branch-point",
        "            if entry.created_at > ctx.vault_until.get(namespace, entry.created_at):",
        "            if False:",
        ("tests/agent/test_fork_vault_branch.py::test_a_forks_read_of_its_parents_later_outputs_is_refused",),
    ),
    Mutant(
        "a fork's vault card stops at the fork",
        "a-forks-vault-card-stops-at-its-branch-point",
        "        if entry is not None and until is not None and entry.created_at > until:",
        "        if False:",
        (
            "tests/agent/test_fork_vault_branch.py::test_a_forks_card_of_its_parents_later_output_opens_nothing",
        ),
    ),
    Mutant(
        "ask: the files the message names with @ are attached",
        "ask-attaches-the-messages-at-files",
        "    text, labels = attach(prompt, root)",
        "    text, labels = prompt, {}",
        ("tests/cli/test_ask_mentions.py::test_a_file_the_message_names_is_attached_and_said_on_stderr",),
    ),
    Mutant(
        "CLI: a global option before a subcommand reaches it",
        "cli-a-global-option-before-a-subcommand",
        "            ctx.params[name] = root.params[name]",
        "            pass",
        ("tests/cli/test_global_options.py::test_a_global_option_is_honoured_or_refused_wherever_it_stands",),
    ),
    Mutant(
        "CLI: a global option its subcommand has no use for is refused",
        "cli-a-global-option-its-subcommand-has",
        "                _refuse(_not_for(root, ctx.invoked_subcommand, sub, _flag(param)))",
        "                pass",
        ("tests/cli/test_global_options.py::test_a_global_option_is_honoured_or_refused_wherever_it_stands",),
    ),
    Mutant(
        "ask: a missing provider key is found before anything starts",
        "ask-a-missing-provider-key-is-found",
        "        if problem := await _key_problem(settings):",
        "        if problem := None:",
        ("tests/cli/test_cli.py::test_a_missing_key_is_one_line_before_ask_starts",),
    ),
    Mutant(
        "pickers: typing filters the /model and /mode lists",
        "pickers-typing-filters-the-model",
        "        hits = [c for c in self.choices if needle in c.lower()]",
        "        hits = list(self.choices)",
        (
            "tests/app/test_pickers.py::test_the_model_picker_filters_as_you_type_and_takes_a_typed_model",
            "tests/app/test_pickers.py::test_mode_without_an_argument_opens_a_picker",
        ),
    ),
    Mutant(
        "help: the chat screen's own bindings are listed (Shift+Tab)",
        "help-the-chat-screens-own-bindings-are",
        "                *binding_rows(MainScreen.BINDINGS),",
        "",
        ("tests/app/test_pickers.py::test_help_lists_every_key_of_every_binding_one_row_each",),
    ),
    Mutant(
        "redaction: credential names in assignments",
        "redaction-credential-names",
        "        text = _redact_assignments(text)",
        "        pass",
        ("tests/context/privacy/test_redact.py",),
    ),
    Mutant(
        "redaction: a key across summary items keeps the items",
        "redaction-a-key-across-summary-items",
        "redact(_SEP.join(flat), keep_lines=True)",
        "redact(_SEP.join(flat))",
        (
            "tests/context/privacy/test_redact.py::test_a_key_across_summary_items_does_not_crash_and_is_masked",
        ),
    ),
    Mutant(
        "vault entries in the message's transaction",
        "vault-entries-in-the-messages",
        "self.session_id, msg, self.counter.message(msg), vault=entries",
        "self.session_id, msg, self.counter.message(msg)",
        ("tests/store/test_store_faults.py",),
    ),
    Mutant(
        "full disk: one line, not a traceback",
        "full-disk-one-line-not-a-traceback",
        "if _write_failure(exc):  # a full disk is one line for the user, not a traceback",
        "if False:",
        ("tests/store/test_store_faults.py",),
    ),
    Mutant(
        "one writer per session: the lease refuses",
        "one-writer-per-session-the-lease-refuses",
        '            if row is not None and row["token"] != mine and self._held(row):',
        "            if False:",
        ("tests/store/test_leases.py",),
    ),
    Mutant(
        "state saves are compare-and-set",
        "state-saves-are-compare-and-set",
        "                if row is not None or expected != 0:",
        "                if False:",
        ("tests/store/test_leases.py::test_state_saves_are_compare_and_set",),
    ),
    Mutant(
        "edits of one path serialised",
        "edits-of-one-path-serialised",
        "        async with path_lock(full):\n",
        "        if True:\n",
        (f"{X}::test_two_parallel_edits_of_one_file_both_land",),
    ),
    Mutant(
        "tool process groups end with myrm (watcher)",
        "tool-process-groups-end-with-myrm",
        "        REAPER.guard(proc.pid)\n    except BaseException:\n",
        "        pass\n    except BaseException:\n",
        (f"{X}::test_kill_9_of_myrm_ends_its_tool_processes_and_job_logs",),
    ),
    Mutant(
        "a tool's command waits for its group's registration (gate)",
        "a-tools-command-waits-for-its-groups",
        'GATE = OOM_FIRST + \'read -r _ <&{fd} || exit 125; exec {fd}<&-; exec -a "$0" "$@"\'',
        'GATE = OOM_FIRST + \'exec {fd}<&-; exec -a "$0" "$@"\'',
        (f"{X}::test_a_tool_command_starts_only_once_its_group_is_registered",),
    ),
    Mutant(
        "the marked kill ends the sessions marked commands lead (watcher)",
        "the-marked-kill-ends-the-sessions-marked",
        "    _kill_sessions(sessions, spare)\n    return len(pids)\n",
        "    return len(pids)\n",
        (f"{X}::test_the_marked_kill_ends_the_session_a_marked_command_leads_members_without_the_mark_too",),
    ),
    Mutant(
        "tool processes carry the owner mark the watcher kills by",
        "tool-processes-carry-the-owner-mark",
        "    env = {**env, OWNER_ENV: REAPER.tag} if REAPER.tag else env\n",
        "    pass\n",
        (
            "tests/agent/test_guards_attacks.py::"
            "test_kill_9_ends_what_a_tool_started_even_where_nothing_registered_it",
        ),
    ),
    Mutant(
        "orphans that left their group are recorded (subreaper)",
        "orphans-that-left-their-group-are",
        "            self.subreaper = become_subreaper()\n",
        "            pass\n",
        (
            "tests/agent/test_guards_attacks.py::test_kill_9_of_myrm_ends_a_process_that_left_its_group_with_setsid",
        ),
    ),
    Mutant(
        "the watcher kills recorded orphans",
        "the-watcher-kills-recorded-orphans",
        "        _kill_escaped(escaped)\n",
        "        pass\n",
        (
            "tests/agent/test_guards_attacks.py::test_kill_9_of_myrm_ends_a_process_that_left_its_group_with_setsid",
        ),
    ),
    Mutant(
        "read-only git reads config.worktree",
        "read-only-git-reads-config-worktree",
        'for name in ("config", "config.worktree")]',
        'for name in ("config",)]',
        (
            "tests/agent/test_guards_attacks.py::"
            "test_fsmonitor_in_config_worktree_runs_a_program_and_git_status_then_asks",
        ),
    ),
    Mutant(
        "edits under .git ask",
        "edits-under-git-ask",
        "        if git_internal(ctx.workspace, full):\n",
        "        if False:\n",
        (
            "tests/agent/test_guards_attacks.py::test_an_edit_under_git_asks_first_even_where_edits_are_allowed",
        ),
    ),
    Mutant(
        "an edit in a read-only folder is refused before asking (firsthour5)",
        "an-edit-of-a-read-only-folder-is-refused-before-asking",
        "    if (folder := await asyncio.to_thread(_unwritable_folder, full)) is not None:\n",
        "    if False:\n",
        (f"{W}::test_an_edit_in_a_read_only_project_is_refused_before_the_user_is_asked",),
    ),
    Mutant(
        "link-following walks are not read-only",
        "link-following-walks-are-not-read-only",
        "        if name in LINK_FOLLOWERS and has_option(options, LINK_FOLLOWERS[name]):\n",
        "        if False:\n",
        ("tests/agent/test_guards_attacks.py::test_a_walk_that_follows_links_asks_and_would_read_outside",),
    ),
    Mutant(
        "rg flags are allow-listed",
        "rg-flags-are-allow-listed",
        "        elif flag[1:] not in RG_SHORT:\n            return False\n",
        "        elif False:\n            return False\n",
        ("tests/agent/test_guards_attacks.py::test_rg_flags_outside_the_allow_list_ask",),
    ),
    Mutant(
        "sandbox: unasked read-only commands run confined",
        "sandbox-unasked-read-only-commands-run",
        "    if read_only:\n        return READ_ONLY\n",
        "    if read_only:\n        return None\n",
        (
            "tests/agent/test_sandbox.py::test_an_unasked_command_is_confined_so_the_allow_list_is_not_the_boundary",
            "tests/agent/test_sandbox.py::test_a_background_read_only_job_is_confined_too",
        ),
    ),
    Mutant(
        "sandbox: approval = auto still confines what only reads",
        "sandbox-approval-auto-still-confines",
        "(it loses nothing)\n            return plan(ctx, verdict.read_only)\n",
        "(it loses nothing)\n            return plan(ctx, read_only=False)\n",
        (
            "tests/agent/test_sandbox.py::test_an_unasked_command_is_confined_so_the_allow_list_is_not_the_boundary",
        ),
    ),
    Mutant(
        "sandbox: without one every command asks",
        "sandbox-without-one-every-command-asks",
        "        if missing:  # never run unconfined",
        "        if False:  # never run unconfined",
        (
            "tests/agent/test_sandbox.py::test_without_landlock_every_command_asks_and_none_runs_unconfined_unasked",
        ),
    ),
    Mutant(
        "sandbox: no new socket of any family (seccomp)",
        "sandbox-no-new-socket-of-any-family",
        "        _install_seccomp(libc, arch)\n",
        "        pass\n",
        ("tests/agent/test_sandbox.py::test_read_only_reaches_no_network",),
    ),
    Mutant(
        "sandbox: Landlock refuses TCP",
        "sandbox-landlock-refuses-tcp",
        "    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 and not network else 0\n",
        "    handled_net = 0\n",
        ("tests/agent/test_sandbox.py::test_landlock_alone_refuses_tcp_and_seccomp_is_what_stops_udp",),
    ),
    Mutant(
        "sandbox: the setting reaches the shell tool",
        "sandbox-the-setting-reaches-the-shell",
        "        sandbox=settings.sandbox,\n",
        "",
        ("tests/agent/test_guards_attacks.py::test_myrm_ask_runs_the_models_attacks_confined_or_not_at_all",),
    ),
    Mutant(
        "sandbox: the home folder is hidden",
        "sandbox-the-home-folder-is-hidden",
        '            "hidden": hidden,\n',
        '            "hidden": [],\n',
        ("tests/agent/test_sandbox.py::test_read_only_reads_the_workspace_but_no_secret_outside_it",),
    ),
    Mutant(
        "sandbox: myrm's database and logs are hidden",
        "sandbox-myrms-database-and-logs-are",
        "*_myrm_files(), *_home_dot_entries(home, self.workspace)]",
        "*_home_dot_entries(home, self.workspace)]",
        ("tests/agent/test_sandbox.py::test_read_only_reads_the_workspace_but_no_secret_outside_it",),
    ),
    Mutant(
        "sandbox: a PATH folder does not make a hidden one readable",
        "sandbox-a-path-folder-does-not-make",
        "if os.path.isabs(d) and not _holds_any(os.path.realpath(d), real_hidden)",
        "if os.path.isabs(d)",
        ("tests/agent/test_sandbox.py::test_read_only_reads_the_workspace_but_no_secret_outside_it",),
    ),
    Mutant(
        "sandbox: home dot-folders hidden when the workspace is home",
        "sandbox-home-dot-folders-hidden-when",
        "    if not (workspace == home or workspace in home.parents):\n        return []\n",
        "    if True:\n        return []\n",
        (
            "tests/agent/test_sandbox.py::test_the_home_folders_dot_folders_stay_hidden_when_the_workspace_is_home",
        ),
    ),
    Mutant(
        "untrusted text: the header",
        "untrusted-text-the-header",
        "        title, sub_title = sanitize(title), sanitize(sub_title)\n",
        "",
        ("tests/app/test_inert_text.py::test_the_header_shows_a_stored_title_inert_after_a_model_switch",),
    ),
    Mutant(
        "untrusted text: the health panel",
        "untrusted-text-the-health-panel",
        'self.query_one(card, Static).update(plain("\\n".join(lines)))',
        'self.query_one(card, Static).update("\\n".join(lines))',
        ("tests/app/test_inert_text.py::test_the_header_shows_a_stored_title_inert_after_a_model_switch",),
    ),
    Mutant(
        "import: reading stops at the bound (a decompression bomb)",
        "foreign-reading-stops-at-the-bound",
        "    return io.BufferedReader(_Capped(stream, MAX_IMPORT_BYTES))\n",
        "    return stream  # type: ignore[return-value]\n",
        (
            "tests/store/test_foreign_bomb.py::test_a_file_larger_than_the_bound_is_refused_in_one_line_without_reading_it_all",
            "tests/store/test_foreign_bomb.py::test_the_command_refuses_a_bomb_in_one_line",
            "tests/bench/test_corpus_hostile.py::test_a_recording_past_the_bound_is_refused_without_reading_it_all",
        ),
    ),
    Mutant(
        "corpus: JSON nested past the recursion limit is one line",
        "corpus-json-nested-too-deep",
        "                except RecursionError:\n",
        "                except ZeroDivisionError:\n",
        (
            "tests/bench/test_corpus_hostile.py::test_json_nested_past_the_recursion_limit_is_one_error_line",
            "tests/bench/test_corpus_hostile.py::test_both_commands_refuse_a_nested_line_in_one_line",
        ),
    ),
    Mutant(
        "replay: JSON nested past the recursion limit is one line",
        "replay-json-nested-too-deep",
        "        except (ValueError, RecursionError) as exc:",
        "        except ValueError as exc:",
        (
            "tests/bench/test_corpus_hostile.py::test_json_nested_past_the_recursion_limit_is_one_error_line",
            "tests/bench/test_corpus_hostile.py::test_both_commands_refuse_a_nested_line_in_one_line",
        ),
    ),
    Mutant(
        "stream-json: a call's arguments through the one reader",
        "stream-json-reads-arguments-through-call-args",
        "                parsed = call_args(ev.call)",
        "                with __import__('contextlib').suppress(ValueError):\n"
        "                    json.loads(ev.call.arguments or '0')  # the old reader's parse\n"
        "                parsed = call_args(ev.call)",
        (
            "tests/flows/test_call_shapes.py::test_arguments_nested_past_the_recursion_limit_get_an_answer_and_every_reader_copes",
            "tests/flows/test_call_shapes.py::test_any_arguments_to_any_tool_get_an_answer_and_every_reader_copes",
        ),
    ),
    Mutant(
        "acp: a call's arguments through the one reader",
        "acp-reads-arguments-through-call-args",
        "    parsed = read_args(call)\n",
        "    with __import__('contextlib').suppress(ValueError):\n"
        "        json.loads(call.arguments or '0')  # the old reader's parse\n"
        "    parsed = read_args(call)\n",
        (
            "tests/flows/test_call_shapes.py::test_arguments_nested_past_the_recursion_limit_get_an_answer_and_every_reader_copes",
        ),
    ),
    Mutant(
        "stream-json input: JSON nested past the recursion limit is a bad line",
        "stream-json-input-nested-too-deep",
        "        except (ValueError, RecursionError):",
        "        except ValueError:",
        ("tests/agent/test_stream_json.py::test_any_input_line_is_a_prompt_or_a_value_error_naming_it",),
    ),
    Mutant(
        "stdin: a line is bounded",
        "stdin-a-line-is-bounded",
        "            if size > limit:\n",
        "            if False:\n",
        (
            "tests/cli/test_stdin_bounded.py::test_a_line_over_the_bound_is_a_value_error_naming_it",
            "tests/cli/test_stdin_bounded.py::test_ask_refuses_a_message_over_the_bound_in_one_line",
        ),
    ),
    Mutant(
        "stdin: a message is bounded",
        "stdin-a-message-is-bounded",
        "        if size > limit:\n",
        "        if False:\n",
        ("tests/cli/test_stdin_bounded.py::test_ask_refuses_a_message_over_the_bound_in_one_line",),
    ),
    Mutant(
        "vault card: opens only its session's line",
        "a-vault-card-opens-only-its-sessions-line",
        "        if not in_line:\n",
        "        if False:\n",
        (
            "tests/app/test_vault_card_line.py::test_an_entry_is_shown_to_its_sessions_line_and_to_no_other",
            "tests/app/test_vault_card_line.py::test_a_card_pointing_into_another_sessions_vault_opens_nothing",
        ),
    ),
    Mutant(
        "a toast still on screen is not stacked again",
        "a-toast-on-screen-is-not-stacked-again",
        "if any(n.message == text for n in self._notifications):",
        "if False:",
        (
            "tests/app/test_compaction_view.py::test_nothing_to_compact_pressed_again_adds_no_second_row_or_toast",
        ),
    ),
    Mutant(
        "live output unmounts the oldest items past the window",
        "live-output-unmounts-the-oldest-items",
        "await self._trim_head()",
        "pass",
        (
            "tests/app/test_tui_long_session.py::test_a_live_session_keeps_a_bounded_window_mounted_and_reaches_what_it_unmounted",
            "tests/app/test_tui_long_session.py::test_any_appends_and_scrolls_keep_a_contiguous_run_mounted_and_bring_older_items_back_in_order",
        ),
    ),
    Mutant(
        "esc cancels a compaction asked for with ctrl+k",
        "esc-cancels-a-requested-compaction",
        "elif self.compacting:",
        "elif False:",
        (
            "tests/app/test_compaction_view.py::test_esc_cancels_a_requested_compaction_while_its_summary_is_written_and_nothing_changes",
        ),
    ),
    Mutant(
        "a notice is not repeated right under itself",
        "a-notice-is-not-repeated-under-itself",
        'if last is not None and (last.kind, last.text, last.level) == ("notice", text, level):',
        "if False:",
        (
            "tests/app/test_compaction_view.py::test_nothing_to_compact_pressed_again_adds_no_second_row_or_toast",
        ),
    ),
    Mutant(
        "ask: an empty message is refused",
        "ask-an-empty-message-is-refused",
        "    if not message.strip():\n",
        "    if False:\n",
        (
            "tests/cli/test_ask_stdin.py::test_an_empty_message_is_refused_in_one_line_before_anything_is_sent",
        ),
    ),
    Mutant(
        "ask: a silent pipe is not waited on",
        "ask-a-silent-pipe-is-not-waited-on",
        "    if not _stdin_ready(wait):\n",
        "    if False:\n",
        ("tests/cli/test_ask_stdin.py::test_a_pipe_left_open_and_silent_is_not_waited_on_for_ever",),
    ),
    Mutant(
        "ask: a closed standard input reads as empty (review5)",
        "stdin-closed-reads-as-empty",
        "    if sys.stdin is None:  # started with descriptor 0 closed",
        "    if False:  # started with descriptor 0 closed",
        ("tests/cli/test_ask_stdin.py::test_a_closed_stdin_is_no_input_not_a_crash",),
    ),
    Mutant(
        "untrusted text: the prompt box",
        "untrusted-text-the-prompt-box",
        "        line.plain = sanitize(line.plain)\n",
        "",
        ("tests/app/test_inert_text.py::test_a_paste_shows_inert_in_the_prompt_box_and_in_the_queue",),
    ),
    Mutant(
        "untrusted text: the queue line",
        "untrusted-text-the-queue-line",
        'queued.update(plain("\\n".join([*lines, hint])))',
        'queued.update("\\n".join([*lines, hint]))',
        ("tests/app/test_inert_text.py::test_a_paste_shows_inert_in_the_prompt_box_and_in_the_queue",),
    ),
    Mutant(
        "AGENTS.md: a link out of the workspace is not read",
        "workspace-files-read-unasked-stay-inside",
        "    if not (full == base or base in full.parents):\n",
        "    if False:\n",
        (
            "tests/agent/test_prompts_hostile.py::test_only_a_regular_file_inside_the_workspace_is_read_and_only_its_head",
            "tests/agent/test_prompts_hostile.py::test_ask_sends_no_file_an_agents_md_link_leads_out_to",
        ),
    ),
    Mutant(
        "sandbox: only a git folder is granted",
        "sandbox-only-a-git-folder-is-granted",
        " if _is_git_folder(d)]",
        "]",
        ("tests/agent/test_sandbox.py::test_a_git_folder_the_workspace_names_does_not_open_the_home_folder",),
    ),
    Mutant(
        "MCP: tools a provider refuses are left out",
        "mcp-tools-a-provider-refuses-are-left-out",
        "        why = _refused(tool, {*(names or ()), *(t.name for t in kept)})\n",
        "        why = None\n",
        (
            "tests/agent/test_mcp_client.py::test_tools_no_provider_would_take_are_left_out_and_the_session_goes_on",
        ),
    ),
    Mutant(
        "MCP: at most a request's share of tools",
        "mcp-tools-at-most-a-requests-share",
        "        elif already + len(kept) >= MAX_MCP_TOOLS:\n",
        "        elif False:\n",
        (
            "tests/agent/test_mcp_client.py::test_tools_no_provider_would_take_are_left_out_and_the_session_goes_on",
        ),
    ),
    Mutant(
        "doctor: prints a repository's file names inert",
        "doctor-prints-inert-text",
        '        print(sanitize(f"myrm doctor: {p}" if quiet else f"{\'config\':>15}: {p}"))',
        '        print(f"myrm doctor: {p}" if quiet else f"{\'config\':>15}: {p}")',
        ("tests/cli/test_untrusted_output.py::test_doctor_names_a_repositorys_files_inert",),
    ),
    Mutant(
        "doctor: a model that does not answer is a problem (exit 1)",
        "doctor-a-model-that-fails-is-a-problem",
        "        if not answered:\n",
        "        if False:\n",
        ("tests/cli/test_doctor_model_check.py::test_a_refused_key_names_the_variable_never_the_key",),
    ),
    Mutant(
        "doctor: --no-network sends the model nothing",
        "doctor-no-network-sends-nothing",
        "await _model_answers(settings) if network else skipped",
        "await _model_answers(settings) if True else skipped",
        ("tests/cli/test_doctor_model_check.py::test_no_network_sends_nothing",),
    ),
    Mutant(
        "command line: its error lines are inert",
        "the-command-lines-error-lines-are-inert",
        "    print(sanitize(line), file=sys.stderr)\n",
        "    print(line, file=sys.stderr)\n",
        ("tests/cli/test_untrusted_output.py::test_the_command_lines_error_lines_quote_a_files_ids_inert",),
    ),
    Mutant(
        "untrusted text: the model line",
        "untrusted-text-the-model-line",
        ".update(plain(text))",
        ".update(text)",
        ("tests/app/test_inert_text.py::test_the_header_shows_a_stored_title_inert_after_a_model_switch",),
    ),
    Mutant(
        "sandbox: no terminal or device but the harmless ones",
        "sandbox-no-terminal-or-device",
        '        always.append("/dev")\n',
        "",
        (
            "tests/agent/test_sandbox.py::test_read_only_reads_no_terminal_and_no_device_but_the_harmless_ones",
        ),
    ),
    Mutant(
        "sandbox: /proc only what any user may read",
        "sandbox-proc-only-what-any-user-reads",
        " and _anyone_reads(entry):",
        ":",
        ("tests/agent/test_sandbox.py::test_read_only_reads_none_of_procs_files_that_only_root_may",),
    ),
    Mutant(
        "sandbox: other processes' /proc entries hidden",
        "sandbox-other-processes-proc-entries",
        '        always = ["/proc", *_myrm_files(),',
        "        always = [*_myrm_files(),",
        ("tests/agent/test_sandbox.py::test_read_only_cannot_reach_myrm_its_environment_or_its_keys",),
    ),
    Mutant(
        "sandbox: secret-looking variables dropped",
        "sandbox-secret-looking-variables-dropped",
        '            "drop_env": list(SECRET_ENV),\n',
        '            "drop_env": [],\n',
        ("tests/agent/test_sandbox.py::test_read_only_cannot_reach_myrm_its_environment_or_its_keys",),
    ),
    Mutant(
        "an agent's command gets no secret-looking variable, whatever its sandbox",
        "an-agents-command-gets-no-secret-variables",
        "    return {k: v for k, v in os.environ.items() if k in keep or not secret_name(k)}\n",
        "    return dict(os.environ)\n",
        (
            "tests/flows/test_secrets_in_commands.py::test_an_approved_command_sees_no_secret_variable",
            "tests/flows/test_secrets_in_commands.py::test_a_command_the_user_said_yes_to_sees_no_secret_variable",
            "tests/flows/test_secrets_in_commands.py::test_a_background_job_sees_no_secret_variable",
        ),
    ),
    Mutant(
        "myrm's own files and the home dot-folders in the workspace reach no tool",
        "myrms-own-files-are-private-in-the-workspace",
        "    return next((p for p in private if full == p or p in full.parents), None)\n",
        "    return None\n",
        (
            "tests/flows/test_secrets_in_commands.py::test_myrms_own_files_in_the_workspace_reach_no_tool",
            "tests/flows/test_secrets_in_commands.py::test_an_at_mention_of_myrms_config_attaches_nothing",
        ),
    ),
    Mutant(
        "MCP: a first turn cancelled while it waits for a late server leaves no waiting task behind",
        "mcp-the-first-turns-wait-leaves-no-task",
        "await asyncio.wait([c._ready for c in self.pending], timeout=FIRST_WAIT)",
        "await asyncio.wait([asyncio.ensure_future(c.ready()) for c in self.pending], timeout=FIRST_WAIT)",
        (
            "tests/agent/test_mcp_client.py::"
            "test_a_first_turn_cancelled_while_it_waits_for_a_late_server_leaves_no_task_behind",
        ),
    ),
    Mutant(
        "MCP: what a server says as its connection closes is dropped, the close clean",
        "mcp-what-a-server-says-as-it-closes-is-dropped",
        "return  # the session is gone (closed): what the server still says is not read",
        "raise",
        (
            "tests/agent/test_mcp_stdio.py::"
            "test_a_server_that_talks_while_its_connection_closes_is_closed_without_an_error",
        ),
    ),
    Mutant(
        "MCP: a server's message has a size limit",
        "mcp-a-message-has-a-size-limit",
        "                if len(pending) > MAX_MESSAGE_BYTES:\n",
        "                if False:\n",
        ("tests/agent/test_mcp_stdio.py::test_a_message_over_the_limit_stops_its_server_in_one_line",),
    ),
    Mutant(
        "MCP: a server's messages are on a budget (leftovers8)",
        "mcp-a-servers-messages-are-on-a-budget",
        "                        if not budget.take(anyio.current_time()):\n",
        "                        if False:\n",
        (
            "tests/agent/test_mcp_stdio.py::"
            "test_a_server_sending_notifications_without_end_is_stopped_in_one_line",
        ),
    ),
    Mutant(
        "MCP: a server's stderr in the log is bounded",
        "mcp-server-stderr-is-bounded",
        "            if room > 0:\n                kept = chunk[:room]\n",
        "            if True:\n                kept = chunk\n",
        (
            "tests/agent/test_mcp_stdio.py::test_a_servers_stderr_flood_bad_bytes_and_garbage_lines_cost_nothing",
        ),
    ),
    Mutant(
        "ask: a closed standard output stops the run as SIGPIPE, with one line",
        "ask-a-closed-stdout-stops-the-run-as-sigpipe",
        "    signals += (signal.SIGPIPE,) if pipe else ()\n",
        "    signals += ()\n",
        (
            "tests/agent/test_stream_json.py::"
            "test_stdout_closed_by_its_reader_stops_the_run_as_sigpipe_and_keeps_the_session",
        ),
    ),
    Mutant(
        "ask: a SIGPIPE from another pipe than its own output does not stop the run",
        "ask-only-its-own-outputs-sigpipe-stops-it",
        "        if sig == signal.SIGPIPE and (sig in got or not _output_gone()):\n",
        "        if sig == signal.SIGPIPE and sig in got:\n",
        (
            "tests/cli/test_sigpipe_source.py::test_a_broken_pipe_that_is_not_the_output_does_not_stop_the_run",
        ),
    ),
    Mutant(
        "ask: SIGPIPE is ignored again after the run (asyncio leaves it at SIG_DFL)",
        "ask-sigpipe-ignored-again-after-the-run",
        "        if pipe:  # asyncio leaves SIG_DFL",
        "        if False:  # asyncio leaves SIG_DFL",
        ("tests/cli/test_sigpipe_source.py::test_after_the_run_sigpipe_is_ignored_again",),
    ),
    Mutant(
        "store: a session others point into is not deleted",
        "a-session-others-point-into-is-not-deleted",
        "            if users := await self.pointing_into(sid):\n",
        "            if users := []:\n",
        ("tests/store/test_store.py::test_a_session_others_point_into_is_not_deleted_until_they_are",),
    ),
    Mutant(
        "store: a session open in another myrm is not renamed (leftovers8)",
        "a-session-open-elsewhere-is-not-renamed",
        '            if row is not None and row["token"] != self._leases.get(sid) and self._held(row):\n',
        "            if False:\n",
        (
            "tests/store/test_leases.py::test_a_second_store_is_refused_until_the_holder_closes",
            "tests/store/test_leases.py::"
            "test_ask_refuses_a_session_another_process_writes_and_takes_it_over_after_kill_9",
        ),
    ),
    Mutant(
        "sandbox: workspace-write writes the workspace only",
        "sandbox-workspace-write-writes",
        '                "write": [str(self.workspace), str(tmp), "/dev/null", "/dev/shm"],\n',
        '                "write": ["/"],\n',
        (
            "tests/agent/test_sandbox.py::test_workspace_write_writes_the_workspace_only_and_keeps_the_network",
            "tests/agent/test_sandbox.py::test_approved_commands_run_as_before_or_in_the_workspace_write_profile",
        ),
    ),
    Mutant(
        "read-only git: settings that run programs made inert",
        "read-only-git-settings-that-run-programs",
        "    env = git_hardening_env(ctx.workspace) if read_only else {}\n",
        "    env: dict[str, str] = {}\n",
        (
            "tests/agent/test_guards_attacks.py::test_a_workspace_laid_out_as_a_bare_repository_runs_nothing",
            "tests/agent/test_guards_attacks.py::test_a_nested_repository_with_fsmonitor_runs_nothing",
        ),
    ),
    Mutant(
        "read-only git: bare repositories only when named",
        "read-only-git-bare-repositories-only",
        '    ("safe.bareRepository", "explicit"),\n',
        "",
        (
            "tests/agent/test_guards_attacks.py::test_a_workspace_laid_out_as_a_bare_repository_runs_nothing",
            "tests/agent/test_guards_attacks.py::test_the_model_writing_a_bare_layout_with_edits_runs_nothing",
        ),
    ),
    Mutant(
        "options: long options by unambiguous prefix",
        "options-long-options-by-unambiguous",
        "    found = frozenset(o for o in spec.longs if o.startswith(typed))\n",
        "    found: frozenset[str] = frozenset()\n",
        (
            "tests/agent/test_guards_attacks.py::test_grep_der_reads_home_through_a_link_and_asks",
            "tests/agent/test_guards_attacks.py::test_wc_files0_by_prefix_asks",
            "tests/agent/test_permissions.py::"
            "test_every_prefix_of_every_long_option_the_rules_name_is_read_as_that_option",
        ),
    ),
    Mutant(
        "options: a short option's attached value",
        "options-a-short-options-attached-value",
        "                if ch in spec.short_values:\n",
        "                if False:\n",
        (
            "tests/agent/test_guards_attacks.py::test_an_attached_pattern_file_outside_asks",
            "tests/agent/test_permissions.py::test_the_normalisation_reads_options_as_gnu_getopt_does",
        ),
    ),
    Mutant(
        "escape codes shown inert",
        "escape-codes-shown-inert",
        '    return text.replace("\\r\\n", "\\n").translate(_TABLE)',
        "    return text",
        (f"{X}::test_sanitize_neutralises_every_control_and_keeps_tabs_and_newlines",),
    ),
    Mutant(
        "bidi overrides and lone surrogates shown inert",
        "bidi-overrides-and-lone-surrogates-shown-inert",
        '_TABLE.update({c: "\\ufffd" for c in (*range(0x202A, 0x202F)',
        '_TABLE.update({c: "\\ufffd" for c in (*range(0x202A, 0x202A)',
        (
            "tests/app/test_inert_text.py::test_sanitize_leaves_nothing_a_terminal_obeys_and_keeps_the_rest",
            "tests/app/test_inert_text.py::test_no_dialog_puts_a_control_a_bidi_override_or_a_surrogate_on_the_screen",
        ),
    ),
    Mutant(
        "any text can be stored (lone surrogates made whole)",
        "any-text-can-be-stored",
        "factory=WholeTextConnection",
        "factory=sqlite3.Connection",
        ("tests/store/test_base.py::test_any_text_is_stored_with_lone_surrogates_replaced",),
    ),
    Mutant(
        "a request holding a lone surrogate is sent",
        "a-request-holding-a-lone-surrogate-is-sent",
        "messages = _whole(messages)",
        "messages = messages",
        ("tests/cli/test_untrusted_output.py::test_ask_prints_any_reply_inert_and_sends_any_prompt",),
    ),
    Mutant(
        "the sessions table is inert",
        "the-sessions-table-is-inert",
        'print(sanitize(f"{s.id}',
        'print(str(f"{s.id}',
        (
            "tests/cli/test_untrusted_output.py::test_the_sessions_table_and_an_export_to_a_terminal_show_escape_codes_inert",
        ),
    ),
    Mutant(
        "an export to a terminal is inert",
        "an-export-to-a-terminal-is-inert",
        "sanitize(exported) if sys.stdout.isatty() else whole_text(exported)",
        "whole_text(exported)",
        (
            "tests/cli/test_untrusted_output.py::test_the_sessions_table_and_an_export_to_a_terminal_show_escape_codes_inert",
        ),
    ),
    Mutant(
        "a byte that is not UTF-8 on the terminal",
        "a-byte-that-is-not-utf8-on-the-terminal",
        "linux_driver.getincrementaldecoder = _replacing_decoder",
        "pass",
        (
            "tests/app/test_terminal_guard.py::"
            "test_bytes_that_are_not_utf8_on_the_terminal_arrive_as_replacement_characters",
        ),
    ),
    Mutant(
        "an ESC inside a bracketed paste is shown, not the start of key presses",
        "an-esc-inside-a-paste-is-shown-not-a-key",
        "out.append(SHOWN_ESC)",
        'out.append("\\x1b")',
        ("tests/app/test_paste_guard.py::test_textuals_parser_sees_one_paste_and_no_key",),
    ),
    Mutant(
        "a complete escape sequence inside a paste is dropped, its text kept",
        "a-complete-escape-sequence-in-a-paste-is-dropped",
        "if sequence := _SEQUENCE.match(text, esc):",
        "if sequence := None:",
        (
            "tests/app/test_paste_guard.py::test_only_the_escs_inside_a_paste_change_however_the_reads_cut_it",
            "tests/app/test_paste_guard.py::test_textuals_parser_sees_one_paste_and_no_key",
        ),
    ),
    Mutant(
        "a sequence in a paste cut by a read waits for the next one",
        "a-sequence-in-a-paste-cut-by-a-read-waits",
        "if not final and _UNFINISHED.match(text, esc):",
        "if False:",
        ("tests/app/test_paste_guard.py::test_only_the_escs_inside_a_paste_change_however_the_reads_cut_it",),
    ),
    Mutant(
        "ctrl+z: refused where no shell could bring myrm back",
        "ctrl-z-only-where-a-shell-can-fg-it",
        "if not terminal_guard.shell_can_resume():",
        "if False:",
        ("tests/app/test_suspend.py::test_ctrl_z_with_no_shell_to_come_back_to_is_refused_with_a_notice",),
    ),
    Mutant(
        "ctrl+z: fg draws the whole screen again",
        "ctrl-z-fg-draws-the-whole-screen-again",
        "self.refresh(layout=True)",
        "pass",
        ("tests/app/test_suspend.py::test_ctrl_z_stops_myrm_and_fg_brings_it_back_as_it_was",),
    ),
    Mutant(
        "an --api-base that is not an http(s) URL is refused before anything runs",
        "an-endpoint-that-is-not-an-http-url",
        'if parts.scheme not in ("http", "https") or not parts.netloc:',
        "if False:",
        ("tests/cli/test_cli.py::test_an_endpoint_that_is_not_an_http_url_is_one_line_before_anything_runs",),
    ),
    Mutant(
        "the full screen without a terminal is one line, not a hang",
        "the-full-screen-without-a-terminal",
        "if problem := _terminal_problem():",
        "if problem := None:",
        ("tests/cli/test_cli.py::test_the_full_screen_without_a_terminal_is_one_line_not_a_hang",),
    ),
    Mutant(
        "the full screen on a dumb terminal is one line (firsthour5)",
        "the-full-screen-on-a-dumb-terminal",
        '    if os.environ.get("TERM") == "dumb":',
        "    if False:",
        ("tests/cli/test_cli.py::test_the_full_screen_on_a_dumb_terminal_is_one_line_not_escape_codes",),
    ),
    Mutant(
        "a terminal a few rows high keeps rows for the chat (firsthour5)",
        "a-short-terminal-keeps-rows-for-the-chat",
        '        self.set_class(self.size.height < SHORT, "-short")',
        '        self.set_class(False, "-short")',
        ("tests/app/test_first_hour_open.py::test_a_terminal_a_few_rows_high_still_shows_the_conversation",),
    ),
    Mutant(
        "a log folder this user may not write is no traceback (firsthour5)",
        "a-log-folder-this-user-may-not-write",
        "            if not _writable(path):",
        "            if False:",
        ("tests/cli/test_cli.py::test_a_data_and_log_folder_another_user_made_is_one_line_not_a_traceback",),
    ),
    Mutant(
        "a config file this user may not read is one line (firsthour5)",
        "a-config-file-this-user-may-not-read-is-one-line",
        "    except (FileNotFoundError, NotADirectoryError):",
        "    except OSError:",
        ("tests/cli/test_cli.py::test_a_config_folder_this_user_may_not_read_is_one_line_not_a_traceback",),
    ),
    Mutant(
        "/copy takes the newest answer (firsthour5)",
        "copy-takes-the-newest-answer",
        'answer = next((it.text for it in reversed(self.main.chat.items) if it.kind == "assistant"), "")',
        'answer = ""',
        (
            "tests/app/test_first_hour_open.py::"
            "test_slash_copy_puts_the_newest_answer_on_the_clipboard_code_blocks_as_written",
        ),
    ),
    Mutant(
        "a typed folder past the @ index's cut is listed (firsthour5)",
        "a-typed-folder-past-the-index-cut-is-listed",
        "    if len(files) < MAX_FILES:\n        return None\n",
        "    if True:\n        return None\n",
        (
            "tests/app/test_first_hour_open.py::"
            "test_at_completion_offers_a_file_past_the_index_cut_once_its_folder_is_typed",
        ),
    ),
    Mutant(
        "@ completion reads a typed folder off the UI thread (round 21: a slow mount held every key)",
        "mention-a-typed-folder-is-read-off-the-ui-thread",
        "            self.read_typed_folder(folder)",
        "            self._listed[folder] = read_folder(folder, self.workspace)  # type: ignore[arg-type]",
        (
            "tests/app/test_first_hour_open.py::"
            "test_a_huge_folder_on_a_slow_mount_is_read_off_the_ui_thread_while_typing_goes_on",
        ),
    ),
    Mutant(
        "@ completion finds a typed folder's matches by bisection, not a pass at each key (review6)",
        "a-typed-folders-matches-are-bisected-not-scanned",
        "at = bisect.bisect_left(names, start, key=str.lower)",
        "at = next((i for i, n in enumerate(names) if n.lower() >= start), len(names))",
        (
            "tests/app/test_first_hour_open.py::"
            "test_a_huge_typed_folders_menu_looks_at_a_few_of_its_names_at_each_key",
        ),
    ),
    Mutant(
        "ACP: the model myrm acp started with stays offered after another is picked (review6)",
        "acp-the-model-started-with-stays-offered",
        "[*model_choices((await self._settings(ed)).model), started]",
        "[*model_choices((await self._settings(ed)).model)]",
        (
            "tests/acp/test_editor_leftovers.py::"
            "test_the_model_myrm_acp_started_with_is_still_offered_after_another_is_picked",
        ),
    ),
    Mutant(
        "ACP: a model pick that changes the mode in force tells the editor (review6)",
        "acp-a-model-pick-that-changes-the-mode-says-so",
        "if (mode := _mode(await self._settings(ed))) != before:",
        "if False and (mode := _mode(await self._settings(ed))) != before:",
        (
            "tests/acp/test_editor_leftovers.py::"
            "test_a_model_picked_that_takes_no_tools_shows_the_mode_it_gets",
        ),
    ),
    Mutant(
        "ACP: a build that failed with no prompt after it is logged when the editor goes (review6)",
        "acp-a-build-no-prompt-waited-for-is-logged-at-close",
        "if ed.build is not None:",
        "if ed.build is not None and not ed.build.done():",
        (
            "tests/acp/test_editor_leftovers.py::"
            "test_a_build_that_failed_with_no_prompt_after_it_is_logged_with_its_traceback",
        ),
    ),
    Mutant(
        "ACP: the model an editor picks is one offered (round 21: set_config_option)",
        "acp-the-model-picked-is-one-offered",
        "if config_id != MODEL_OPTION or not isinstance(value, str) or value not in choices:",
        "if False:",
        (
            "tests/acp/test_editor_leftovers.py::"
            "test_the_editor_is_offered_the_models_and_the_one_it_picks_answers_the_next_prompt",
        ),
    ),
    Mutant(
        "ACP: errors the SDK logs reach myrm's log with their traceback (round 21)",
        "acp-the-sdks-errors-reach-the-log",
        "    root_records_logged_too()\n",
        "    pass\n",
        (
            "tests/acp/test_editor_leftovers.py::"
            "test_an_error_the_sdk_logs_reaches_myrms_log_with_its_traceback_and_stderr",
        ),
    ),
    Mutant(
        "ACP: session/new is answered while the MCP servers start (round 21: held 10 s by a dead one)",
        "acp-mcp-servers-join-after-session-new",
        "        if wait:\n",
        "        if True:\n",
        (
            "tests/acp/test_editor_leftovers.py::"
            "test_session_new_is_answered_while_an_mcp_server_starts_and_the_first_prompt_has_its_tools",
        ),
    ),
    Mutant(
        "cli: an option repeated with another value",
        "cli-an-option-repeated-with-another-value",
        "if line := _repeated(self, ctx, args):",
        "if line := None:",
        (
            "tests/cli/test_option_positions.py::test_an_option_repeated_with_another_value_is_refused_in_one_line",
        ),
    ),
    Mutant(
        "an answer torn down mid-stream",
        "an-answer-torn-down-mid-stream",
        "if not (found := self.query(Markdown)):",
        "if False:",
        (
            "tests/app/widgets/test_quit_mid_reply.py::test_an_answer_torn_down_mid_stream_takes_the_last_chunks_without_raising",
        ),
    ),
    Mutant(
        "grep runs outside myrm, with a time limit",
        "grep-runs-outside-myrm-with-a-time-limit",
        "        await within(asyncio.gather(out(), errors(), proc.wait()), timeout)\n",
        "        await asyncio.gather(out(), errors(), proc.wait())\n",
        (f"{X}::test_a_search_over_its_time_limit_is_a_tool_error_and_its_child_ends",),
    ),
    Mutant(
        "a start-up failure is logged with its traceback",
        "a-start-up-failure-is-logged-with",
        '            log.exception("start-up failed")\n',
        "",
        (
            "tests/app/test_app_failures_logged.py",
            "tests/test_failures_logged.py::test_no_broad_handler_swallows_a_failure_unlogged",
        ),
    ),
    Mutant(
        "a call's arguments are checked against its tool's schema before the tool runs",
        "a-calls-arguments-are-checked-against",
        "problems = list(parsed.problems) if recorded else check(parsed, tool.parameters)",
        "problems = list(parsed.problems)",
        (
            "tests/flows/test_call_shapes.py::test_paths_42_gets_a_clear_error_and_later_turns_and_compactions_work",
        ),
    ),
    Mutant(
        "a lone surrogate in a call's arguments is replaced before it is stored or shown",
        "a-lone-surrogate-in-a-calls-arguments",
        '        return _SURROGATE.sub("\\ufffd", s)\n',
        "        return s\n",
        ("tests/flows/test_call_shapes.py::test_the_accessor_reads_every_shape_without_raising",),
    ),
    Mutant(
        "writers of two processes take turns on the writer lock (no starvation by the busy handler's polls)",
        "writers-of-two-processes-take-turns",
        'self._writer = WriterLock(path) if path != ":memory:" and not path.startswith("file:") else None',
        "self._writer = None",
        ("tests/store/test_writer_lock.py::test_a_writer_queued_on_the_writer_lock_gets_the_next_turn",),
    ),
    Mutant(
        "the ring's first figure for a provider's model does not wait for litellm (window from its file)",
        "the-rings-first-figure-for-a-providers",
        "    return bundled_window(settings.model) is None\n",
        "    return True\n",
        (
            "tests/cli/test_import_hygiene.py::"
            "test_the_first_frame_and_the_rings_first_figure_load_no_heavy_module",
        ),
    ),
    Mutant(
        "a cancel (Esc, a fork) that comes as a timed wait ends is not lost (3.11's wait_for lost it)",
        "a-cancel-esc-a-fork-that-comes",
        "    async with asyncio.timeout(seconds):\n        return await aw\n",
        "    return await asyncio.wait_for(aw, seconds)\n",
        (
            "tests/test_aio.py::test_a_cancel_in_the_loop_turn_the_awaited_thing_finishes_is_kept",
            "tests/store/test_store_concurrency.py::test_a_cancel_that_comes_as_the_writer_lock_is_taken_is_not_lost",
        ),
    ),
    Mutant(
        "a lease released as a cancel lands on its commit is forgotten (the row is gone)",
        "a-lease-released-as-a-cancel-lands",
        "        await self._to_the_end(release())\n",
        "        await release()\n",
        (
            "tests/store/test_leases.py::test_a_lease_taken_or_released_as_a_cancel_lands_on_its_commit_is_complete",
            "tests/store/test_leases.py::test_a_lease_release_cut_by_a_cancel_still_lets_go_of_the_session",
        ),
    ),
    Mutant(
        "a lease taken as a cancel lands on its commit is remembered (the row is there)",
        "a-lease-taken-as-a-cancel-lands",
        "        await self._to_the_end(self._acquire_lease(sid))\n",
        "        await self._acquire_lease(sid)\n",
        (
            "tests/store/test_leases.py::test_a_lease_taken_or_released_as_a_cancel_lands_on_its_commit_is_complete",
        ),
    ),
    Mutant(
        "a lease's token is forgotten only once its row is deleted",
        "a-leases-token-is-forgotten-only-once",
        "        token = self._leases.get(sid)\n        if token is None:\n            return\n",
        "        token = self._leases.pop(sid, None)\n        if token is None:\n            return\n",
        ("tests/store/test_leases.py::test_a_lease_release_cut_by_a_cancel_still_lets_go_of_the_session",),
    ),
    Mutant(
        "untrusted text: a tool card's heading is plain text, never markup ([/] ended the app)",
        "untrusted-text-a-tool-cards-heading",
        "super().__init__(*children, title=plain(title), **kwargs)",
        "super().__init__(*children, title=title, **kwargs)",
        (
            "tests/app/test_untrusted_text.py::test_a_live_call_with_brackets_in_its_arguments_keeps_the_app_running",
        ),
    ),
    Mutant(
        "untrusted text: every toast is plain text",
        "untrusted-text-every-toast-is-plain-text",
        "super().notify(text, markup=False, **kwargs)",
        "super().notify(message, markup=markup, **kwargs)",
        ("tests/app/test_untrusted_text.py::test_a_stored_session_with_markup_in_every_field_reopens",),
    ),
    Mutant(
        "untrusted text: a stored item no widget can show is plain text and the session opens",
        "untrusted-text-a-stored-item-no-widget",
        "        w = item.build_or_plain(self._plain_first)\n",
        "        w = item.build(self._plain_first)\n",
        (
            "tests/app/test_untrusted_text.py::test_a_stored_item_that_cannot_be_shown_is_plain_text_and_the_session_opens",
        ),
    ),
    Mutant(
        "reopen: answers shown plain at load get their markdown",
        "reopen-answers-shown-plain-get-their-markdown",
        "            if isinstance(item.widget, AssistantMessage) and not item.widget.formatted:\n"
        "                await item.widget.format()\n",
        "            pass\n",
        (
            "tests/app/test_tui_long_session.py::test_a_loaded_answer_shows_its_text_plain_until_its_markdown_is_rendered",
            "tests/app/test_tui_long_session.py::test_a_reopened_session_builds_only_what_fills_the_view_and_reaches_the_rest",
        ),
    ),
    Mutant(
        "reopen: items drawn shorter than their estimate are topped up until the view is full",
        "reopen-items-drawn-shorter-are-topped-up",
        "        if at_tail and self.window.lo > 0 and drawn < self.scrollable_content_region.height:\n",
        "        if False:\n",
        (
            "tests/app/test_tui_long_session.py::test_items_drawn_shorter_than_their_estimate_are_topped_up_until_the_view_is_full",
        ),
    ),
    Mutant(
        "approval: a key before the dialog could be read does nothing",
        "approval-a-key-before-the-dialog-could",
        "        if not self.readable(event.time):\n            ago = ",
        "        if False:\n            ago = ",
        (
            "tests/app/screens/test_approval.py::test_a_key_within_the_grace_period_or_typed_before_the_dialog_does_nothing",
            "tests/app/screens/test_approval.py::test_a_message_typed_as_the_dialog_opens_neither_approves_nor_answers_it",
        ),
    ),
    Mutant(
        "endless stream: a limit that fired goes before the chunks queued, and the reader checks it too",
        "endless-stream-a-limit-that-fired-goes",
        '            if failed:\n                raise failed[0]\n            if kind == "item":\n'
        "                if over_total():",
        '            if kind == "item":\n                if False:',
        (
            "tests/llm/test_endless_stream.py::test_an_endless_stream_is_cut_at_its_total_limit_not_after_the_backlog",
        ),
    ),
    Mutant(
        "reply bounds: at most MAX_CALLS of a reply's calls run, the rest get an error",
        "reply-bounds-at-most-max-calls",
        "calls, over = asked[: self.max_calls], asked[self.max_calls :]",
        "calls, over = asked, asked[len(asked) :]",
        (
            "tests/agent/test_tool_runner.py::test_a_reply_of_many_calls_runs_a_bounded_number_at_a_bounded_pace",
        ),
    ),
    Mutant(
        "reply bounds: at most MAX_PARALLEL calls run at once",
        "reply-bounds-at-most-max-parallel-calls",
        "            async with slots:\n",
        "            if slots:\n",
        (
            "tests/agent/test_tool_runner.py::test_a_reply_of_many_calls_runs_a_bounded_number_at_a_bounded_pace",
        ),
    ),
    Mutant(
        "secrets at rest: a compaction record's gists are redacted",
        "secrets-at-rest-a-compaction-records",
        'text = " ".join(redact(text).split())',
        'text = " ".join(text.split())',
        (
            "tests/flows/test_secrets_at_rest.py::test_no_secret_at_rest_outside_the_raw_tables_after_a_compaction",
        ),
    ),
    Mutant(
        "a vault entry whose grammar is not installed is shown as plain text (it made the app fail)",
        "a-vault-entry-whose-grammar-is-not",
        "        except LanguageDoesNotExist:\n",
        "        except ZeroDivisionError:\n",
        ("tests/app/widgets/test_vault_pane.py::test_without_a_grammar_an_entry_is_shown_as_plain_text",),
    ),
    Mutant(
        "a chat body that is not plain JSON goes through the OpenAI SDK's own transform",
        "a-chat-body-that-is-not-plain-json-goes",
        "        json.dumps(body)  # in C",
        "        str(body)  # in C",
        (
            "tests/llm/test_openai_body.py::test_a_body_holding_a_model_object_goes_through_the_sdks_transform",
        ),
    ),
    Mutant(
        "a summary block's count adds up chunks only where no token spans the split (not before a slash)",
        "a-chunk-starts-where-no-token-spans-the",
        '_CHUNK = re.compile(r"(?<=\\n)(?=[ \\t]*[^\\s/])")',
        '_CHUNK = re.compile(r"(?<=\\n)(?=[ \\t]*[^\\s])")',
        ("tests/context/test_tokens.py::test_a_text_counted_by_its_chunks_is_counted_as_a_whole",),
    ),
    Mutant(
        "the stored history's count goes on from the last request only if what it counted is still there",
        "the-stored-historys-count-goes-on-from",
        "        if memo is not None and 1 < memo[0] <= n and msgs[memo[0] - 1] is memo[1]:\n",
        "        if memo is not None and 1 < memo[0] <= n:\n",
        ("tests/context/test_tokens.py::test_a_growing_history_is_counted_as_a_whole_one_is",),
    ),
    Mutant(
        "a lease taken or released inside the caller's transaction does not wait for it",
        "a-lease-taken-or-released-inside",
        "        if self._owner is not None and self._owner is asyncio.current_task():\n",
        "        if False:\n",
        (
            "tests/store/test_leases.py::test_a_lease_taken_and_released_inside_a_transaction_does_not_wait_for_it",
        ),
    ),
    Mutant(
        "a planned compaction past 90 % goes to the full depth, not the net's",
        "a-planned-compaction-past-90-goes",
        "return min(self.level, Level.FULL) if self.planned else self.level",
        "return self.level",
        (
            "tests/context/steps/test_precompact.py::"
            "test_a_planned_compaction_past_90_percent_goes_to_the_full_depth_and_the_net_to_emergency",
        ),
    ),
    Mutant(
        "a planned compaction that could fold almost nothing is skipped",
        "a-planned-compaction-that-could-fold",
        "elif (room := foldable_tokens(v) + anchor_room(v, s)) < s.input_budget // 20:",
        "elif (room := foldable_tokens(v) + anchor_room(v, s)) < 0:",
        (
            "tests/context/steps/test_precompact.py::"
            "test_a_planned_compaction_that_could_fold_almost_nothing_is_skipped_until_the_net",
        ),
    ),
    Mutant(
        "a page build looks at the view again when it ends",
        "a-page-build-looks-at-the-view-again",
        "self.call_after_refresh(self._fill_view)",
        "pass",
        (
            "tests/app/test_tui_long_session.py::"
            "test_a_fill_that_found_another_page_being_built_still_fills_the_view",
        ),
    ),
    Mutant(
        "a planned compaction counts the room the head cut frees",
        "a-planned-compaction-counts-the-head-cut",
        "return max(0, head - s.anchor_tokens) if head > s.head_limit_tokens else 0",
        "return 0",
        (
            "tests/context/steps/test_fit_properties.py::"
            "test_a_first_message_filling_the_budget_is_cut_by_a_planned_compaction_not_the_net",
        ),
    ),
    Mutant(
        "the background summary takes the cheaper route",
        "the-background-summary-takes-the-cheaper",
        'return cheapest(self.quotes) or RouteQuote("span", fixed, 0.0)',
        'return RouteQuote("span", fixed, 0.0)',
        (
            "tests/agent/test_summary_prep.py::test_left_to_myrm_a_cheap_main_model_summarizes_from_its_own_cache",
        ),
    ),
    Mutant(
        "history_search: a stored message is indexed in its own transaction",
        "history-search-a-stored-message",
        "if self.history_indexed:  # in the same transaction: a stored message is a searchable one",
        "if False:",
        (
            "tests/store/test_history.py::"
            "test_every_stored_fact_is_found_in_the_top_five_with_a_pointer_that_reads_back",
        ),
    ),
    Mutant(
        "history_search: an existing database is backfilled on open",
        "history-search-an-existing-database",
        "await history.catch_up(conn)",
        "pass",
        ("tests/store/test_history.py::test_an_existing_database_is_backfilled_on_open",),
    ),
    Mutant(
        "history_search: searches and their results are not indexed",
        "history-search-searches-and-their",
        'if r["role"] == "tool" and r["name"] == TOOL_NAME:',
        "if False:",
        ("tests/agent/tools/test_history.py::test_answers_stay_bounded_and_say_when_nothing_matches",),
    ),
    Mutant(
        "one budget: the bench's myrm strategy derives it as the live agent does",
        "one-budget-the-benchs-myrm-strategy",
        "self.config = budget_config(self.config.max_context_tokens, REPLY_TOKENS, tokens)",
        "self.config = ContextConfig("
        "max_context_tokens=self.config.max_context_tokens, overhead_tokens=tokens)",
        ("tests/bench/test_one_budget.py",),
    ),
    Mutant(
        "a folded assistant message keeps what it stated that a later message refers to",
        "a-folded-assistant-message-keeps-what-it",
        "return [*lines, *_redacted(ledger.stated_used_lines(m, lines, k, referred))]",
        "return lines",
        (
            "tests/context/summary/test_stated_facts.py::test_a_folded_decision_and_finding_stay_in_the_record",
        ),
    ),
    Mutant(
        "every stated fact a later message uses is a candidate, however long the script",
        "every-stated-fact-a-later-message-uses",
        "if len(facts) >= USED_MAX_FACTS:",
        "if len(facts) >= USED_MAX_FACTS or sum(len(f) + 3 for f in facts) >= USED_MAX_CHARS:",
        (
            "tests/context/summary/test_stated_facts.py::"
            "test_a_code_line_far_down_a_long_script_a_later_message_shows_gets_its_line",
            "tests/context/summary/test_stated_facts.py::"
            "test_every_stated_code_line_a_later_message_uses_is_kept_up_to_the_count_cap",
        ),
    ),
    Mutant(
        "a squeezed reply opening keeps its head and its tail",
        "a-reply-opening-keeps-its-head-and-tail",
        "cut = [_short_ends if ln.decided else _short for ln in lines]",
        "cut = [_short for ln in lines]",
        (
            "tests/context/summary/test_squeezed_lines.py::"
            "test_a_squeezed_block_keeps_the_end_of_a_replys_opening_and_the_start_of_the_users_words",
            "tests/context/summary/test_squeezed_lines.py::test_only_the_agents_lines_of_the_users_rank_keep_their_tail",
        ),
    ),
    Mutant(
        "a call whose one argument is the agent's prose is recorded as its sentences",
        "a-prose-argument-is-the-agents-words",
        "if not shell and (said := prose_argument(c.arguments)):",
        "if not shell and (said := None):",
        (
            "tests/context/summary/test_stated_facts.py::"
            "test_a_thought_is_recorded_as_the_agents_sentences_and_a_command_as_a_call",
            "tests/context/summary/test_stated_facts.py::"
            "test_the_sentence_a_later_message_refers_to_outlasts_the_rest_of_a_thought",
            "tests/context/summary/test_stated_facts.py::test_a_prose_argument_keeps_every_sentence_once_in_order",
        ),
    ),
    Mutant(
        "a test run's verdict is never a template said again",
        "a-test-verdict-is-never-a-template",
        "long = len(norm) >= TEMPLATE_MIN_CHARS and not numbers_are_news(text)",
        "long = len(norm) >= TEMPLATE_MIN_CHARS",
        (
            "tests/context/summary/test_ledger_density.py::"
            "test_a_later_test_verdict_is_news_though_it_differs_only_in_its_numbers",
            "tests/context/summary/test_ledger_density.py::test_no_test_verdict_is_dropped_as_a_template_of_another",
        ),
    ),
    Mutant(
        "the Record merges by meaning: a superseded decision goes",
        "the-record-merges-by-meaning",
        'gone = superseded([ln.text if ln.decided else "" for ln in uniq])',
        "gone = [False] * len(uniq)",
        (
            "tests/context/summary/test_supersede.py::test_a_folded_decision_superseded_by_a_later_one_leaves_the_summary",
            "tests/context/summary/test_supersede.py::test_a_superseded_decision_never_survives_next_to_its_successor",
        ),
    ),
    Mutant(
        "the Record spends its share on what later messages refer to",
        "the-record-spends-its-share-on-what",
        "                    self._kept_late(uniq[i]),\n",
        "",
        (
            "tests/context/summary/test_supersede.py::"
            "test_a_referenced_fact_is_never_dropped_before_an_unreferenced_one_of_its_kind",
        ),
    ),
    Mutant(
        "the agent's own conclusions a later message refers to rank with its commands in the Record",
        "the-agents-own-conclusions-rank-with",
        "return max(ln.priority, P_OWN) if ln.own and ln.referred else ln.priority",
        "return ln.priority",
        (
            "tests/context/summary/test_own_conclusions.py::test_an_own_conclusion_outlasts_the_located_lines_of_outputs",
            "tests/context/summary/test_own_conclusions.py::"
            "test_no_line_below_an_own_conclusion_is_kept_while_it_goes",
        ),
    ),
    Mutant(
        "an agent's line is its own only when no earlier message held what it states",
        "own-is-what-no-earlier-message-held",
        "return k >= 0 and any(not later.token_before(t, k) and not later.used_before(t, k) for t in used)",
        "return k >= 0",
        (
            "tests/context/summary/test_own_conclusions.py::"
            "test_own_marks_a_line_that_states_what_no_earlier_message_held",
        ),
    ),
    Mutant(
        "a Record line keeps whose it was when the blocks are merged",
        "a-record-line-keeps-whose-it-was",
        "return Line(text, hit.priority, hit.decided, own=hit.own)",
        "return Line(text, hit.priority)",
        (
            "tests/context/summary/test_own_conclusions.py::test_reparse_keeps_whose_line_it_was",
            "tests/context/summary/test_own_conclusions.py::"
            "test_a_decision_superseded_in_a_later_block_goes_when_the_blocks_merge",
        ),
    ),
    Mutant(
        "the Record reads later outputs as they came to tell what the agent stated is referred to",
        "referred-reads-later-outputs-as-they-came",
        "ledger.Referred([self._referable(m, req) for m in [*removed, *view]], later)",
        "ledger.Referred([*removed, *view], later)",
        (
            "tests/context/summary/test_stated_facts.py::"
            "test_a_trimmed_later_output_still_counts_as_referring_to_what_the_agent_stated",
        ),
    ),
    Mutant(
        "the room a Record's fit leaves takes squeezed forms of the lines it dropped",
        "the-room-a-fit-leaves-takes-squeezed-lines",
        "self._refill(drop, texts, budget_chars - total)",
        "pass",
        (
            "tests/context/summary/test_squeezed_refit.py::test_the_room_a_fit_leaves_takes_a_dropped_line_squeezed",
            "tests/context/summary/test_squeezed_refit.py::test_a_summary_block_spends_the_room_on_squeezed_lines",
        ),
    ),
    Mutant(
        "a JSON envelope's text is tokenised unescaped",
        "an-envelopes-text-is-read-unescaped",
        'source = "\\n".join(map(str, envelope.values())) if envelope is not None else text',
        "source = text",
        (
            "tests/context/summary/test_json_envelope.py::test_a_fact_at_a_line_start_is_read_without_the_escape",
            "tests/context/summary/test_json_envelope.py::test_an_envelope_holds_every_fact_its_text_holds",
        ),
    ),
    Mutant(
        "a JSON envelope's members are not demoted as a record's unused items",
        "an-envelope-is-no-record",
        'if out and text.lstrip()[:1] in ("[", "{") and text_envelope(text) is None:',
        'if out and text.lstrip()[:1] in ("[", "{"):',
        (
            "tests/context/summary/test_json_envelope.py::"
            "test_an_envelopes_members_are_not_demoted_as_a_records_unused_items",
        ),
    ),
    Mutant(
        "below the result rank a JSON line costs the Record its length per value",
        "a-json-line-costs-its-length-per-value",
        "return chars_per_fact(ln.text) if rank(ln) < P_RESULT else len(ln.text)",
        "return len(ln.text)",
        (
            "tests/context/summary/test_json_fact_cost.py::test_a_member_of_several_values_outlasts_one_value_members",
            "tests/context/summary/test_json_fact_cost.py::"
            "test_below_the_result_rank_the_fit_drops_the_costliest_per_fact_first",
        ),
    ),
    Mutant(
        "a summary block's Record squeezes the lines its fit drops",
        "the-record-squeezes-the-lines-it-drops",
        "fitter = ledger.Fitter(rec_lines, seen, squeeze=True)",
        "fitter = ledger.Fitter(rec_lines, seen)",
        (
            "tests/context/summary/test_squeezed_refit.py::test_a_summary_block_spends_the_room_on_squeezed_lines",
        ),
    ),
    Mutant(
        "a huge original read at its ends is read with its copy in the view",
        "referred-a-huge-original-with-its-copy",
        'return replace(original, content=f"{original.text}\\n{m.text}")',
        "return original",
        (
            "tests/context/summary/test_stated_facts.py::"
            "test_a_huge_original_read_at_its_ends_still_counts_what_its_trimmed_copy_kept",
        ),
    ),
    Mutant(
        "the answered trim expects no more requests than the session has made",
        "the-answered-trim-expects-no-more-requests",
        "return min(until, float(requests_so_far(req.raw, until)))",
        "return until",
        ("tests/context/steps/test_trims.py::test_an_output_answered_early_in_a_session_is_not_trimmed_yet",),
    ),
    Mutant(
        "a remount of the transcript waits for the page being built",
        "a-remount-waits-for-the-page-being-built",
        "async with self._pages:  # after a page being built: it moves the window this reads",
        "if True:",
        ("tests/app/test_chat_pages_race.py::test_a_remount_during_a_page_build_waits_for_it",),
    ),
    Mutant(
        "a vault card inserted while a page is built waits for the build",
        "a-vault-card-waits-for-the-page-being-built",
        "if self._building:  # a build or a remount under way: the cards after it",
        "if False:",
        ("tests/app/test_chat_pages_race.py::test_a_vault_card_added_during_a_page_build_waits_for_it",),
    ),
    Mutant(
        "myrm bench's error line is inert",
        "the-benchs-error-line-is-inert",
        'sys.stderr.write(f"myrm bench: {sanitize(msg)}\\n")',
        'sys.stderr.write(f"myrm bench: {msg}\\n")',
        ("tests/bench/test_corpus_hostile.py::test_the_benchs_error_line_is_inert",),
    ),
    Mutant(
        "no cache mark after the last message the next request sends again",
        "nothing-after-the-last-reused-message-is-marked",
        "marks = [i for i in marks if i <= end]",
        "marks = list(marks)",
        ("tests/context/steps/test_cache_marks.py::test_nothing_after_the_end_it_is_given_is_marked",),
    ),
    Mutant(
        "the cache marks the protected head's end, which every compaction keeps",
        "a-compaction-reads-the-protected-head",
        "head_end = max(min(head_len, len(view)) - 1, last_system)",
        "head_end = last_system",
        (
            "tests/context/steps/test_cache_marks.py::"
            "test_a_compacting_request_reads_the_protected_head_and_the_summary_blocks_it_kept",
        ),
    ),
    Mutant(
        "the marks end before an output only when the trim pays for cutting it whatever the reply",
        "a-cut-is-foreseen-only-when-the-trim-pays-for-any-reply",
        "if READ * ((full - short) * later + full) > s.trim_margin * WRITE * short:",
        "if True:",
        (
            "tests/context/steps/test_cache_marks.py::test_the_marks_end_before_an_output_the_trim_cuts_next_and_only_then",
        ),
    ),
    Mutant(
        "the smart filter cuts prose on arrival only where it crowds the view",
        "a-lossy-cut-only-where-the-output-crowds",
        "lossy = crowds(running + tokens, point, req.state.round_growth, req.raw)",
        "lossy = True",
        (
            "tests/context/filters/test_room.py::test_a_large_report_in_a_session_that_will_end_first_stays_whole",
            "tests/context/filters/test_room.py::test_a_crowded_turn_is_cut_where_a_young_one_is_not",
        ),
    ),
    Mutant(
        "the smart filter cuts what is not prose on arrival wherever it is large",
        "what-is-not-prose-is-cut-on-arrival",
        "lossy = lossy or not is_prose(body)",
        "lossy = lossy",
        (
            "tests/context/filters/test_room.py::test_a_large_code_read_is_cut_on_arrival_even_where_nothing_crowds",
        ),
    ),
    Mutant(
        "a file view cut on arrival keeps its fact lines first, not its head and tail",
        "a-file-view-keeps-its-fact-lines-first",
        "if is_file_view(view):",
        "if False:",
        (
            "tests/context/filters/test_room.py::test_a_code_read_cut_on_arrival_keeps_the_names_from_its_middle",
        ),
    ),
    Mutant(
        "a JSON output's skeleton is made where nothing crowds",
        "a-json-skeleton-wherever-large",
        "if st is not None and (lossy or st[0] in DATA_FORMATS):",
        "if st is not None and lossy:",
        (
            "tests/context/filters/test_room.py::test_a_json_output_gets_its_skeleton_even_where_nothing_crowds",
        ),
    ),
    Mutant(
        "history_search: a failed index write never costs the message",
        "history-search-a-failed-index-write",
        'except sqlite3.Error:\n            log.exception("history_search: indexing failed',
        'except ZeroDivisionError:\n            log.exception("history_search: indexing failed',
        ("tests/store/test_history.py::test_a_failed_index_write_never_costs_the_message_and_is_retried",),
    ),
    Mutant(
        "a fold far over the window: the Record reads its span only",
        "a-fold-far-over-the-window-the-record",
        "start = ledger_start(removed, req, s.input_budget * LEDGER_SPAN_BUDGETS)",
        "start = 0",
        ("tests/context/steps/test_summarize_scale.py::test_the_record_reads_at_most_its_span_of_the_fold",),
    ),
    Mutant(
        "the embedded model stores no environment block it is never sent",
        "the-embedded-model-stores-no-environment",
        "            if self.sends_tools:\n",
        "            if True:\n",
        ("tests/app/test_numbers_agree.py::test_the_embedded_model_is_counted_only_what_it_is_sent",),
    ),
    Mutant(
        "a planned compaction is labelled planned, never by its level past 90 %",
        "a-planned-compaction-is-labelled-planned",
        "return f\"planned ({'FULL' if level == 'EMERGENCY' else level} level)\"",
        'return f"threshold {self.level}"',
        ("tests/app/test_numbers_agree.py::test_a_planned_compaction_never_reads_as_an_emergency",),
    ),
    Mutant(
        "Esc in a compaction's list gives the keys back to the prompt",
        "esc-in-a-compactions-list-gives-the-keys",
        "        self._set_cursor(None)\n        for prompt in self.screen.query(PromptInput):",
        "        if self.screen.focused is not self:\n            self.focus()\n            return\n"
        "        self._set_cursor(None)\n        for prompt in self.screen.query(PromptInput):",
        (
            "tests/app/test_first_hour_smalls.py::"
            "test_esc_in_an_expanded_compaction_list_gives_the_keys_back_to_the_prompt",
        ),
    ),
    Mutant(
        "a key waits for the one before it to be handled",
        "a-key-waits-for-the-one-before-it-to-be",
        "if self.busy or self.waiting or not self._screen_ready():",
        "if False:",
        ("tests/app/test_prompt_input_order.py::test_the_issues_bursts_in_a_fresh_session",),
    ),
    Mutant(
        "a key read before the screen is mounted waits for it (typed while myrm starts)",
        "a-key-read-before-the-screen-is-mounted-waits",
        "if screen.is_mounted:",
        "if True:",
        ("tests/app/test_focus_keys.py::test_keys_typed_while_the_app_starts_all_reach_the_prompt",),
    ),
    Mutant(
        "keys left waiting when the screens are gone (quitting) are dropped, not passed to no screen",
        "keys-waiting-when-the-screens-are-gone-dropped",
        "if not self.app.screen_stack:  # quitting: the screens are gone, nothing takes keys",
        "if False:",
        ("tests/app/test_focus_keys.py::test_keys_left_waiting_when_the_screens_are_gone_are_dropped",),
    ),
    Mutant(
        "an error Textual catches once the quit began is logged and the quit's exit code stays",
        "quit-an-error-while-quitting-keeps-exit-code-0",
        "if self._exit:",
        "if False:",
        ("tests/app/test_quit_exit_code.py::test_an_error_while_quitting_is_logged_and_the_quit_exits_0",),
    ),
    Mutant(
        "a session quit during its first turn takes the local title of its first message",
        "quit-an-untitled-session-takes-its-local-title",
        "await self.controller.title_untitled(self._first_message)",
        "pass",
        (
            "tests/app/test_quit_exit_code.py::"
            "test_a_quit_during_the_first_turn_leaves_the_session_titled_from_its_first_message",
        ),
    ),
    Mutant(
        "a character typed in the transcript (none of its keys) goes to the prompt, with the focus",
        "transcript-typed-text-goes-to-the-prompt",
        "if event.is_printable and event.character and event.key not in own:",
        "if False:",
        ("tests/app/test_focus_keys.py::test_keys_after_an_opener_land_in_what_it_opened",),
    ),
    Mutant(
        "myrm ask writes nothing to stdout for a turn without an answer (a failed one)",
        "ask-a-turn-without-an-answer-writes-nothing-to-stdout",
        "if answered[0]:",
        "if True:",
        ("tests/cli/test_cli.py::test_ask_reports_provider_failure_with_exit_code",),
    ),
    Mutant(
        "ctrl+d in the empty box is the end of input: asks once, then quits",
        "prompt-ctrl-d-in-the-empty-box-is-the-end-of-input",
        'if event.key == "ctrl+d" and not self.text:',
        "if False:",
        (
            "tests/app/test_tui_keys.py::"
            "test_ctrl_d_in_the_empty_box_asks_once_then_quits_and_with_text_deletes_forward",
        ),
    ),
    Mutant(
        "Backspace or Delete reaching a paste's label removes the whole label (and the paste)",
        "prompt-a-paste-label-is-deleted-whole",
        "if touches(at, at + len(label), col):",
        "if False:",
        (
            "tests/app/widgets/test_prompt_input_labels.py::"
            "test_backspace_or_delete_reaching_a_paste_label_removes_it_whole",
            "tests/app/widgets/test_prompt_input_labels.py::test_backspace_after_a_paste_label_removes_the_paste",
        ),
    ),
    Mutant(
        "a refused message comes back into the box with the cursor at its end",
        "prompt-a-refused-message-comes-back-with-the-cursor-at-its-end",
        "self.move_cursor(self.document.end)",
        "pass",
        ("tests/app/test_tui.py::test_a_refused_message_comes_back_with_the_cursor_at_its_end",),
    ),
    Mutant(
        "a title the model wrote in markdown is kept as plain words",
        "title-the-models-markdown-is-not-shown",
        'prose = _EMPHASIS.sub("", _CODE.sub("\\n", out))',
        "prose = out",
        (
            "tests/agent/test_title.py::test_a_title_the_model_wrote_in_markdown_is_stored_as_plain_words",
            "tests/agent/test_title.py::test_any_markdown_around_the_models_title_is_removed_and_its_words_kept",
        ),
    ),
    Mutant(
        "an error closing the session at exit is logged and Textual's shutdown goes on (exit code 0)",
        "quit-an-error-closing-the-session-is-logged",
        'with failure_logged(log, "closing the session at exit", logging.ERROR):',
        "if True:",
        (
            "tests/app/test_quit_exit_code.py::"
            "test_an_error_closing_the_session_at_exit_is_logged_the_store_still_closes_and_the_quit_exits_0",
        ),
    ),
    Mutant(
        "the store closes at exit (its leases released) even when closing the agent failed",
        "quit-the-store-closes-after-a-failed-agent-close",
        "try:\n            await self.drop_agent()",
        "await self.drop_agent()\n        try:",
        (
            "tests/app/test_quit_exit_code.py::"
            "test_an_error_closing_the_session_at_exit_is_logged_the_store_still_closes_and_the_quit_exits_0",
        ),
    ),
    Mutant(
        "a reopened session's answer reached by its formatting after ctrl+q is left plain (no MountError)",
        "reopen-an-answer-is-not-formatted-once-the-app-quits",
        "or not self.is_mounted or not self.is_attached:",
        "or not self.is_mounted:",
        (
            "tests/app/test_quit_exit_code.py::test_an_answer_reached_after_ctrl_q_is_left_plain_without_raising",
        ),
    ),
    Mutant(
        "a typed-out paste's later line ends are never a send",
        "a-typed-out-pastes-later-line-ends-are",
        'if event.key == "enter" and burst and "\\n" in self._burst_text:',
        "if False:",
        ("tests/app/test_tui_keys.py::test_a_200_line_unbracketed_paste_collapses_and_does_not_send_itself",),
    ),
    Mutant(
        "the transcript shows a sent paste by the label the box showed (the app tells it, on Submitted)",
        "the-transcript-shows-a-sent-paste",
        "        self.main.chat.pastes.update(event.pastes)\n",
        "",
        ("tests/app/test_tui_cards.py::test_a_large_paste_shows_as_a_label_and_is_sent_whole",),
    ),
    Mutant(
        "session memo: the key is the whole input",
        "the-memo-key-is-the-whole-input",
        "k = key(*args) if key is not None else args",
        "k = args[:0]",
        (
            "tests/context/test_memo.py::test_a_session_sends_the_same_with_its_memo_as_without",
            "tests/context/test_memo.py::test_each_memoized_reader_returns_what_it_computes",
        ),
    ),
    Mutant(
        "session memo: memo.each keys each argument as the memoized function's wrapper does",
        "memo-each-keys-as-the-wrapper-does",
        "k = (fn, (x,))",
        "k = (fn, ())",
        (
            "tests/context/test_memo.py::test_each_is_the_memoized_function_called_on_each",
            "tests/context/summary/test_redundant_index.py::test_redundant_marks_what_comparing_every_pair_marks",
        ),
    ),
    Mutant(
        "the Record remembers a squeezed line by the lines equal to it but for spaces and tabs",
        "a-squeezed-lines-candidates-are-equal-but",
        "missed = {_bare(t) for t in record if t not in made}",
        "missed = {t for t in record if t not in made}",
        ("tests/context/steps/test_summarize.py::test_the_record_remembers_whose_each_squeezed_line_was",),
    ),
    Mutant(
        "session memo: a gist is keyed on all it reads",
        "a-gist-is-keyed-on-all-it-reads",
        "return (m.role, m.name, m.text, m.tool_calls)",
        "return (m.role, m.name)",
        ("tests/context/test_memo.py::test_a_session_sends_the_same_with_its_memo_as_without",),
    ),
    Mutant(
        "salient lines: a text the line shortcuts cannot read (a lower case of another length, a line 'e' "
        "alone) is read by the plain pass",
        "a-text-the-shortcuts-cannot-read-the-plain",
        "if len(low) != len(text) or _E_ALONE.search(low):",
        "if len(low) != len(text):",
        ("tests/context/text/test_line_scan.py::test_a_line_that_is_e_alone_is_read_the_plain_way",),
    ),
    Mutant(
        "LaterUse: a search that found nothing answers only for starts at or after its own",
        "a-search-that-found-nothing-answers-only",
        "if pos < 0 and start >= began:",
        "if pos < 0:",
        (
            "tests/context/summary/test_later_use_index.py::"
            "test_an_earlier_search_that_found_nothing_does_not_answer_for_an_earlier_start",
        ),
    ),
    Mutant(
        "redundant: only a line whose rarest word no other line holds is compared with none",
        "a-line-whose-rarest-word-is-its-own-alone",
        "if often[w] > 1}",
        "if often[w] > 2}",
        (
            "tests/context/summary/test_redundant_index.py::test_redundant_marks_what_comparing_every_pair_marks",
        ),
    ),
    Mutant(
        "redaction: credential words looked up on the lower-cased text only where it finds the same",
        "keywords-on-lowered-text-only-where-positions",
        "if len(low) == len(text) and not any(c in text for c in _FOLDS_TO_ASCII):",
        "if True:",
        (
            "tests/context/privacy/test_redact_speed.py::test_each_faster_pattern_finds_what_the_first_one_finds",
            "tests/context/privacy/test_redact_speed.py::test_redaction_is_what_the_first_patterns_make",
        ),
    ),
    Mutant(
        "a workspace deleted or renamed mid-session is touched by no tool (redteam3)",
        "a-workspace-that-is-gone-is-not",
        "    if not base.is_dir():",
        "    if False:",
        (f"{W}::test_a_workspace_gone_mid_session_is_made_again_by_no_tool",),
    ),
    Mutant(
        "a loop of symbolic links is a one-line tool error (redteam3)",
        "a-loop-of-links-is-one-line",
        "    except RuntimeError as exc:",
        "    except ValueError as exc:",
        (f"{W}::test_any_kind_of_file_is_a_result_or_one_line_never_a_tool_bug",),
    ),
    Mutant(
        "grep skips files over its size limit, given or found (redteam3)",
        "grep-skips-files-over-its-size-limit",
        "if st.st_size > MAX_GREP_BYTES:",
        "if False:",
        (
            f"{W}::test_any_kind_of_file_is_a_result_or_one_line_never_a_tool_bug",
            f"{W}::test_grep_over_a_folder_skips_files_over_its_limit_and_says_so",
        ),
    ),
    Mutant(
        "a listed file name holds no line break (redteam3)",
        "listed-names-hold-no-line-break",
        "    return '\"' + ",
        "    return name\n    return '\"' + ",
        (f"{W}::test_a_listed_name_is_one_line_and_names_the_file",),
    ),
    Mutant(
        "grep finds a file whose name holds a line break (redteam3)",
        "grep-reads-names-holding-line-breaks",
        "if raw in cut:",
        "if False:",
        (f"{W}::test_a_listed_name_is_one_line_and_names_the_file",),
    ),
    Mutant(
        "a read-only command naming a FIFO or a device asks (redteam3)",
        "read-only-commands-open-no-fifo-or-device",
        "if name not in NAMES_ONLY and _special(full):",
        "if False:",
        (
            f"{W}::test_a_read_only_command_naming_a_fifo_or_socket_asks",
            f"{W}::test_cat_of_a_fifo_is_declined_not_waited_on_with_no_one_to_ask",
        ),
    ),
    Mutant(
        "a file read again after a compaction is bounded (redteam3)",
        "reread-reads-a-bounded-regular-file",
        'return read_regular(full, path, REREAD_MAX_BYTES).decode("utf-8", errors="replace")',
        'return full.read_text(encoding="utf-8", errors="replace") if full.is_file() else None',
        (f"{W}::test_a_file_read_again_after_a_compaction_is_bounded",),
    ),
    Mutant(
        "a command that ended is not waited on for what it left running (redteam3)",
        "a-command-that-ended-is-not-waited",
        "            if left <= OUTPUT_GRACE:",
        "            if True:",
        (f"{W}::test_a_command_that_ended_is_not_held_by_what_it_left_running",),
    ),
    Mutant(
        "what holds an ended command's output is stopped, its session too (redteam3)",
        "what-holds-an-ended-commands-output-is",
        "            held = _kill_holders(proc)",
        "            held = True",
        (f"{W}::test_a_command_that_ended_is_not_held_by_what_it_left_running",),
    ),
    Mutant(
        "an ended command's output read to its end is not looked for holders",
        "an-output-read-to-its-end-is-not-held",
        "if pipe is None or pipe.closed:",
        "if pipe is None:",
        (f"{W}::test_an_output_read_to_its_end_when_the_grace_runs_out_is_not_held",),
    ),
    Mutant(
        "history_search echoes a bounded query in a miss (redteam3)",
        "history-search-echoes-a-bounded-query",
        'shown = query if len(query) <= SHOWN_QUERY else query[:SHOWN_QUERY] + "…"',
        "shown = query",
        ("tests/store/test_history_hostile.py::test_the_tools_answer_to_any_query_is_bounded",),
    ),
    Mutant(
        "history_search ranks a hit's lines by a bounded set of the query's words (attacker5)",
        "history-search-ranks-by-a-bounded-set-of-words",
        "return set(list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:MAX_WORDS])",
        "return {w.lower() for w in _WORD.findall(query)}",
        (
            "tests/store/test_history_hostile.py::test_a_hits_lines_are_ranked_by_at_most_the_querys_first_words",
            "tests/store/test_history_hostile.py::test_words_past_the_bound_do_not_steer_which_lines_a_hit_shows",
        ),
    ),
    Mutant(
        "a vault:// message pointer's number is ASCII digits that fit SQLite (attacker5)",
        "a-message-pointers-number-fits-sqlite",
        'MESSAGE_REF = re.compile(r"^m([0-9]{1,18})\\Z")',
        'MESSAGE_REF = re.compile(r"^m(\\d+)$")',
        (
            "tests/app/test_vault_pointers_hostile.py::test_the_models_read_refuses_every_trick_in_one_line",
            "tests/app/test_vault_pointers_hostile.py::test_a_card_of_any_pointer_opens_an_entry_of_the_line_or_nothing",
            "tests/app/test_vault_pointers_hostile.py::test_a_card_with_a_huge_message_number_says_it_is_not_there",
        ),
    ),
    Mutant(
        "a vault card the store cannot read says so and is logged (attacker5)",
        "a-card-that-cannot-be-read-says-so",
        'log.exception("opening %s failed", uri[:200])',
        "raise",
        (
            "tests/app/test_vault_pointers_hostile.py::test_a_card_the_store_cannot_read_says_so_and_is_logged",
        ),
    ),
    Mutant(
        "history_search: an ancestor's outputs after the fork are not searched (attacker5)",
        "history-search-an-ancestors-later-outputs-are-not-searched",
        "cut = [(sid, at) for sid, at in (until or {}).items() if sid in ancestors]",
        "cut = []",
        (
            "tests/store/test_history_confined.py::test_a_sessions_search_finds_its_history_and_nothing_else",
            "tests/agent/tools/test_history.py::test_every_hit_of_a_fork_points_at_its_own_history_and_reads_back",
        ),
    ),
    Mutant(
        "history_search: outputs stored after the newest session was deleted are indexed (attacker5)",
        "history-search-a-deleted-sessions-rowids-are-not-skipped",
        "await history.rewind(conn)",
        "pass",
        ("tests/store/test_history_confined.py::test_a_sessions_search_finds_its_history_and_nothing_else",),
    ),
    Mutant(
        "--session: a prefix several ids start with says so in one line (attacker5)",
        "session-an-ambiguous-prefix-says-so",
        "if len(ids) < 2:",
        "if True:",
        ("tests/cli/test_session_prefix.py::test_an_ambiguous_prefix_is_one_line_naming_the_ids",),
    ),
    Mutant(
        "--session: a session resumed in another folder says so (attacker5)",
        "session-resumed-in-another-folder-says-so",
        "if not started_in or Path(started_in).resolve() == workspace.resolve():",
        "if True:",
        (
            "tests/cli/test_session_prefix.py::test_a_session_of_another_folder_says_so_before_it_goes_on",
            "tests/acp/test_editor_leftovers.py::test_loading_a_session_of_another_folder_tells_the_editor",
        ),
    ),
    Mutant(
        "/copy code: the next block is looked for after this one's closing fence (attacker5)",
        "copy-code-the-next-block-starts-after-this-ones-end",
        "i = end + 1",
        "i += 1",
        ("tests/app/test_copy_code_blocks.py::test_the_one_pass_scan_finds_the_blocks_the_pattern_finds",),
    ),
    Mutant(
        "history_search's answer is bounded in UTF-8 bytes, not characters (attacker5)",
        "history-search-answer-bounded-in-bytes",
        'cost = len(text.encode("utf-8", "replace"))',
        "cost = len(text)",
        (
            "tests/store/test_history_hostile.py::test_the_tools_answer_is_bounded_in_bytes_whatever_script_the_history_holds",
            "tests/agent/tools/test_history.py::test_every_hit_of_a_fork_points_at_its_own_history_and_reads_back",
        ),
    ),
    Mutant(
        "the clipboard gets the text as the screen shows it, in base64 alone (attacker5)",
        "clipboard-text-as-the-screen-shows-it",
        'payload = sanitize(text).encode("utf-8")',
        'payload = text.encode("utf-8", "surrogatepass")',
        (
            "tests/app/test_clipboard_hostile.py::test_the_clipboard_sequence_is_its_head_base64_and_bel_whatever_the_text",
        ),
    ),
    Mutant(
        "every copy in the app goes through the sanitized OSC 52 write (attacker5)",
        "every-copy-goes-through-osc52",
        "self._clipboard = sanitize(text)",
        "super().copy_to_clipboard(text)\n        return",
        (
            "tests/app/test_clipboard_hostile.py::test_slash_copy_of_a_hostile_answer_sends_the_terminal_only_base64",
        ),
    ),
    Mutant(
        "a command or pattern no program can receive is one line (redteam3)",
        "a-text-no-program-can-receive-is-one",
        '    if "\\x00" in text:',
        "    if False:",
        (
            f"{W}::test_any_command_text_runs_or_is_one_line_never_a_tool_bug",
            f"{W}::test_any_grep_pattern_is_searched_or_one_line_never_a_tool_bug",
        ),
    ),
    Mutant(
        "a command or pattern over the kernel's argument limit is one line (redteam3)",
        "a-text-over-the-kernels-limit-is-one",
        "    if size > MAX_ARGUMENT_BYTES:",
        "    if False:",
        (
            f"{W}::test_any_command_text_runs_or_is_one_line_never_a_tool_bug",
            f"{W}::test_any_grep_pattern_is_searched_or_one_line_never_a_tool_bug",
        ),
    ),
    Mutant(
        "a lone surrogate in a command is parsed (and asks), never raised (redteam3)",
        "a-lone-surrogate-in-a-command-asks",
        'command.encode("utf-8", "surrogatepass")',
        "command.encode()",
        (f"{W}::test_any_command_text_runs_or_is_one_line_never_a_tool_bug",),
    ),
    Mutant(
        "an edit never rewrites the bytes of a file that is not UTF-8 (redteam3)",
        "an-edit-never-rewrites-bytes-that-are",
        'return data.decode("utf-8")',
        'return data.decode("utf-8", errors="replace")',
        (f"{W}::test_an_edit_changes_only_what_it_replaces_or_nothing",),
    ),
    Mutant(
        "a read of many paths stops once its answer is full (redteam3)",
        "a-read-stops-once-its-answer-is-full",
        "if size > MAX_READ_CHARS or _image_bytes(images) > MAX_IMAGE_BYTES:",
        "if False:",
        (f"{W}::test_a_read_of_many_paths_stops_once_its_answer_is_full",),
    ),
    Mutant(
        "an edit cannot grow a file past what a file tool reads (redteam3)",
        "an-edit-cannot-grow-a-file-past-the",
        "        if grown > MAX_FILE_BYTES:",
        "        if False:",
        (f"{W}::test_an_edit_never_grows_a_file_past_what_a_file_tool_reads",),
    ),
    Mutant(
        "a tool call without a name but with arguments is answered (redteam3)",
        "a-call-without-a-name-is-answered",
        'if not c.name and c.arguments.strip() in ("", "{}"):',
        "if not c.name:",
        ("tests/flows/test_poisons.py::test_a_call_without_a_name_is_answered_and_the_turn_goes_on",),
    ),
    Mutant(
        "a read-only path through /proc asks (redteam3)",
        "read-only-paths-through-proc-ask",
        "        if _through_proc(workspace / a):",
        "        if False:",
        (
            f"{W}::test_a_path_through_proc_is_not_read_unasked",
            f"{W}::test_a_read_only_word_through_proc_asks",
        ),
    ),
    Mutant(
        "a write the disk refuses is one line, logged (redteam3)",
        "a-write-that-fails-is-one-line",
        '        log.warning("writing %s failed", full, exc_info=True)\n'
        '        raise ToolError(f"{full.name}: cannot write: {exc.strerror or exc}") from None',
        "        raise",
        (f"{W}::test_a_write_the_disk_refuses_is_one_line_and_logged",),
    ),
    Mutant(
        "tool processes go first when memory runs out (redteam3)",
        "tool-processes-go-first-when-memory-runs-out",
        'OOM_FIRST = "{{ echo 1000 >/proc/self/oom_score_adj; }} 2>/dev/null; "',
        'OOM_FIRST = ""',
        (f"{W}::test_a_tool_command_and_its_children_go_first_when_memory_runs_out",),
    ),
    Mutant(
        "limits: the command joins its pid cgroup",
        "limits-the-command-joins-its-pid-cgroup",
        "            f.write(str(os.getpid()))\n",
        "            pass\n",
        ("tests/agent/test_limits.py::test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing",),
    ),
    Mutant(
        "limits: the rlimits are set before exec",
        "limits-rlimits-are-set-before-exec",
        "        resource.setrlimit(which, (amount, amount))\n",
        "        pass\n",
        (
            "tests/agent/test_limits.py::test_a_write_stops_at_the_file_size_limit",
            "tests/agent/test_limits.py::test_a_process_that_allocates_without_end_is_stopped_in_itself",
        ),
    ),
    Mutant(
        "limits: a pid cgroup for each command",
        "limits-a-pid-cgroup-for-each-command",
        "    cgroup = make_pid_cgroup(confine.limits.processes) if confine.limits is not None else None\n",
        "    cgroup = None\n",
        ("tests/agent/test_limits.py::test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing",),
    ),
    Mutant(
        "limits: what a command leaves running is stopped when it ends",
        "limits-what-a-command-leaves-is-stopped",
        "            run.left_stopped = await cgroup.kill()\n",
        "            run.left_stopped = 0\n",
        ("tests/agent/test_limits.py::test_a_setsid_spinner_left_by_an_ended_command_is_stopped",),
    ),
    Mutant(
        "limits: they hold for unconfined commands too",
        "limits-hold-for-unconfined-commands-too",
        "        return Plan(Confinement(UNCONFINED, ctx.workspace.resolve(), limits=ctx.limits), env)\n",
        "        return Plan(None, env)\n",
        (
            "tests/agent/test_limits.py::test_the_model_is_told_which_limit_stopped_the_command_and_how_to_raise_it",
        ),
    ),
    Mutant(
        "limits: the settings reach the shell tool",
        "limits-the-settings-reach-the-shell",
        "        limits=Limits.of(",
        "        limits=None and Limits.of(",
        (
            "tests/agent/test_limits.py::test_myrm_ask_applies_the_configured_limits_and_survives_a_runaway_command",
            "tests/app/test_limits_tui.py::test_a_fork_bomb_and_a_memory_hog_leave_the_screen_responsive",
        ),
    ),
    Mutant(
        "limits: the model reads which limit stopped a command",
        "limits-say-which-limit-was-reached",
        "    if processes_hit or (limits.processes and failed and refused):\n",
        "    if False:\n",
        ("tests/agent/test_limits.py::test_the_process_limit_is_named_to_the_model",),
    ),
    Mutant(
        "limits: a command that succeeded gets no note from its text (review5)",
        "limits-no-note-for-a-command-that-succeeded",
        "    failed = code != 0\n",
        "    failed = True\n",
        (
            "tests/agent/test_limits.py::test_a_command_that_only_shows_a_limits_message_gets_no_note",
            "tests/agent/test_limits.py::test_a_command_that_succeeded_gets_no_note_from_its_text",
        ),
    ),
    Mutant(
        "limits: a background job has its pid cgroup",
        "limits-a-background-job-has-its-pid-cgroup",
        "            cgroup = make_pid_cgroup(limits.processes) if limits is not None else None\n",
        "            cgroup = None\n",
        ("tests/agent/test_limits.py::test_a_background_job_has_the_same_limits",),
    ),
    Mutant(
        "sandbox: the command gets SIGPIPE and SIGXFSZ back (Python ignores them)",
        "sandbox-the-command-gets-default-signals",
        "    for sig in (_signal.SIGPIPE, _signal.SIGXFSZ):\n",
        "    for sig in ():\n",
        (
            "tests/agent/test_limits.py::test_a_command_gets_the_default_sigpipe_not_pythons",
            "tests/agent/test_limits.py::test_a_write_stops_at_the_file_size_limit",
        ),
    ),
    Mutant(
        "sandbox: an unasked command finds no program of the workspace by PATH",
        "sandbox-no-workspace-program-by-path",
        "        env.update(read_only_path(ctx.workspace))\n",
        "        pass\n",
        (
            "tests/agent/test_sandbox_attacker.py::test_an_unasked_command_runs_no_program_the_workspace_holds_by_its_path",
        ),
    ),
    Mutant(
        "sandbox: no temp folder but its own (read-only)",
        "sandbox-no-temp-folder-but-its-own",
        "            *TEMP_FOLDERS,\n            tempfile.gettempdir(),\n",
        "",
        ("tests/agent/test_sandbox_attacker.py::test_read_only_reads_no_temp_file_but_its_own",),
    ),
    Mutant(
        "sandbox: nothing only root reads in /etc (read-only, as root)",
        "sandbox-what-only-root-reads-in-etc",
        "        if not mode & 0o004:\n",
        "        if False:\n",
        (
            "tests/agent/test_sandbox_attacker.py::test_read_only_as_root_reads_nothing_in_etc_that_only_root_may",
        ),
    ),
    Mutant(
        "limits: RLIMIT_NPROC counts over the uid's tasks",
        "limits-nproc-counts-over-the-uids-tasks",
        "            amount += _tasks_of(os.getuid())\n",
        "            amount += 0\n",
        (
            "tests/agent/test_limits.py::test_without_a_pid_cgroup_the_limit_counts_over_what_the_uid_already_runs",
        ),
    ),
    Mutant(
        "limits: the watcher empties and removes the pid cgroups of a killed myrm",
        "the-watcher-empties-and-removes-pid-cgroups",
        "            _end_cgroup_dir(d)\n",
        "            pass\n",
        (
            "tests/agent/tools/test_tool_hardening.py::test_kill_9_of_myrm_ends_its_tool_processes_and_job_logs",
        ),
    ),
    Mutant(
        "a tool call repeated repeat_limit times in a row is asked about before it runs",
        "a-repeated-call-is-asked-about-before-it-runs",
        'go = await self._go_on(again) if (again := self.repeats.repeated(calls)) else "yes"',
        'go, again = "yes", ()',
        (
            f"{RG}::test_with_no_one_to_ask_the_model_is_told_at_the_third_and_stopped_at_the_fourth",
            f"{RG}::test_the_user_is_asked_and_yes_covers_the_run_it_answered",
            f"{RG}::test_ask_ends_a_loop_with_one_line_and_no_false_hint",
            f"{RG}::test_generated_call_sequences_through_the_agent_stop_exactly_at_the_third_identical_call",
            "tests/app/test_repeat_question.py::test_the_dialog_asks_about_a_repeated_call_and_n_stops_the_turn",
        ),
    ),
    Mutant(
        "the approval dialog words a repeated call's question (go on / always / stop)",
        "approval-a-repeated-call-gets-its-own-question",
        "if self.tool == REPEAT_TOOL:",
        "if False:",
        (
            "tests/app/test_repeat_question.py::test_the_dialog_asks_about_a_repeated_call_and_n_stops_the_turn",
        ),
    ),
    Mutant(
        "an editor is asked about a repeated call in its own words (ACP)",
        "acp-a-repeated-call-gets-its-own-question",
        "if tool == REPEAT_TOOL:",
        "if False:",
        (
            "tests/acp/test_repeat_question.py::"
            "test_the_editor_is_asked_about_a_repeated_call_and_its_no_ends_the_turn",
        ),
    ),
    Mutant(
        "the repeat guard counts identical calls up to its limit",
        "repeat-guard-asks-at-the-limit",
        "asked = count >= self.limit and (sig not in found or count > found[sig].count)",
        "asked = False",
        (
            f"{RG}::test_the_guard_asks_exactly_at_the_limitth_identical_call_with_identical_results",
            f"{RG}::test_with_no_one_to_ask_the_model_is_told_at_the_third_and_stopped_at_the_fourth",
        ),
    ),
    Mutant(
        "the repeat guard counts a call as a repeat only when its result did not change",
        "repeat-guard-same-result-only",
        "if sig == self._last and result == self._result:",
        "if sig == self._last:",
        (
            f"{RG}::test_a_poll_whose_result_changes_is_not_a_loop",
            f"{RG}::test_the_guard_asks_exactly_at_the_limitth_identical_call_with_identical_results",
        ),
    ),
    Mutant(
        "a yes to a repeated call covers the run it answered (it asked again two calls later, round 21)",
        "repeat-guard-yes-covers-the-run-it-answered",
        "if asked and sig not in self._approved:",
        "if asked:",
        (
            f"{RG}::test_the_user_is_asked_and_yes_covers_the_run_it_answered",
            f"{RG}::test_one_question_covers_identical_calls_in_one_reply",
            f"{RG}::test_the_guard_asks_exactly_at_the_limitth_identical_call_with_identical_results",
            "tests/app/test_repeat_question.py::test_the_dialog_asks_about_a_repeated_call_and_n_stops_the_turn",
        ),
    ),
    Mutant(
        "another call ends the run a yes covered: a new run of repeats is asked about",
        "repeat-guard-another-call-ends-the-approved-run",
        "        if sig != self._ran:  # another call",
        "        if False:  # another call",
        (
            f"{RG}::test_the_user_is_asked_and_yes_covers_the_run_it_answered",
            f"{RG}::test_the_guard_asks_exactly_at_the_limitth_identical_call_with_identical_results",
            "tests/app/test_repeat_question.py::test_the_dialog_asks_about_a_repeated_call_and_n_stops_the_turn",
        ),
    ),
    Mutant(
        "a session's always answers outlive the agent rebuilt after a settings change (round 21)",
        "a-session-keeps-its-grants-across-rebuilds",
        "agent = await self.sessions._build(self.id, settings, jobs, self.grants)",
        "agent = await self.sessions._build(self.id, settings, jobs)",
        (
            f"{RG}::test_always_outlives_the_agent_rebuilt_after_a_settings_change",
            "tests/app/test_repeat_question.py::test_always_is_kept_when_a_settings_change_rebuilds_the_agent",
            f"{AO}::test_a_call_is_asked_iff_no_earlier_answer_covers_it_across_turns_and_rebuilds",
        ),
    ),
    Mutant(
        "a rebuilt agent's command rules start from the session's always answers (round 21)",
        "an-always-outlives-the-agent-rebuilt-after-a-settings-change",
        "else CommandRules(settings.allowed_commands, grants.commands, grants.writes)",
        "else CommandRules(settings.allowed_commands)",
        (
            f"{RG}::test_always_outlives_the_agent_rebuilt_after_a_settings_change",
            f"{AO}::test_a_call_is_asked_iff_no_earlier_answer_covers_it_across_turns_and_rebuilds",
        ),
    ),
    Mutant(
        "the repeat dialog's a key answers always (it did nothing, round 21)",
        "approval-a-repeated-calls-always-key-answers",
        "return self.is_edit or self.tool == REPEAT_TOOL or bool(self.assessment.to_remember)",
        "return self.is_edit or bool(self.assessment.to_remember)",
        ("tests/app/test_repeat_question.py::test_always_is_kept_when_a_settings_change_rebuilds_the_agent",),
    ),
    Mutant(
        "NO_COLOR: the full screen writes no colour, not Textual's greys (round 21)",
        "no-color-writes-no-colour",
        "if self.no_color:",
        "if False:",
        (
            "tests/app/test_colour_and_locale.py::test_no_color_writes_no_colour_and_the_highlight_is_reverse_video",
        ),
    ),
    Mutant(
        "an ASCII locale (LANG=C, LC_ALL=C) is said in one line (round 21)",
        "an-ascii-locale-is-said-in-one-line",
        "if note := ascii_locale_note(os.environ):",
        "if note := None:",
        ("tests/app/test_colour_and_locale.py::test_an_ascii_locale_is_said_in_one_line",),
    ),
    Mutant(
        "the repeat guard takes a read of a job that still runs as a wait, not a repeat (review5)",
        "repeat-guard-a-running-job-is-waited-on",
        "if result is None:",
        "if False:",
        (f"{RG}::test_polling_a_background_job_that_still_runs_is_waiting_not_a_loop",),
    ),
    Mutant(
        "a cut call with an invalid name is answered once, as cut (review5)",
        "a-cut-call-is-answered-once",
        "                if call == cut:  # answered as cut above",
        "                if False:  # answered as cut above",
        ("tests/flows/test_output_limit.py::test_a_cut_call_with_an_invalid_name_gets_one_result",),
    ),
    Mutant(
        "with no one to ask, a model in a loop is told once before the turn stops",
        "with-no-one-to-ask-a-loop-is-told-once",
        "if go == UNATTENDED and not self.repeats.warned:",
        "if False:",
        (
            f"{RG}::test_with_no_one_to_ask_the_model_is_told_at_the_third_and_stopped_at_the_fourth",
            f"{RG}::test_with_no_one_to_ask_a_model_told_of_its_loop_may_check_another_way",
            f"{RG}::test_ask_ends_a_loop_with_one_line_and_no_false_hint",
        ),
    ),
    Mutant(
        "ask: a turn stopped as a loop exits 1 and its result says error (review5)",
        "ask-a-turn-stopped-as-a-loop-is-not-a-success",
        "if isinstance(ev, TurnDone) and ev.looped:",
        "if False:",
        (
            f"{RG}::test_ask_ends_a_loop_with_one_line_and_no_false_hint",
            f"{RG}::test_ask_stream_json_reports_a_loop_stopped_turn_as_an_error",
        ),
    ),
    Mutant(
        "a tool call cut by the reply's output limit is answered as cut, not run (model4)",
        "a-call-cut-by-the-output-limit-is-not-run",
        'if finish != "length" or not calls:',
        "if True:",
        (
            f"{OL}::test_a_call_cut_by_the_output_limit_is_answered_as_cut_and_the_user_told",
            f"{OL}::test_every_cut_of_a_calls_arguments_is_caught_and_the_whole_call_is_not",
        ),
    ),
    Mutant(
        "a reply cut by its output limit says so (model4)",
        "a-reply-cut-by-the-output-limit-says-so",
        'if partial.finish == "length":',
        "if False:",
        (
            f"{OL}::test_an_answer_cut_by_the_output_limit_says_so",
            f"{OL}::test_a_call_cut_by_the_output_limit_is_answered_as_cut_and_the_user_told",
        ),
    ),
    Mutant(
        "a turn reads what its request left to read while the model answers (p99e)",
        "a-turn-reads-the-requests-messages-while",
        "settling = self._settling = asyncio.create_task(session.settle_reads())",
        "settling = asyncio.create_task(asyncio.sleep(0))",
        ("tests/agent/test_agent.py::test_a_turn_reads_each_requests_new_messages_while_the_model_answers",),
    ),
    Mutant(
        "the turn's settle task reads the request's messages, not only exists (review6)",
        "the-turns-settle-task-reads-what-was-left",
        "session.settle_reads()",
        "asyncio.sleep(0)",
        ("tests/agent/test_agent.py::test_a_turn_reads_each_requests_new_messages_while_the_model_answers",),
    ),
    Mutant(
        "a request that reads later leaves its reads of its new messages for settle (p99e)",
        "a-request-that-reads-later-leaves-its",
        "if req.reads_later:",
        "if False:",
        ("tests/context/test_memo.py::test_a_request_that_reads_later_leaves_its_reads_for_settle",),
    ),
    Mutant(
        "the base's JSON made after sending is used only for the very messages it was made of (p99f)",
        "the-base-json-is-of-these-very-messages",
        "if made is not None and len(made[0]) == len(base) and all(map(operator.is_, made[0], base)):",
        "if made is not None:",
        ("tests/context/test_memo.py::test_the_json_made_ahead_is_what_json_dumps_writes",),
    ),
    Mutant(
        "a session far from its compaction point writes nothing ahead for one (p99f)",
        "the-fold-is-written-ahead-only-near-the-point",
        "if req.state.last_sent_tokens >= budget * PREPARE_FROM:",
        "if True:",
        (
            "tests/context/test_memo.py::"
            "test_a_compaction_near_its_point_finds_what_it_writes_made_after_sending",
        ),
    ),
    Mutant(
        "a view over the bounds of what is made ahead makes its first messages once, not all on each request",
        "a-pass-made-ahead-stops-at-half-the-bounds",
        "if entries >= JSON_MADE_ENTRIES // 2 or chars >= JSON_MADE_CHARS // 2:",
        "if False:",
        (
            "tests/context/test_memo.py::"
            "test_a_view_over_the_bounds_of_what_is_made_ahead_makes_its_first_messages_once",
        ),
    ),
    Mutant(
        "what is made ahead goes least recently asked first past the bounds (an ended session's first)",
        "what-is-made-ahead-and-asked-again-goes-last",
        "_JSON_MADE[id(m)] = _JSON_MADE.pop(id(m))",
        "pass",
        ("tests/context/test_memo.py::test_what_is_made_ahead_goes_least_recently_asked_first",),
    ),
    Mutant(
        "a request reading what the requests before it left unread writes nothing ahead on its own path",
        "a-request-reading-what-was-left-writes-nothing-ahead",
        "self.settle(ahead=False)",
        "self.settle()",
        ("tests/context/test_memo.py::test_a_request_that_reads_what_was_left_writes_nothing_ahead",),
    ),
    Mutant(
        "the messages a compaction near its point may fold are written after sending (p99f)",
        "the-messages-a-compaction-may-fold-written-ahead",
        "prepare_fold(view, len(req.protected_head))",
        "pass",
        (
            "tests/context/test_memo.py::"
            "test_a_compaction_near_its_point_finds_what_it_writes_made_after_sending",
        ),
    ),
    Mutant(
        "/undo: a file changed since the agent wrote it is named, and left as it is unless the user says so",
        "undo-changed-since-the-agent-wrote",
        "changed = sha(now) != last[path].after_sha",
        "changed = False",
        (
            "tests/agent/test_undo.py::test_a_file_changed_since_is_named_and_left_unless_the_user_says_so",
            "tests/agent/test_undo.py::test_a_file_deleted_since_is_restored",
            "tests/agent/test_undo.py::test_each_undo_restores_its_turns_files_or_names_them",
        ),
    ),
    Mutant(
        "a fork made at an earlier point (/fork N) reads none of its parent's later turns' outputs",
        "a-fork-at-an-earlier-point-is-cut-there",
        "at = math.nextafter(float(row[0]), -math.inf)",
        "pass",
        (
            "tests/agent/tools/test_history.py::test_every_hit_of_a_fork_points_at_its_own_history_and_reads_back",
        ),
    ),
    Mutant(
        "/undo: a fork sees its parent's turns up to the fork, not those the parent made after it",
        "undo-a-fork-sees-its-parents-turns-up-to-the-fork",
        "if link.forked_from_seq is not None:",
        "if False:",
        ("tests/agent/test_undo.py::test_each_undo_restores_its_turns_files_or_names_them",),
    ),
    Mutant(
        "/undo: an edit keeps the file's content before writing it",
        "an-edit-keeps-the-content-undo-restores",
        "await _kept(ctx, full, path, text, updated)",
        "pass",
        ("tests/agent/test_undo.py::test_undo_goes_back_one_turn_at_a_time_and_tells_the_model",),
    ),
    Mutant(
        "approvals: a reply's questions come in its calls' order",
        "a-replys-questions-come-in-call-order",
        "for earlier in self._ids[: self._ids.index(call_id)] if call_id in self._past else ():",
        "for earlier in ():",
        (
            f"{AO}::test_yes_to_the_first_still_asks_about_the_second_in_order",
            f"{AO}::test_a_replys_questions_come_in_call_order_and_none_that_an_always_covers",
            f"{AO}::test_a_call_is_asked_iff_no_earlier_answer_covers_it_across_turns_and_rebuilds",
        ),
    ),
    Mutant(
        "approvals: an edit's grant is checked again once its turn to ask comes",
        "an-always-answers-the-edits-still-waiting",
        "if ctx.allowed_commands.edits_allowed():",
        "if False:",
        (
            f"{AO}::test_an_edit_then_a_create_are_asked_in_that_order_and_always_answers_both",
            "tests/app/test_approval_order_tui.py::test_always_on_the_first_edit_leaves_no_second_dialog",
        ),
    ),
    Mutant(
        "approvals: a command's rules are checked again once its turn to ask comes",
        "an-always-answers-the-commands-still-waiting",
        "if now.allowed and not missing:",
        "if False:",
        (f"{AO}::test_always_for_a_command_answers_the_same_command_still_waiting",),
    ),
    Mutant(
        "approvals: a command that runs unasked lets the later calls ask while it runs",
        "an-unasked-command-does-not-hold-back-later-questions",
        "ctx.done_asking()",
        "pass",
        (f"{AO}::test_a_command_that_runs_unasked_does_not_hold_back_a_later_calls_question",),
    ),
    Mutant(
        "approvals: an always for repeats answers the repeat questions still waiting",
        "an-always-for-repeats-answers-the-questions-still-waiting",
        "if tool == REPEAT_TOOL and grants is not None and grants.repeats:",
        "if False:",
        (f"{AO}::test_always_for_repeats_answers_a_repeat_question_still_waiting",),
    ),
    Mutant(
        "/undo: a session's backups over undo_backups_mb drop the oldest turns' (leftovers7)",
        "undo-backups-over-the-cap-drop-the-oldest-turns",
        "while total > max_bytes and dropped < len(turns):",
        "while False:",
        (
            f"{UNDO}::test_the_setting_caps_a_sessions_backups_and_undo_names_a_dropped_turns_files",
            f"{UNDO}::test_over_the_cap_only_the_oldest_turns_are_dropped_and_every_kept_turn_undoes_exactly",
        ),
    ),
    Mutant(
        "MCP: a slow server does not hold the first prompt; it joins when it is up (leftovers7)",
        "mcp-a-slow-server-does-not-hold-the-first-prompt",
        "0.0 if mcp_late else STARTUP_TIMEOUT,",
        "STARTUP_TIMEOUT,",
        (
            "tests/app/test_mcp_late.py::test_a_slow_mcp_server_does_not_hold_the_first_turn_and_joins_when_it_is_up",
            "tests/acp/test_editor_leftovers.py::test_a_slow_mcp_server_does_not_hold_the_first_prompt_and_joins_the_next",
        ),
    ),
    Mutant(
        "a session's agent: one build at a time, a second ready() waits for it (leftovers7)",
        "one-agent-build-at-a-time",
        "async with self._building:",
        "if True:",
        ("tests/agent/test_hot_rebuild.py::test_two_readies_at_once_build_one_agent",),
    ),
)


def run(mutant: Mutant, tree: Path) -> tuple[str, float]:
    """'killed' when the tests fail, 'SURVIVED' when they pass, 'STALE' when the marker, its snippet or a
    test is gone, 'HUNG' when pytest does not exit (a failing test that hangs is a defect of its own)."""
    try:
        site = locate(mutant, tree)
        tests = [find_test(t, tree) for t in mutant.tests]
    except Stale as exc:
        print(exc, flush=True)
        return "STALE", 0.0
    original = site.path.read_text(encoding="utf-8")
    site.path.write_text(original[: site.start] + mutant.new + original[site.end :], encoding="utf-8")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-x",
                "-p",
                "no:cacheprovider",
                "--timeout",
                "120",
                *tests,
            ],
            cwd=tree,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        return "HUNG", time.perf_counter() - t0
    finally:
        site.path.write_text(original, encoding="utf-8")
    return ("killed" if proc.returncode not in (0, 5) else "SURVIVED"), time.perf_counter() - t0


def main(names: list[str]) -> int:
    chosen = [m for m in MUTANTS if not names or any(n.lower() in m.name.lower() for n in names)]
    if not chosen:  # no test ids would have run pytest on the whole suite (done twice by mistake)
        print(f"no protection's name holds any of {names!r} (a name, not a marker id)")
        return 2
    with tempfile.TemporaryDirectory(prefix="myrm-protections-") as tmp:
        tree = Path(tmp) / "main"
        tree.mkdir()
        for part in ("myrm_tui", "tests", "prompts", "bench"):
            shutil.copytree(
                ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__", "__snapshots__")
            )
        shutil.copy(ROOT / "pyproject.toml", tree)
        # Sanity: unmutated, the chosen tests pass (else a "killed" would prove nothing).
        try:
            wanted = sorted({find_test(t, tree) for m in chosen for t in m.tests})
        except Stale as exc:
            print(exc)
            return 2
        base = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *wanted],
            cwd=tree,
            capture_output=True,
            text=True,
        )
        if base.returncode != 0:
            print(base.stdout[-3000:])
            print("the unmutated tests fail: fix them first")
            return 2
        bad = 0
        for m in chosen:
            verdict, secs = run(m, tree)
            bad += verdict != "killed"
            print(f"{verdict:9} {secs:5.1f} s  {m.name}", flush=True)
    print(f"{len(chosen) - bad} of {len(chosen)} protections are guarded by a failing test when removed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
