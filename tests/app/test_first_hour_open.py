"""What a new user met in the parts of the first hour tried last (firsthour5): a huge repository's ``@``
completion, a terminal only a few rows high. Real keys, the provider emulator."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.widgets import Header

from myrm_tui.app import mentions
from myrm_tui.app.flows.panels import CODE_BLOCK
from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.app.widgets.mention_menu import MentionMenu
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, make_app, send_turn, started, type_text, wait_until


def _menu(menu: MentionMenu) -> list[str]:
    return [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]


async def test_at_completion_offers_a_file_past_the_index_cut_once_its_folder_is_typed(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in a generated repository of 100,000 files: the ``@`` index stops at ``MAX_FILES`` (20,000),
    and ``@pkg499/sub2/mod5`` opened no menu at all, the file past the cut never offered. The cut is made
    small here (what matters is being past it, not the count)."""
    monkeypatch.setattr(mentions, "MAX_FILES", 30)
    (workspace / "a").mkdir()
    for i in range(40):  # the walk takes "a" first: the index is full before "z"
        (workspace / "a" / f"f{i:02d}.txt").write_text("x")
    (workspace / "z" / "deep").mkdir(parents=True)
    (workspace / "z" / "deep" / "target.py").write_text("found = True\n")
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=SMALL_SCREEN) as pilot:
        menu = app.query_one(MentionMenu)
        await type_text(pilot, "see @z/deep/tar")
        await wait_until(pilot, lambda: menu.is_open)
        assert _menu(menu) == ["z/deep/target.py"]
        await pilot.press("tab")
        assert app.query_one(PromptInput).text == "see @z/deep/target.py "


async def test_a_huge_folder_on_a_slow_mount_is_read_off_the_ui_thread_while_typing_goes_on(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typed folder past the index's cut was read on the UI thread at every key: a folder of 100,000
    files on a network mount held every key typed after it for as long as the mount took. Here the mount
    answers only once the keys typed after the folder's name are in the box (all of them, in order); then
    its files are offered."""
    monkeypatch.setattr(mentions, "MAX_FILES", 30)
    (workspace / "a").mkdir()
    for i in range(40):  # the walk takes "a" first: the index is full before "big"
        (workspace / "a" / f"f{i:02d}.txt").write_text("x")
    (workspace / "big").mkdir()
    asked, answer, done = threading.Event(), threading.Event(), threading.Event()
    real = mentions.folder_files

    def slow_mount(full: Path) -> Iterator[str]:
        if full.name != "big":
            yield from real(full)
            return
        asked.set()
        answer.wait(20)  # bounded: on the UI thread (the defect) it holds the whole app this long
        yield from (f"data_{i:06d}.csv" for i in range(100_000))
        done.set()

    monkeypatch.setattr(mentions, "folder_files", slow_mount)
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=SMALL_SCREEN) as pilot:
        prompt, menu = app.query_one(PromptInput), app.query_one(MentionMenu)
        await type_text(pilot, "see @big/")
        await wait_until(pilot, asked.is_set)
        await type_text(pilot, "data_0999")
        await wait_until(pilot, lambda: prompt.text == "see @big/data_0999")
        typed_while_reading = not done.is_set()
        answer.set()
        await wait_until(pilot, lambda: menu.is_open and _menu(menu)[:1] == ["big/data_099900.csv"])
        assert _menu(menu) == [f"big/data_0999{i:02d}.csv" for i in range(8)]
    assert typed_while_reading


NAME = st.text(alphabet="abcXYZ019_-.", min_size=1, max_size=8).filter(lambda n: n not in {".", ".."})


@given(names=st.sets(NAME, min_size=1, max_size=12), pick=st.integers(0, 11), cut=st.integers(1, 4))
def test_a_typed_folder_offers_each_of_its_files_by_any_prefix_of_its_name(
    names: set[str], pick: int, cut: int
) -> None:
    """Past the index's cut, any prefix of a file's name after its folder offers that file, and only files of
    that folder whose names start with it (case-insensitive), within the menu's limit."""
    chosen = sorted(names)[pick % len(names)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        for folder in (root / "d" / "e", Path(tmp) / "out"):
            folder.mkdir(parents=True)
            for name in names:
                (folder / name).write_text("x")
        prefix = chosen[: max(1, len(chosen) - cut)]
        offered = mentions.in_folder(f"d/e/{prefix}", root, limit=len(names))
        assert f"d/e/{chosen}" in offered
        assert all(p.startswith("d/e/") and p[4:].lower().startswith(prefix.lower()) for p in offered)
        assert len(offered) == sum(n.lower().startswith(prefix.lower()) for n in names)
        assert mentions.in_folder(f"../out/{prefix}", root) == []  # never outside the workspace


class _Looked(list[str]):
    """A folder's names that count how many of them are looked at, by index or in a pass."""

    looked = 0

    def __getitem__(self, i: Any) -> Any:
        self.looked += 1
        return super().__getitem__(i)

    def __iter__(self) -> Iterator[str]:
        for name in super().__iter__():
            self.looked += 1
            yield name


def test_a_huge_typed_folders_menu_looks_at_a_few_of_its_names_at_each_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: the folder past the index's cut is read off the UI thread, but its menu is filtered
    on it at every key typed, and a pass over the ``FOLDER_SCAN`` (200,000) names it may hold took 20-50 ms
    a key. The menu looks at about log2 of them plus its own length, and offers what a pass would."""
    (tmp_path / "big").mkdir()
    generated = [f"{'Data' if i % 7 == 0 else 'data'}_{i:06d}.csv" for i in range(mentions.FOLDER_SCAN)]
    monkeypatch.setattr(mentions, "folder_files", lambda full: iter(reversed(generated)))
    names = mentions.read_folder("big", tmp_path)
    assert len(names) == mentions.FOLDER_SCAN
    for typed in ("", "d", "DATA_0999", "data_19999", "data_199999.csv", "zz", "D"):
        looked = _Looked(names)
        offered = mentions.in_listed(f"big/{typed}", looked, limit=8)
        assert offered == [f"big/{n}" for n in names if n.lower().startswith(typed.lower())][:8]
        assert looked.looked <= 2 * mentions.FOLDER_SCAN.bit_length() + 8, typed


async def test_a_terminal_a_few_rows_high_still_shows_the_conversation(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Found starting myrm in a 20x5 terminal: the title, the ring's line, the status, the box (3 rows), the
    keys' line: every row; a question sent got its answer with no row to show it in. Below ``SHORT`` rows
    the title, the keys' line and the box's border give theirs to the chat; back at full size they return."""
    emulator.enqueue(Reply(text="seen here"))
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=(120, 35)) as pilot:
        await pilot.resize_terminal(20, 5)
        chat = app.main.chat
        await wait_until(pilot, lambda: tuple(app.size) == (20, 5) and chat.size.height >= 2)
        await send_turn(pilot, app, "hi")
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)))
        answer = app.query(AssistantMessage).last()
        await wait_until(
            pilot, lambda: chat.scroll_offset.y + chat.size.height >= answer.virtual_region.bottom
        )
        assert answer.markdown.source == "seen here" and not app.query_one(Header).display
        await pilot.resize_terminal(120, 35)
        await wait_until(pilot, lambda: bool(app.query_one(Header).display) and chat.size.height > 20)


async def test_slash_copy_puts_the_newest_answer_on_the_clipboard_code_blocks_as_written(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """What a Claude Code user types to take an answer: ``/copy`` was an unknown command, and a mouse
    selection takes only what the screen shows. Before any answer it says so; then it takes the newest."""
    newest = "Run this:\n\n```python\nprint('hi')\n```\n"
    answers = {"one": "the first", "two": newest}  # by question: a title request takes no scripted turn
    emulator.default = lambda body: Reply(text=answers.get(str(body["messages"][-1]["content"]), "A title"))
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_text(pilot, "/copy")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: any("no answer to copy" in str(n.message) for n in app._notifications)
        )
        for question in ("one", "two"):
            await send_turn(pilot, app, question)
        await type_text(pilot, "/copy")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.clipboard == newest)
        await type_text(pilot, "/copy code")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.clipboard == "print('hi')\n")


FENCE = st.sampled_from(["```", "````", "~~~"])
BODY = st.text(alphabet="ab `~\n#", max_size=30).filter(lambda b: "```" not in b and "~~~" not in b)


@given(
    before=st.text(alphabet="ab \n", max_size=20),
    blocks=st.lists(st.tuples(FENCE, BODY), min_size=1, max_size=3),
)
def test_the_code_block_copy_takes_is_the_last_one_as_written(
    before: str, blocks: list[tuple[str, str]]
) -> None:
    """Whatever text and fences an answer has, ``/copy code`` takes the last block's body exactly."""
    text = before + "".join(
        f"\n{fence}python\n{body}{'' if body.endswith(chr(10)) or not body else chr(10)}{fence}\nafter\n"
        for fence, body in blocks
    )
    last = blocks[-1][1]
    expected = last + ("" if last.endswith("\n") or not last else "\n")
    assert [m.group(2) for m in CODE_BLOCK.finditer(text)][-1] == expected


async def test_the_panel_f4_opened_gives_way_when_the_terminal_is_made_narrow(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """F4 in a 120-column terminal, then the terminal made 60 columns wide (mid-turn, in tmux): the
    vault panel (at least 52 columns) stayed, and the conversation was 8 columns wide, a word a line.
    Across the narrow threshold the width decides again; F4 there still opens the panel."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(120, 36)) as pilot:
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.query_one("#tabs").active == "vault-tab")  # type: ignore[attr-defined]
        assert not app.main.has_class("-hide-panel")
        assert app.main.side_panel in app.focused.ancestors  # type: ignore[union-attr]  # F4: the list
        await pilot.resize_terminal(60, 20)
        await wait_until(pilot, lambda: app.main.has_class("-hide-panel"))
        await wait_until(pilot, lambda: app.query_one("#chat-column").outer_size.width >= 58)
        await wait_until(pilot, lambda: isinstance(app.focused, PromptInput))  # not the hidden list
        await pilot.press(*"abc")
        await wait_until(pilot, lambda: app.query_one(PromptInput).text == "abc")
        await pilot.press("f4")
        await wait_until(pilot, lambda: not app.main.has_class("-hide-panel"))  # asked for here: shown
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: app.main.has_class("-hide-panel"))
        await pilot.resize_terminal(120, 36)
        await wait_until(pilot, lambda: not app.main.has_class("-hide-panel"))  # wide: the width decides


async def test_f2_settings_fit_a_60_column_terminal(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """F2 at 60 columns: the 90-column dialog ran off the right edge, its border and the ends of its
    labels ("empty for the provi…") cut off."""
    from textual.containers import VerticalScroll
    from textual.widgets import Label

    from myrm_tui.app.screens.settings import SettingsScreen

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(60, 20)) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen))
        box = app.screen.query_one(VerticalScroll)
        await wait_until(pilot, lambda: box.region.width > 0)
        assert box.region.x >= 0 and box.region.right <= 60
        for label in box.query(Label):
            text = str(label.render())
            # every word of a label is drawn: it wraps inside the dialog
            assert label.content_region.right <= box.content_region.right, text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen))


async def test_every_answer_of_an_approval_shows_in_a_60_column_terminal(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """An edit asked about in a 60-column terminal: "Decline [n]" was past the dialog's right edge, not
    drawn (its buttons needed 59 columns of the 42 the dialog had)."""
    from textual.containers import Vertical
    from textual.widgets import Button

    from myrm_tui.app.screens.approval import ApprovalScreen

    (workspace / "main.py").write_text('print("hi")\n')
    emulator.enqueue(
        Reply(
            tool_calls=[("file_edit_tool", {"path": "main.py", "old_string": "hi", "new_string": "hello"})]
        ),
        Reply(text="left as it is"),
    )
    app = make_app(
        emulator, tmp_path, workspace, preheat=False, approval="ask", summarizer_model="extractive"
    )
    async with started(app, size=(60, 20)) as pilot:
        await type_text(pilot, "please edit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), 30)
        box = app.screen.query_one(Vertical)
        buttons = list(app.screen.query(Button))
        await wait_until(pilot, lambda: all(b.region.width for b in buttons))
        assert [str(b.label) for b in buttons] == ["Apply [y]", "Always [a]", "Decline [n]"]
        assert all(
            box.content_region.x <= b.region.x and b.region.right <= box.content_region.right for b in buttons
        )
        assert box.region.right <= 60
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.busy, 30)
    assert (workspace / "main.py").read_text() == 'print("hi")\n'
