"""`myrm sessions` prints one session a line, its id first (scripts take the first column), whatever a
title holds: a model's, an imported file's or a typed one may carry line breaks, tabs, controls or
10,000 characters (found: a title "x\\nfake000000  ..." printed a row of its own, a fake id first)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.store.db import Store
from tests.helpers import cli_env, run_myrm

_TITLE = st.text(
    st.sampled_from(["a", " ", "\n", "\r", "\t", "\x1b", "\u202e", "\u2028", "\x85", "\u200b", "é"]),
    max_size=40,
) | st.builds(lambda n: "x" * n, st.integers(70, 10_000))


async def _sessions(db: Path, titles: list[str]) -> list[str]:
    store = await Store.open(db)
    try:
        ids = []
        for t in titles:
            row = await store.create_session(title="t", model="openai/gpt-4o-mini", workspace=str(db.parent))
            await store.rename_session(row.id, t)
            ids.append(row.id)
        return ids
    finally:
        await store.close()


_TITLES = st.lists(_TITLE, min_size=1, max_size=3)


# make test runs the named title and a fixed 15 lists (each a store and a `myrm sessions`); the long twin 40.
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(titles=_TITLES)
@example(titles=["line1\nfake000000  2026-12-07 14:22    99 msgs  x  line2"])
def test_one_session_a_line_whatever_its_title(
    tmp_path_factory: pytest.TempPathFactory, titles: list[str]
) -> None:
    one_session_a_line(tmp_path_factory, titles)


@pytest.mark.long
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(titles=_TITLES)
def test_long_one_session_a_line_whatever_its_title(
    tmp_path_factory: pytest.TempPathFactory, titles: list[str]
) -> None:
    """The same property over 40 lists of titles (``make test-long``)."""
    one_session_a_line(tmp_path_factory, titles)


def one_session_a_line(tmp_path_factory: pytest.TempPathFactory, titles: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("t")
    ids = asyncio.run(_sessions(tmp / "cli.db", titles))
    done = run_myrm(["sessions"], env=cli_env(tmp))
    assert done.returncode == 0, done.stderr
    rows = done.stdout.split("\n")
    assert rows[-1] == ""
    assert sorted(r.split(" ", 1)[0] for r in rows[:-1]) == sorted(ids)
    assert all(len(r) < 200 for r in rows)
