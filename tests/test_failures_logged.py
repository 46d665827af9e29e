"""Failures do not vanish: every broad handler in the package logs with its traceback or re-raises, and
``myrm doctor`` says where that log is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

import myrm_tui
from myrm_tui.cli import app

PACKAGE = Path(myrm_tui.__file__).resolve().parent
BROAD = {"Exception", "BaseException"}
LEVELS = {"debug", "info", "warning", "error", "critical", "log"}

# Handlers that may neither log nor re-raise, each with why (path relative to the package, function name).
ALLOWED = {
    # redact() never raises; report_failure() logs the first failure with its traceback (once per process:
    # a broken pattern would otherwise write a traceback for every message of every turn).
    ("context/privacy/redact.py", "redact"),
}


def _is_broad(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(isinstance(k, ast.Name) and k.id in BROAD for k in kinds)


def _logs_traceback(node: ast.AST) -> bool:
    """A ``log.exception(...)`` or ``log.<level>(..., exc_info=...)`` call anywhere in ``node``."""
    for call in ast.walk(node):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        if call.func.attr == "exception":
            return True
        if call.func.attr in LEVELS and any(k.arg == "exc_info" for k in call.keywords):
            return True
    return False


def _suppresses_broadly(node: ast.AST) -> bool:
    """A ``with suppress(Exception)`` (or ``contextlib.suppress(…, BaseException)``): a handler that logs
    nothing, whatever the block holds."""
    if not isinstance(node, (ast.With, ast.AsyncWith)):
        return False
    for item in node.items:
        call = item.context_expr
        if not isinstance(call, ast.Call):
            continue
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if name == "suppress" and any(isinstance(a, ast.Name) and a.id in BROAD for a in call.args):
            return True
    return False


def silent_handlers(tree: ast.AST, rel: str) -> list[str]:
    """Broad handlers of ``tree`` that end in no ``raise`` and log no traceback, and every
    ``suppress(Exception)``."""
    out: list[str] = []

    def visit(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if _suppresses_broadly(child) and (rel, name) not in ALLOWED:
                line = getattr(child, "lineno", 0)
                out.append(f"{rel}:{line} in {name}(): suppress() of a broad exception")
            if isinstance(child, ast.ExceptHandler) and _is_broad(child):
                reraises = isinstance(child.body[-1], ast.Raise)
                if not (reraises or _logs_traceback(child) or (rel, name) in ALLOWED):
                    out.append(f"{rel}:{child.lineno} in {name}()")
            visit(child, name)

    visit(tree, "<module>")
    return out


def test_no_broad_handler_swallows_a_failure_unlogged() -> None:
    silent: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        silent += silent_handlers(ast.parse(path.read_text(encoding="utf-8")), rel)
    assert not silent, "broad handlers that neither log with exc_info nor re-raise:\n" + "\n".join(silent)


def test_allow_list_names_handlers_that_exist() -> None:
    """A stale entry would let a new silent handler in under an old name."""
    for rel, func in ALLOWED:
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
        funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == func]
        assert funcs and any(
            isinstance(h, ast.ExceptHandler) and _is_broad(h) for f in funcs for h in ast.walk(f)
        ), (rel, func)


@pytest.mark.parametrize(
    ("source", "silent"),
    [
        ("try:\n    f()\nexcept Exception:\n    pass\n", True),
        ("try:\n    f()\nexcept:\n    x = 1\n", True),
        ("try:\n    f()\nexcept (ValueError, BaseException) as e:\n    log.warning('x %s', e)\n", True),
        ("try:\n    f()\nexcept Exception:\n    if a:\n        raise\n    g()\n", True),
        ("try:\n    f()\nexcept ValueError:\n    pass\n", False),
        ("try:\n    f()\nexcept Exception:\n    log.exception('x')\n", False),
        ("try:\n    f()\nexcept Exception:\n    log.debug('x', exc_info=True)\n", False),
        ("try:\n    f()\nexcept BaseException:\n    cleanup()\n    raise\n", False),
        ("try:\n    f()\nexcept Exception as e:\n    raise Other() from e\n", False),
        ("with contextlib.suppress(Exception):\n    f()\n", True),
        ("async def g():\n    async with x, suppress(ValueError, BaseException):\n        f()\n", True),
        ("with suppress(ValueError):\n    f()\n", False),
        ("with failure_logged(log, 'f'):\n    f()\n", False),
    ],
)
def test_the_scan_tells_silent_from_logged(source: str, silent: bool) -> None:
    assert bool(silent_handlers(ast.parse(source), "x.py")) is silent


def test_doctor_names_the_log(tmp_path: Path, absent_gguf: dict[str, str]) -> None:
    log = tmp_path / "logs" / "myrm-test.log"
    env = {
        "MYRM_DB": str(tmp_path / "d.db"),
        "MYRM_CONFIG": str(tmp_path / "none.toml"),
        "MYRM_LOG": str(log),
        **absent_gguf,
    }
    result = CliRunner().invoke(app, ["doctor"], env=env)
    lines = [ln.strip() for ln in result.stdout.splitlines()]
    assert f"log: {log}" in lines, result.stdout


def test_every_log_follows_myrm_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$MYRM_LOG`` moves myrm's log, and the embedded model's and the MCP servers' logs with it."""
    from myrm_tui import logs
    from myrm_tui.agent import mcp_client
    from myrm_tui.llm import local

    log = tmp_path / "elsewhere" / "myrm.log"
    monkeypatch.setenv("MYRM_LOG", str(log))
    assert logs.log_path() == log
    assert local.log_path() == tmp_path / "elsewhere" / "embedded-model.log"
    out = mcp_client._server_log("probe")
    try:
        assert Path(out.name) == tmp_path / "elsewhere" / "mcp-servers.log"
    finally:
        out.close()


def test_failure_logged_goes_on_and_leaves_the_traceback(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from myrm_tui.logs import failure_logged

    logger = logging.getLogger("myrm_tui.test")
    with caplog.at_level(logging.DEBUG, "myrm_tui.test"), failure_logged(logger, "the cleanup"):
        raise OSError("disk full")
    (record,) = caplog.records
    assert record.getMessage() == "the cleanup failed" and record.exc_info is not None
    with pytest.raises(KeyboardInterrupt), failure_logged(logger, "x"):  # only Exception is gone past
        raise KeyboardInterrupt
