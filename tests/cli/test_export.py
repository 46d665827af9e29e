"""``myrm sessions --export ID [--json]``: the session with every compaction record and its vault://
pointers, redacted like the summary — run as a script runs it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from myrm_tui.context.compaction.record import compactions_of
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.cli.test_cli import _myrm_process as _myrm
from tests.helpers import collect, make_agent, openai_settings

SECRET = "AKIAIOSFODNN7EXAMPLE"


async def _session_with_a_compaction(emulator: ProviderEmulator, tmp: Path, workspace: Path) -> str:
    store = await Store.open(tmp / "cli.db")
    try:
        # 16K, auto-compaction off: only the compaction below folds the prose answers.
        settings = openai_settings(emulator, preheat=False, context_window=16_000, auto_compact=False)
        agent = await make_agent(store, workspace, settings)
        for i in range(5):
            emulator.enqueue(
                Reply(tool_calls=[("bash", {"command": f"seq 1 {150 + i}"})]),
                Reply(text=f"Counted {i}. " + " ".join(f"finding{i}x{k} holds" for k in range(150))),
            )
            await collect(agent, f"count {i}; the deploy key is {SECRET}")
        report = await agent.compact_now("seq counts")
        assert report.metrics.compaction is not None and report.metrics.compaction.changed
        await agent.close()
        return agent.session_id
    finally:
        await store.close()


async def test_export_writes_markdown_and_json_with_every_compaction_and_its_pointers(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    sid = await _session_with_a_compaction(emulator, tmp_path, workspace)
    store = await Store.open(tmp_path / "cli.db")
    try:
        records = compactions_of(await store.metrics(sid))
    finally:
        await store.close()
    assert records and records[-1].trigger == "manual" and records[-1].focus == "seq counts"

    md = _myrm(["sessions", "--export", sid], tmp_path)
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith("# ") and "## user" in md.stdout
    assert md.stdout.count("### ⟲ Compaction: manual: seq counts") == len(
        [r for r in records if r.trigger == "manual"]
    )
    for item in records[-1].left:
        assert f"`{item.uri} lines {item.line_range}`" in md.stdout
    assert SECRET not in md.stdout and "[REDACTED" in md.stdout

    js = _myrm(["sessions", "--export", sid, "--json"], tmp_path)
    assert js.returncode == 0, js.stderr
    data = json.loads(js.stdout)
    assert data["session"]["id"] == sid
    assert [c["trigger"] for c in data["compactions"]] == [r.trigger for r in records]
    left = data["compactions"][-1]["left"]
    assert left and all(re.fullmatch(r"vault://\S+", i["uri"]) and ":" in i["line_range"] for i in left)
    assert SECRET not in js.stdout


def test_export_of_an_unknown_session_is_one_line(tmp_path: Path) -> None:
    out = _myrm(["sessions", "--export", "nope"], tmp_path)
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0
    assert "no session 'nope'" in out.stderr and "Traceback" not in out.stderr
    bad = _myrm(["sessions", "--json"], tmp_path)
    assert bad.returncode == 2 and "--json goes with --export" in bad.stderr


async def test_sessions_fork_starts_compacted_and_fits_the_embedded_models_window(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.llm.local import N_CTX

    sid = await _session_with_a_compaction(emulator, tmp_path, workspace)
    # No model set: the embedded one (its small window), with its extractive summaries; nothing is sent.
    out = _myrm(["sessions", "--fork", sid], tmp_path, env_extra={"MYRM_MODEL": ""})
    assert out.returncode == 0, out.stderr
    m = re.search(r"forked \w+ -> (\w+): it starts compacted \(fork · ([\d.]+)K → ([\d.]+)K", out.stdout)
    assert m, out.stdout
    fork = m.group(1)
    store = await Store.open(tmp_path / "cli.db")
    try:
        records = compactions_of(await store.metrics(fork))
        row = await store.get_session(fork)
    finally:
        await store.close()
    assert row is not None and row.parent_id == sid
    assert records and records[-1].trigger == "fork" and records[-1].tokens_after <= N_CTX
