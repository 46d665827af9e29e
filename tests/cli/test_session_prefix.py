"""``--session ID``: a prefix several ids start with is refused in one line that says so (it said 'no
session'), and a session resumed in another folder than its own says so before it goes on (attacker5)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import cli_env, emulator_args, run_myrm


def _sessions(db: Path, rows: list[tuple[str, str]]) -> None:
    """Sessions of these (id, workspace) in a fresh database, as myrm makes them."""
    import asyncio

    from myrm_tui.store.db import Store

    async def make() -> None:
        store = await Store.open(db)
        await store.close()

    asyncio.run(make())
    conn = sqlite3.connect(db)
    with conn:
        conn.executemany(
            "INSERT INTO sessions (id, title, model, workspace, created_at, updated_at) VALUES (?,?,?,?,1,1)",
            [(sid, "t", "", ws) for sid, ws in rows],
        )
    conn.close()


def test_an_ambiguous_prefix_is_one_line_naming_the_ids(tmp_path: Path) -> None:
    _sessions(tmp_path / "cli.db", [("abc111111111", ""), ("abc222222222", ""), ("fff000000000", "")])
    env = cli_env(tmp_path)
    want = "myrm: --session: 'abc' starts 2 sessions' ids ("
    for args in (["--session", "abc"], ["ask", "hi", "--session", "abc"]):
        proc = run_myrm(args, env=env, stdin="")
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(want), proc.stderr
        assert "abc111111111" in lines[0] and "abc222222222" in lines[0] and "fff" not in lines[0]
    proc = run_myrm(["ask", "hi", "--session", "zzz"], env=env, stdin="")
    assert proc.returncode == 2 and proc.stderr.strip() == "myrm: no session 'zzz'"


def test_a_session_of_another_folder_says_so_before_it_goes_on(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    _sessions(tmp_path / "cli.db", [("abc111111111", str(other)), ("fff000000000", str(workspace))])
    emulator.default = lambda body: Reply(text="ok")
    env = cli_env(tmp_path)
    proc = run_myrm(["ask", "go on", "--session", "abc1", *emulator_args(emulator, workspace)], env=env)
    assert proc.returncode == 0, proc.stderr
    assert (
        f"myrm: warning: session abc111111111 was started in {other}; it continues here, on the files of "
        f"{workspace}"
    ) in proc.stderr.splitlines()
    proc = run_myrm(["ask", "go on", "--session", "fff", *emulator_args(emulator, workspace)], env=env)
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    # the full screen says it before it opens (here it then stops: no terminal)
    proc = run_myrm(["--session", "abc", "--workspace", str(workspace)], env=env, stdin="")
    assert f"myrm: warning: session abc111111111 was started in {other};" in proc.stderr
