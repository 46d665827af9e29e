"""The collector policy is on wherever myrm runs: the thresholds from ``cli.main``, the freeze after the
litellm import (half the TUI tests' time, and a third of a long session's start, went to collections)."""

from __future__ import annotations

import gc

import pytest

from myrm_tui import gc_policy


def test_myrm_sets_the_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    from myrm_tui import cli

    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    monkeypatch.setattr("sys.argv", ["myrm", "--help"])
    try:
        with pytest.raises(SystemExit):
            cli.main()
        assert gc.get_threshold() == (gc_policy.GEN0, gc_policy.GEN1, gc_policy.GEN2)
    finally:
        gc.set_threshold(*before)


def test_the_litellm_import_is_frozen_out_of_collections() -> None:
    from myrm_tui.llm import client

    gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        client._load_litellm()
        assert gc.get_freeze_count() > 100_000  # the import's objects: modules, classes, tables
    finally:
        gc_policy.settle()
