"""The documentation stays a door and a map, held to the code: README is short; every relative link (and
its ``#anchor``) in README, CONTRIBUTING and ``docs/`` leads somewhere, and every checkout path a page names
exists; ``docs/context.md``'s step table is the pipeline ``build_pipeline`` builds; permissions.md's rule
table is what a rule covers; every ``myrm …`` command the pages give parses with the real CLI; the settings
(with their defaults and ranges) and environment variables the code reads are the ones
``docs/configuration.md`` lists; the key tables and slash lists of README and usage.md are the command
table (``app/commands.py``); headless.md's event table is the stream-json schema; architecture.md's import
contracts are pyproject's; every option of every command is in a page; every list of the prompt modes is
agent/prompts.py's."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer

from myrm_tui import cli
from myrm_tui.config import setting_keys
from myrm_tui.context.pipeline import build_pipeline
from tests.helpers import cli_env, run_myrm

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])
# Written by the start-up work (``make perf``'s figures); linked before it lands on every branch.
PENDING = {ROOT / "docs" / "perf.md"}
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def links(page: Path) -> list[str]:
    """The targets of the page's Markdown links and images, outside code blocks."""
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def anchors(page: Path) -> set[str]:
    """The page's heading anchors as GitHub makes them (lower case, punctuation dropped, spaces to ``-``)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    heads = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_the_readme_is_a_door_of_at_most_250_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move the detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if dest in PENDING and not dest.exists():
            continue
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, broken


def test_the_pages_are_linked_from_the_readme_or_another_page() -> None:
    linked = {(p.parent / t.partition("#")[0]).resolve() for p in PAGES for t in links(p) if t[:1] not in "#"}
    orphans = [p.relative_to(ROOT).as_posix() for p in PAGES if p.name != "README.md" and p not in linked]
    assert not orphans, orphans


def test_the_step_table_of_docs_context_is_the_pipeline() -> None:
    text = (ROOT / "docs" / "context.md").read_text(encoding="utf-8")
    documented = [(int(n), cls) for n, cls in re.findall(r"^\| (\d+) \| `(\w+)`", text, re.M)]
    built = [(k, type(step).__name__) for k, step in enumerate(build_pipeline().steps, 1)]
    assert documented == built


def _commands(page: Path) -> list[str]:
    """The ``myrm …`` commands the page gives: each line of a shell block, and each inline ``myrm …`` span
    (a span may wrap to the next line), and an editor's entry (``"command": "…/myrm", "args": [...]``).
    ``.venv/bin/`` dropped; what follows ``>``, ``<`` or ``|`` is the shell's, not myrm's."""
    text = page.read_text(encoding="utf-8")
    found = [
        "myrm " + shlex.join(json.loads(f"[{args}]"))
        for args in re.findall(r'"command": "[^"]*/myrm",\s*"args": \[([^\]]*)\]', text)
    ]
    for block in re.findall(r"^```(?:sh|bash)\n(.*?)^```", text, re.M | re.S):
        found += [line.strip() for line in block.replace("\\\n", " ").splitlines()]
    found += [
        " ".join(span.split()) for span in re.findall(r"`((?:\.venv/bin/)?myrm [^`]*)`", FENCE.sub("", text))
    ]
    out = []
    for line in found:
        line = line.removeprefix(".venv/bin/")
        if line == "myrm" or line.startswith("myrm "):
            out.append(re.split(r"\s[<>|]\s?", line)[0])
    return out


# Named by the /undo work before `myrm -c` (another branch) lands: checked once the CLI has it.
PENDING_COMMANDS = {"myrm -c"}
# Written in the pages as what is refused ("One a subcommand has no use for … is refused", usage.md).
REFUSED = {"myrm sessions -m MODEL", "myrm ask --replay …"}
DOC_COMMANDS = sorted({(p.relative_to(ROOT).as_posix(), c) for p in PAGES for c in _commands(p)})


def _help_args(command: str) -> list[str]:
    """The command's arguments with ``--help`` added (before a ``--``): the real parser then checks every
    option name, its value count and the global options' place, and prints the help instead of running.
    ``[--fork ID]``'s brackets are dropped; a placeholder like ``[COMMAND]`` goes; a trailing option named in
    prose (``myrm acp -m``) is given a value."""
    args = shlex.split(re.sub(r"\[([A-Z]+)\]", "", command).replace("[", "").replace("]", ""), comments=True)[
        1:
    ]
    root: Any = typer.main.get_command(cli.app)  # typer's group (its own click's, not ``click.Group``)
    sub = root.commands.get(args[0]) if args else None
    if args and args[-1].startswith("-") and args[-1] not in ("-", "--"):
        params = [*(sub.params if sub else []), *root.params]
        option = next((p for p in params if args[-1] in p.opts), None)
        if option is not None and not getattr(option, "is_flag", True):
            args.append("VALUE")
    if args[:1] == ["help"]:
        return args  # `myrm help [COMMAND]` prints the help itself
    cut = args.index("--") if "--" in args else len(args)
    return [*args[:cut], "--help", *args[cut:]]


@pytest.mark.parametrize("page,command", DOC_COMMANDS, ids=[f"{p}:{c[:60]}" for p, c in DOC_COMMANDS])
def test_every_myrm_command_the_docs_give_parses_with_the_real_cli(
    tmp_path: Path, page: str, command: str
) -> None:
    done = run_myrm(_help_args(command), env=cli_env(tmp_path), cwd=tmp_path)
    if command in PENDING_COMMANDS and done.returncode == 2 and "No such option" in done.stderr:
        pytest.skip(f"{command}: not in this branch's CLI yet")
    if command in REFUSED:
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (command, done.stderr)
    else:
        assert done.returncode == 0 and done.stdout.startswith("Usage: "), (command, done.stderr)


def test_every_setting_is_in_the_configuration_table_and_every_row_is_a_setting() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = text.split("## Every setting", 1)[1].split("\n## ", 1)[0]
    documented = {
        k for row in re.findall(r"^\| ([^|]+) \|", table, re.M) for k in re.findall(r"`(\w+)`", row)
    }
    assert documented == set(setting_keys())


def test_every_environment_variable_the_package_reads_is_documented() -> None:
    code = {
        v for f in (ROOT / "myrm_tui").rglob("*.py") for v in re.findall(r"\bMYRM_[A-Z_]+\b", f.read_text())
    }
    per_setting = {f"MYRM_{k.upper()}" for k in setting_keys()}  # "MYRM_<KEY> for any setting"
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert sorted(v for v in code - per_setting if f"`{v}`" not in text) == []


def _key_as_written(key: str) -> str:
    """``ctrl+end`` as the pages write it: ``Ctrl+End``; ``escape``: ``Esc``."""
    return "+".join({"escape": "Esc"}.get(part, part[:1].upper() + part[1:]) for part in key.split("+"))


@pytest.mark.parametrize("page", ["README.md", "docs/usage.md"])
def test_the_key_table_and_the_slash_list_are_the_command_table(page: str) -> None:
    from myrm_tui.app.commands import COMMANDS

    text = (ROOT / page).read_text(encoding="utf-8")
    keys_column = " ".join(re.findall(r"^\| ([^|]+) \|", text.split("| key | action |", 1)[1], re.M))
    slash_list = re.search(r"^Slash commands: (.*?)\n\n", text, re.M | re.S)
    assert slash_list, "no 'Slash commands:' paragraph"
    first_sentence = re.split(r"\.\s+[A-Z]", slash_list.group(1), maxsplit=1)[
        0
    ]  # the list, not the prose after
    written = set(re.findall(r"`/(\w+)", first_sentence))
    missing_keys = [c.key for c in COMMANDS if c.key and _key_as_written(c.key) not in keys_column]
    assert missing_keys == [], f"keys of myrm_tui/app/commands.py not in {page}'s key table"
    assert written == {s for c in COMMANDS for s in c.slash}, f"{page}'s slash commands"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_file_of_the_checkout_a_page_names_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = re.findall(
        r"`((?:myrm_tui|tests|bench|prompts|scripts|requirements|screenshots)/[\w/.*{,}\-]*)", text
    )
    # a glob as written (`tests/llm/test_wire*.py`); of `x{,-tune}.jsonl`, the first: `x.jsonl`
    globs = [re.sub(r"\{[^}]*\}", "", p.split(":")[0]).rstrip("/") for p in named]
    gone = [p for p in globs if not any(ROOT.glob(p))]
    assert gone == [], f"{page.name} names files that are not in the checkout"


def _rule_rows() -> list[tuple[str, list[str], list[str]]]:
    """permissions.md's rule table: each rule, the commands it covers, those it does not."""
    text = (ROOT / "docs" / "permissions.md").read_text(encoding="utf-8")
    table = text.split("| rule | covers | does not cover |", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rule, covers, not_covers = (
            [s.replace("\\|", "|") for s in re.findall(r"`([^`]+)`", c)] for c in cells
        )
        rows.append((rule[0], covers, not_covers))
    return rows


@pytest.mark.parametrize("rule,covers,not_covers", _rule_rows(), ids=[r[0] for r in _rule_rows()])
def test_the_rule_table_of_permissions_md_is_what_the_rules_do(
    tmp_path: Path, rule: str, covers: list[str], not_covers: list[str]
) -> None:
    from myrm_tui.agent.permissions import CommandRules

    rules = CommandRules([rule])

    def by_the_rule(command: str) -> bool:
        a = rules.assess(command, tmp_path)
        return (
            bool(a.commands)
            and not a.problems
            and all(c.rule and not (c.unnamed or c.problems) for c in a.commands)
        )

    assert covers and not_covers
    assert [c for c in covers if not by_the_rule(c)] == [], "written as covered"
    assert [c for c in not_covers if by_the_rule(c)] == [], "written as not covered"


def test_the_event_table_of_headless_md_is_the_stream_json_schema() -> None:
    from myrm_tui.agent.stream_json import SCHEMA

    def names(props: dict[str, Any]) -> set[str]:
        return {k for k in props if k not in ("type", "version")}

    def nested(props: dict[str, Any]) -> set[str]:  # a field's own fields: `usage` (`input_tokens`, …)
        return names(props) | {
            n for v in props.values() if isinstance(v, dict) for n in nested(v.get("properties", {}))
        }

    events = {e["properties"]["type"]["const"]: e["properties"] for e in SCHEMA["oneOf"]}
    text = (ROOT / "docs" / "headless.md").read_text(encoding="utf-8")
    table = text.split("| type | fields | when |", 1)[1].split("\n\n", 1)[0]
    documented: dict[str, set[str]] = {}
    for line in table.splitlines()[2:]:
        kinds, fields = line.split("|")[1:3]
        for kind in re.findall(r"`(\w+)`", kinds):
            documented[kind] = set(re.findall(r"`(\w+)`", fields))
    assert documented.keys() == events.keys()
    for kind, props in events.items():
        assert names(props) <= documented[kind] <= nested(props), kind


def _as_written(default: str) -> object:
    """A default as the table writes it (`""`, none, `[]`, `true`, 4,096, 120 s) as a value."""
    d = default.strip("`")
    words = {"none": None, "[]": (), "true": True, "false": False}
    if d in words:
        return words[d]
    if d.startswith('"'):
        return d.strip('"')
    return float(d.removesuffix(" s").replace(",", ""))


def test_every_default_in_the_configuration_table_is_the_code_default() -> None:
    from myrm_tui.config import Settings

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = text.split("## Every setting", 1)[1].split("\n## ", 1)[0]
    wrong = []
    for row in re.findall(r"^\| (`.+)$", table, re.M):
        cells = [c.strip() for c in row.split(" | ")]
        keys, defaults = re.findall(r"`(\w+)`", cells[0]), cells[1].split(" / ")
        for key, default in zip(keys, defaults * len(keys) if len(defaults) == 1 else defaults, strict=True):
            if "CPU" in default or "memory" in default:  # this machine's: processes_for, half_the_memory_mb
                continue
            code = getattr(Settings(), key)
            if _as_written(default) != code:
                wrong.append(f"{key}: written {default}, the code's {code!r}")
    assert wrong == []


def test_every_range_in_the_configuration_table_is_what_validation_takes() -> None:
    from myrm_tui.config import validate_values

    def takes(key: str, value: float) -> bool:
        return not validate_values({key: value}, "test")[1]

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = text.split("## Every setting", 1)[1].split("\n## ", 1)[0]
    wrong, checked = [], 0
    for row in re.findall(r"^\| (`.+)$", table, re.M):
        cells = [c.strip() for c in row.split(" | ")]
        for key in re.findall(r"`(\w+)`", cells[0]):
            values = cells[2]
            if found := re.search(r"([\d,]+)–([\d,]+)", values):
                low, high = (int(n.replace(",", "")) for n in found.groups())
                edges = {low: True, high: True, high + 1: False, low - 1: False}
                if values.startswith("0, or"):
                    edges[0] = True
            elif values.startswith("seconds, > 0 and ≤ 7 days"):
                edges = {0: False, 7 * 86400: True, 7 * 86400 + 1: False}
            elif values == "between 0 and 1, in this order" or values == "between 0 and 1":
                edges = {0: False, 1: False}
            else:
                continue
            checked += 1
            wrong += [f"{key} = {v}: written {ok}" for v, ok in edges.items() if takes(key, v) != ok]
    assert checked >= 20 and wrong == []


def test_the_import_contracts_of_architecture_md_are_pyproject_s() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = [c["name"] for c in config["tool"]["importlinter"]["contracts"]]
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The import contracts", 1)[1].split("\n## ", 1)[0]
    written = re.findall(r"^\d+\. \*\*(.+?)\*\*", section, re.M)
    assert len(written) == len(names) and all(
        n.startswith(w.rstrip(":")) for w, n in zip(written, names, strict=True)
    )


def test_every_option_of_every_command_is_in_the_docs() -> None:
    root: Any = typer.main.get_command(cli.app)
    text = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
    missing = [
        f"myrm {name} {flag}".replace("  ", " ")
        for name, command in [("", root), *root.commands.items()]
        for param in command.params
        for flag in [*param.opts, *getattr(param, "secondary_opts", [])]
        if flag.startswith("-") and not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text)
    ]
    assert missing == []


def test_every_list_of_the_prompt_modes_is_the_modes() -> None:
    from myrm_tui.agent.prompts import MODES

    lists = {  # how each page writes the list: `/mode full|lean|…`, the toml comment, the table, ACP's
        "README.md": [r"/mode \[([a-z|]+)\]", r'prompt_mode = "\w+" +# ([a-z |]+)'],
        "docs/usage.md": [r"`/mode ([a-z|]+)`"],
        "docs/configuration.md": [r"^\| `prompt_mode` \| [^|]+ \| ([^|]+) \|"],
        "docs/editors.md": [r"the prompt modes: ([a-z, ]+) \|"],
    }
    for page, patterns in lists.items():
        text = (ROOT / page).read_text(encoding="utf-8")
        for pattern in patterns:
            found = re.search(pattern, text, re.M)
            assert found, (page, pattern)
            written = re.findall(r"[a-z]+", found.group(1))
            assert tuple(written) == MODES, (page, written)
