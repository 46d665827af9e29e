"""``myrm acp`` tried as an editor drives it and as an attacker would: the protocol-version handshake,
requests whose method is not a string, answers over the line limit. Each test is a finding that was
fixed; the real process where the finding showed there, the SDK's client otherwise."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, schema, text_block
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.acp.convert import history_updates
from myrm_tui.attachments import TOTAL_BUDGET
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.acp.test_server import PNG, Editor, _read_until, _request, in_process, raw_editor, real_process
from tests.acp.test_server import _start as _start_session
from tests.helpers import cli_env


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


def _acp(tmp: Path, emu: ProviderEmulator, workspace: Path, lines: bytes) -> list[dict[str, Any]]:
    """``myrm acp`` as its own process fed ``lines``, then its input ended: every message it wrote."""
    done = warm.run(
        [
            sys.executable,
            "-m",
            "myrm_tui.cli",
            "acp",
            "-m",
            "openai/gpt-4o-mini",
            "--api-base",
            emu.openai_base,
        ],
        input=lines,
        capture_output=True,
        env=cli_env(tmp),
        cwd=workspace,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return [json.loads(x) for x in done.stdout.splitlines()]


def test_the_version_answered_is_ours_and_a_method_that_is_no_string_is_refused_by_its_id(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A client of protocol 0 was told 0 (the spec: an agent that does not speak the requested version
    answers its latest); ``"method": null`` was never answered (the SDK took it for an answer) and held
    myrm's exit for its whole grace."""
    said = _acp(
        tmp_path,
        emulator,
        workspace,
        _line({"id": 1, "method": "initialize", "params": {"protocolVersion": 0}})
        + _line({"id": 2, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION + 1}})
        + _line({"id": 3, "method": None, "params": {}})
        + _line({"id": "four", "method": 5})
        + _line({"id": 5, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}}),
    )
    answers = {m["id"]: m for m in said if "method" not in m}
    assert set(answers) == {1, 2, 3, "four", 5}
    assert [answers[i]["result"]["protocolVersion"] for i in (1, 2, 5)] == [PROTOCOL_VERSION] * 3
    assert answers[3]["error"]["code"] == answers["four"]["error"]["code"] == -32600


async def test_an_answer_over_the_line_limit_fails_its_request_and_the_turn_goes_on(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The editor answered ``fs/read_text_file`` with a line over the limit: the line was dropped, and the
    turn waited for that answer for ever. Now the request fails and the file is read from the disk."""

    class HugeBuffers(Editor):
        async def read_text_file(self, session_id: str, path: str, **_: Any) -> schema.ReadTextFileResponse:
            return schema.ReadTextFileResponse(content="x" * 100_000)

    emulator.enqueue(Reply(tool_calls=[("file_read_tool", {"paths": ["hello.py"]})]), Reply(text="Read it."))
    editor = HugeBuffers()
    async with in_process(tmp_path, emulator, editor, line_limit=64 * 1024) as (conn, wire, _, _server):
        caps = schema.ClientCapabilities(fs=schema.FileSystemCapabilities(read_text_file=True))
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        # bounded: without the fix the turn never ends
        done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("read hello.py")]), 60)
    assert done.stop_reason == "end_turn"
    read = next(m for m in emulator.accepted[1].body["messages"] if m["role"] == "tool")
    assert "return 'hello'" in read["content"]  # the disk's text, after the editor's answer failed
    asked = [m for d, m in wire.messages if d == "incoming" and m.get("method") == "fs/read_text_file"]
    assert len(asked) == 1
    assert not [m for d, m in wire.messages if d == "incoming" and "error" in m]  # nothing sent to the editor


# -- what the editor shows holds nothing a terminal obeys ---------------------------------------------

_HOSTILE = ["\x1b", "\x1b[2J", "\x1b]52;c;aGk=\x07", "\x9b31m", "\u202e", "\u2066", "\ud800", "\r", "\x00"]
_texts = st.lists(st.characters() | st.sampled_from(_HOSTILE), max_size=12).map("".join)


def _unsafe(text: str) -> list[str]:
    """The characters of ``text`` a terminal obeys or that reorder or break a line: C0 controls but tab
    and newline, DEL and C1, bidi embeddings, overrides and isolates, lone surrogates."""
    return [
        c
        for c in text
        if (ord(c) < 0x20 and c not in "\t\n")
        or 0x7F <= ord(c) < 0xA0
        or 0x202A <= ord(c) <= 0x202E
        or 0x2066 <= ord(c) <= 0x2069
        or 0xD800 <= ord(c) < 0xE000
    ]


def _display(update: dict[str, Any]) -> list[str]:
    """Every string of an update (as sent) the editor shows: titles and text, not raw input or output."""
    out: list[str] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k not in ("rawInput", "rawOutput", "oldText", "newText", "path"):
                    walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key in ("text", "title"):
            out.append(node)

    walk(update)
    return out


@settings(max_examples=40, deadline=None)
@given(user=_texts, thought=_texts, reply=_texts, command=_texts, output=_texts)
def test_a_loaded_session_shows_no_control_sequence(
    user: str, thought: str, reply: str, command: str, output: str
) -> None:
    """``session/load`` replayed a stored session's text as stored: a model's ``ESC]52`` (the clipboard),
    a command's colour codes, a bidi override went to the editor as they were."""
    call = ToolCall("c1", "bash", json.dumps({"command": command}))
    history = [
        Message("user", user),
        Message("assistant", f"reply: {reply} :end", tool_calls=(call,), reasoning=thought or None),
        Message("tool", f"output: {output} :end", tool_call_id="c1"),
    ]
    shown = [
        text
        for u in history_updates(history, Path("/work"))
        for text in _display(u.model_dump(mode="json", by_alias=True, exclude_none=True))
    ]
    assert [c for text in shown for c in _unsafe(text)] == []
    # shown, not dropped: what frames the hostile text reaches the editor
    assert [t.startswith(("reply: ", "output: ")) and t.endswith(":end") for t in shown].count(True) == 2


async def test_what_the_editor_shows_of_a_turn_holds_no_control_sequence(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Live, the same: a reply's escape sequences, a command's coloured output (``[31m`` in Zed's card)
    and, in the permission request, a command whose bidi override and zero-width space made it read as
    another one while the user decided."""
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "printf '\\033[31mred\\033[0m\\n'"})]),
        Reply(tool_calls=[("bash", {"command": "echo \u202egnp.txt\u200b \x1b[8mhidden"})]),
        Reply(text="Done \x1b]0;pwned\x07 and \x1b[2J cleared", chunk_size=3),
    )
    editor = Editor(answers=["yes", "no"])
    async with in_process(tmp_path, emulator, editor) as (conn, wire, _, _server):
        sid = await _start_session(conn, workspace)
        done = await conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert done.stop_reason == "end_turn"
    said = [m for d, m in wire.messages if d == "incoming" and "method" in m]
    shown = [text for m in said for text in _display(m["params"])]
    assert [c for text in shown for c in _unsafe(text)] == []
    outputs = [t for u in wire.updates("tool_call_update") for t in _display(u)]
    assert any("red" in t and "[31m" not in t for t in outputs)
    asked = wire.sent("session/request_permission")[-1]  # printf asked first, then this one
    # the zero-width space the command holds, marked on the card's title and in the question
    assert "⟨U+200B⟩" in asked["params"]["toolCall"]["title"]
    assert "⟨U+200B⟩" in asked["params"]["toolCall"]["content"][0]["content"]["text"]
    reply = "".join(u["content"]["text"] for u in wire.updates("agent_message_chunk"))
    assert "Done" in reply and "cleared" in reply


async def test_an_embedded_file_is_attached_within_the_budget_of_an_at_file(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Zed embeds each @-mentioned file whole: a 600,000-character log had the prompt refused ("over
    the limit for one message", nothing sent). Now it is cut as ``@file`` cuts a file, and embedded
    files past the message's budget are named for the agent to read."""
    big = "".join(f"log line {i:06d}\n" for i in range(40_000))  # 640,000 characters
    blocks: list[Any] = [text_block("why does it fail?")]
    for name in ("big.log", "a.py", "b.py", "c.py"):
        uri = (workspace / name).as_uri()
        text = big if name == "big.log" else f"# {name}\n" + "x = 1\n" * 5_000
        blocks.append(
            schema.EmbeddedResourceContentBlock(
                type="resource", resource=schema.TextResourceContents(uri=uri, text=text)
            )
        )
    async with in_process(tmp_path, emulator, Editor()) as (conn, _wire, _, _server):
        sid = await _start_session(conn, workspace)
        done = await conn.prompt(session_id=sid, prompt=blocks)
    assert done.stop_reason == "end_turn"
    (request,) = emulator.accepted
    sent = [m for m in request.body["messages"] if m["role"] == "user"][-1]["content"]
    sent = sent if isinstance(sent, str) else "\n".join(p.get("text", "") for p in sent)
    assert '<file path="big.log">\nlog line 000000' in sent
    assert "[attachment cut: the first 20,000 characters of 640,000 characters" in sent
    assert '<file path="a.py">' in sent and '<file path="b.py">' in sent
    assert '<file path="c.py">' not in sent and "@c.py" in sent  # past 60,000 characters: named
    assert len(sent) < 70_000


# -- start-up: an editor times out an agent slow to initialize ------------------------------------------


def _fresh(args: list[str], tmp: Path, workspace: Path, **kw: Any) -> subprocess.Popen[bytes]:
    """``myrm acp`` executed, not forked from the warm interpreter (which holds litellm already)."""
    cmd = [sys.executable, *args, "-m", "myrm_tui.cli", "acp", "-m", "openai/gpt-4o-mini"]
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(tmp), cwd=workspace, **kw
    )


def test_initialize_is_answered_without_importing_litellm(tmp_path: Path, workspace: Path) -> None:
    """Zed and the others give an agent seconds to answer ``initialize``; litellm alone takes ~2 s of CPU
    and is imported only when the first session's agent is built."""
    proc = _fresh(["-X", "importtime"], tmp_path, workspace, stdin=subprocess.PIPE)
    out, err = proc.communicate(
        _line({"id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}}), timeout=60
    )
    assert proc.returncode == 0, err.decode(errors="replace")
    assert json.loads(out)["result"]["protocolVersion"] == PROTOCOL_VERSION
    imported = [line.rsplit("|", 1)[-1].strip() for line in err.decode().splitlines() if "|" in line]
    assert "myrm_tui.acp.server" in imported
    assert [m for m in imported if m.startswith(("litellm", "tiktoken", "textual"))] == []


def test_a_file_for_standard_input_is_named_as_such(tmp_path: Path, workspace: Path) -> None:
    """``myrm acp < requests.jsonl`` said "standard output must be a pipe" of a terminal's output."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(_line({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
    with requests.open("rb") as stdin:
        proc = _fresh([], tmp_path, workspace, stdin=stdin)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "standard input must be a pipe, not a file (cat FILE | myrm acp)" in err.decode()


# -- the editor closes myrm's input mid-turn ------------------------------------------------------------


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


async def test_input_closed_during_a_command_ends_myrm_and_the_command_and_keeps_the_session(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The real process: Zed closing the agent's stdin mid-command. myrm exits 0, the command's process
    is gone with it, and the session holds the call closed (its result says it was interrupted)."""
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "sleep 300 & echo $! > child.pid; wait"})]))
    editor = Editor(answers=["yes"])
    async with real_process(tmp_path, emulator, workspace, editor) as (conn, _wire, _proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("wait")]))
        pidfile = workspace / "child.pid"
        while not pidfile.exists() or not pidfile.read_text().strip():  # the command runs
            editor.update_seen.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(editor.update_seen.wait(), 0.05)
        child = int(pidfile.read_text())
        assert _alive(child)
    # real_process closed the input and saw myrm exit 0
    turn.cancel()
    with contextlib.suppress(asyncio.CancelledError, ConnectionError):
        await turn
    assert not _alive(child)
    store = await Store.open(tmp_path / "cli.db")
    try:
        msgs = await store.load_messages(sid)
        assert await store.lease_holder(sid) is None
    finally:
        await store.close()
    assert msgs[-2].role == "assistant" and msgs[-2].tool_calls[0].name == "bash"
    assert msgs[-1].role == "tool" and "interrupted" in msgs[-1].text


# -- prompts an editor may send ---------------------------------------------------------------------------


async def test_a_prompt_sent_right_after_a_cancel_follows_the_cancelled_turn(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A client that cancels and sends its next prompt without waiting for the cancelled one's answer got
    "a turn is running in this session; cancel it first" — after cancelling it."""
    emulator.enqueue(Reply(text="Working on it, " * 20, chunk_size=8, stall_after=3), Reply(text="Next."))
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, wire, _, _server):
        sid = await _start_session(conn, workspace)
        first = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await editor.until(lambda: bool(editor.of("agent_message_chunk")))
        await conn.cancel(session_id=sid)
        second = await conn.prompt(session_id=sid, prompt=[text_block("do this instead")])
        assert (await first).stop_reason == "cancelled"
    assert second.stop_reason == "end_turn"
    assert "Next." in "".join(u["content"]["text"] for u in wire.updates("agent_message_chunk"))
    assert [m for d, m in wire.messages if d == "incoming" and "error" in m] == []


async def test_an_empty_prompt_sends_nothing_to_the_model(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """An empty prompt (no block, or blank text) was sent as "(empty message)": a request paid for and a
    message in the history. As an empty box in the TUI, it is nothing."""
    async with in_process(tmp_path, emulator, Editor()) as (conn, _wire, _, server):
        sid = await _start_session(conn, workspace)
        empty: list[list[Any]] = [[], [text_block("  \n ")]]
        for blocks in empty:
            assert (await conn.prompt(session_id=sid, prompt=blocks)).stop_reason == "end_turn"
        msgs = await server.store.load_messages(sid)
    assert emulator.accepted == []
    assert [m for m in msgs if m.role == "user" and "empty message" in m.text] == []


async def test_an_image_is_taken_by_what_its_bytes_are_and_another_type_is_named_left_out(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """An image block of a type no model takes (SVG) was written as ``image-1.svg+xml`` and its path put
    in the message, where nothing attached it: the model read a path to a file deleted after the turn."""
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"/>').decode()
    blocks: list[Any] = [
        text_block("compare"),
        schema.ImageContentBlock(type="image", mime_type="image/svg+xml", data=svg),
        # declared JPEG, a PNG by its bytes: attached as what it is
        schema.ImageContentBlock(type="image", mime_type="image/jpeg", data=base64.b64encode(PNG).decode()),
    ]
    async with in_process(tmp_path, emulator, Editor()) as (conn, _wire, _, _server):
        sid = await _start_session(conn, workspace)
        assert (await conn.prompt(session_id=sid, prompt=blocks)).stop_reason == "end_turn"
    parts = [m for m in emulator.accepted[-1].body["messages"] if m["role"] == "user"][-1]["content"]
    text = "\n".join(p.get("text", "") for p in parts)
    assert "[an image (image/svg+xml) that is not a PNG, JPEG, GIF or WebP was left out]" in text
    named = re.findall(r"myrm-acp-[^/\s]+/(\S+?)[\s:\]]", text)  # the image files the text names
    assert named and set(named) == {"image-1.png"}
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert len(urls) == 1 and urls[0].startswith("data:image/png;base64,")


async def test_a_cancel_sent_as_a_request_is_answered_and_cancels(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """``session/cancel`` with an id was answered "method not found" (the SDK knows it as a notification
    only) and the turn went on after the user pressed stop."""
    emulator.enqueue(Reply(text="Working on it, " * 20, chunk_size=8, stall_after=3))
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, _wire, _, _server):
        sid = await _start_session(conn, workspace)
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await editor.until(lambda: bool(editor.of("agent_message_chunk")))
        assert await conn._conn.send_request("session/cancel", {"sessionId": sid}) is None
        assert (await asyncio.wait_for(turn, 60)).stop_reason == "cancelled"


async def test_the_session_list_shows_titles_inert(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A session's title is its first words: ``session/list`` sent a title's escape sequences as typed."""
    async with in_process(tmp_path, emulator, Editor()) as (conn, _wire, _, server):
        await server.store.create_session(
            title="\x1b]0;pwned\x07 fix \u202ethe parser", model="m", workspace=str(workspace)
        )
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        listed = await conn.list_sessions(cwd=str(workspace))
    (title,) = [x.title or "" for x in listed.sessions]
    assert "fix" in title and "the parser" in title and _unsafe(title) == []


def _fenced(text: str) -> tuple[str, str] | None:
    """The info string and content of the first fenced code block of ``text``, as CommonMark reads it: a
    fence of three or more backticks; the block ends at a line of at least as many backticks alone."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.fullmatch(r"(`{3,})([^`]*)", line)
        if m is None:
            continue
        for j in range(i + 1, len(lines)):
            if re.fullmatch(rf" {{0,3}}`{{{len(m.group(1))},}} *", lines[j]):
                return m.group(2), "\n".join(lines[i + 1 : j])
        return m.group(2), "\n".join(lines[i + 1 :])
    return None


@settings(max_examples=60, deadline=None)
@given(
    command=st.lists(st.sampled_from(["`", "```", "*", "_", "-", "\n", "#", "a", " ", "\u200b"]), max_size=20)
)
def test_a_permission_question_holds_the_command_in_one_code_block(command: list[str]) -> None:
    """Editors render the question as Markdown: an edit's diff lost its ``---`` and ``-`` lines to a rule
    and a list, a command its ``*`` to emphasis. Whatever the command holds, one fenced block holds it."""
    from myrm_tui.acp.server import _question
    from myrm_tui.agent.permissions import Assessment
    from myrm_tui.safe_text import reveal

    text = "".join(command)
    for tool, lang in (("bash", "sh"), ("file_edit_tool", "diff")):
        assert _fenced(_question(tool, text, Assessment(text, ()))) == (lang, reveal(text))


# -- any prompt content an editor may send ------------------------------------------------------------

_uris = st.one_of(
    st.builds(lambda n: f"file:///work/ws/{n}", st.text("ab/.% é\u202e", min_size=1, max_size=10)),
    st.sampled_from(
        ["file:///etc/passwd", "https://example.com/x?a=1", "zed:///agent/thread/1", "", "file://"]
    ),
)
_blocks = st.one_of(
    _texts.map(text_block),
    st.builds(
        lambda data, mime: schema.ImageContentBlock(type="image", mime_type=mime, data=data),
        st.one_of(
            st.just(base64.b64encode(PNG).decode()),
            st.binary(max_size=30).map(lambda b: base64.b64encode(b).decode()),
            st.text(max_size=8),
        ),
        st.sampled_from(["image/png", "image/svg+xml", "image/../x", "text/html"]),
    ),
    st.builds(
        lambda uri, text: schema.EmbeddedResourceContentBlock(
            type="resource", resource=schema.TextResourceContents(uri=uri, text=text)
        ),
        _uris,
        st.one_of(_texts, st.integers(0, 30_000).map(lambda n: "line\n" * (n // 5))),
    ),
    st.builds(
        lambda uri, blob: schema.EmbeddedResourceContentBlock(
            type="resource", resource=schema.BlobResourceContents(uri=uri, blob=blob)
        ),
        _uris,
        st.binary(max_size=20).map(lambda b: base64.b64encode(b).decode()),
    ),
    st.builds(lambda uri: schema.ResourceContentBlock(type="resource_link", uri=uri, name="n"), _uris),
    st.just(schema.AudioContentBlock(type="audio", mime_type="audio/wav", data="AAAA")),
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=st.lists(_blocks, max_size=5))
async def test_any_prompt_content_gets_a_turn_or_nothing_never_an_error(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, blocks: list[Any]
) -> None:
    """Whatever content blocks a prompt holds, the editor gets an answer with a stop reason (never a
    JSON-RPC error, never a hang); each text block reaches the model as written; embedded files stay
    within the message's attachment budget. (A lone surrogate, which UTF-8 cannot carry, arrives as
    U+FFFD.)"""
    sent = len(emulator.accepted)
    async with in_process(tmp_path, emulator, Editor()) as (conn, wire, _, _server):
        sid = await _start_session(conn, workspace)
        done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=blocks), 60)
    assert done.stop_reason in ("end_turn", "refusal")
    assert [m for d, m in wire.messages if d == "incoming" and "error" in m] == []
    if len(emulator.accepted) == sent:  # nothing sent: an empty prompt
        return
    user = [m for m in emulator.accepted[-1].body["messages"] if m["role"] == "user"][-1]["content"]
    said = user if isinstance(user, str) else "\n".join(p.get("text", "") for p in user)
    for b in blocks:
        if isinstance(b, schema.TextContentBlock) and b.text.strip():
            assert re.sub("[\ud800-\udfff]", "\ufffd", b.text) in said  # a lone surrogate cannot be sent
    attached = re.findall(r'<file path="[^"]*">\n(.*?)\n</file>', said, re.S)
    assert sum(len(a) for a in attached) <= TOTAL_BUDGET + 200 * len(attached)  # the cut notes


async def test_requests_reusing_an_id_are_all_answered_before_the_input_ends(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Two requests with one id, then the input ends: the first answer took the id off the list of
    requests waiting, and myrm exited before answering the second."""
    async with raw_editor(tmp_path, emulator) as (reader, writer, serving, _):
        writer.write(
            _request(1, "initialize", {"protocolVersion": PROTOCOL_VERSION})
            + _request(1, "session/new", {"cwd": str(workspace), "mcpServers": []})
        )
        await writer.drain()
        writer.close()
        await asyncio.wait_for(serving, 60)
        got = await _read_until(reader, lambda m: False)
    answers = [m for m in got if m.get("id") == 1]
    assert len(answers) == 2
    assert all("result" in a for a in answers)
    kinds = sorted("sessionId" if "sessionId" in a["result"] else "protocolVersion" for a in answers)
    assert kinds == ["protocolVersion", "sessionId"]  # initialize's answer and session/new's
