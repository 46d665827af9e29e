"""Shell permissions: which commands run without asking (tree-sitter-bash parse + token-prefix rules)."""

from __future__ import annotations

import getopt
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.permissions import (
    GETOPT,
    GIT_WRITERS,
    LINK_FOLLOWERS,
    Assessment,
    CommandRules,
    check_rules,
    parse_options,
    parse_rule,
)
from myrm_tui.agent.tools import ToolContext
from myrm_tui.agent.tools.base import Approval
from myrm_tui.agent.tools.shell import BashTool
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import run_myrm

ROOT = Path(__file__).resolve().parents[2]
RULES = [
    "git status",
    "pytest",
    "echo",
    "cat",
    "ls",
    "cd",
    "grep",
    "sort",
    "uniq",
    "head",
    "wc",
    "printf",
    "test",
    "timeout 5 pytest",
]

# (command, runs without asking, a part of the reason shown when it asks)
CASES: list[tuple[str, bool, str]] = [
    # allowed: every simple command covered, joined only by && || ; | or newlines
    ("git status", True, ""),
    ("git status -s", True, ""),
    # a newline inside "…" is part of the word (tree-sitter leaves it out of the string's pieces)
    ('echo "two\nlines"', True, ""),
    ('git status -s"echo\necho"', True, ""),
    ("git status && pytest -q", True, ""),
    ("git status || echo failed", True, ""),
    ("git status; pytest", True, ""),
    ("git status\npytest -x", True, ""),
    ("git status | head -n 5", True, ""),
    ("git status | grep -v x | sort | uniq -c | head -n 5 | wc -l", True, ""),
    ('"pytest"', True, ""),
    ("p\\ytest -q", True, ""),
    ("'pytest' -q", True, ""),
    ("echo 'a;b' \"c|d\" e\\&f", True, ""),
    ("echo HEAD~1", True, ""),
    ("pytest > /dev/null 2>&1", True, ""),
    ("pytest 2>&1 | head -n 20", True, ""),
    ("git status # ; touch pwned", True, ""),
    ("cd sub && pytest", True, ""),
    ("timeout 5 pytest -x", True, ""),
    ("printf '%s\\n' a b", True, ""),
    # refused: not covered by a rule
    ("pytest; curl x | sh", False, "no rule allows it"),
    ("pytestx", False, "no rule allows it"),
    ("git statusx", False, "no rule allows it"),
    ("git push --force", False, "no rule allows it"),
    ("git status; touch pwned", False, "no rule allows it"),
    ("git status\ntouch pwned", False, "no rule allows it"),
    ("git status | sh", False, "no rule allows it"),
    ("git status && rm -rf .", False, "no rule allows it"),
    ("/usr/bin/git status", False, "no rule allows it"),
    # refused: wrappers run another command; only a rule naming them covers them
    ('sh -c "git status"', False, "no rule allows it"),
    ("bash -c 'git status'", False, "no rule allows it"),
    ("env git status", False, "no rule allows it"),
    ("xargs git status", False, "no rule allows it"),
    ("sudo git status", False, "no rule allows it"),
    ("nice git status", False, "no rule allows it"),
    ("timeout 9 pytest", False, "no rule allows it"),
    ("command git status", False, "no rule allows it"),
    # refused: substitutions and expansions
    ("echo $(touch pwned)", False, "command substitution $("),
    ("echo `touch pwned`", False, "command substitution `"),
    ("git $(echo status)", False, "command substitution"),
    ('echo "$(touch pwned)"', False, "command substitution"),
    ("echo >(touch pwned)", False, "process substitution"),
    ("cat <(ls)", False, "process substitution"),
    ("$CMD status", False, "variable expansion"),
    ('"$X" status', False, "variable expansion"),
    ("echo ${HOME}", False, "variable expansion"),
    ("echo $((1+2))", False, "arithmetic expansion"),
    ("echo $'\\x41'", False, "ANSI-C"),
    ("cat *.py", False, "glob pattern"),
    ("ls ?", False, "glob pattern"),
    ("g*t status", False, "glob pattern"),
    ("ls foo[ab]", False, "glob pattern"),
    ("echo {a,b}", False, "brace expansion"),
    ("cat ~/.ssh/id_rsa", False, "tilde expansion"),
    # refused: a write into a file the rule does not name (tests/agent/test_permissions_writes.py)
    ("echo hi > out.txt", False, "writes a file (> out.txt)"),
    ("echo hi >> sub/../log.txt 2>&1", False, "writes a file (>> sub/../log.txt)"),
    # refused: redirects outside the workspace
    ("echo x > /tmp/pwned", False, "redirect outside the workspace (/tmp/pwned)"),
    ("echo x > ../pwned", False, "redirect outside the workspace"),
    ("echo x &>> /etc/pwned", False, "redirect outside the workspace"),
    ("cat < /etc/passwd", False, "redirect outside the workspace"),
    ("echo x > ~/pwned", False, "redirect target is not a plain path (tilde"),
    ('git status > "$OUT"', False, "redirect target is not a plain path"),
    ("cd / && echo x > etc/pwned", False, "redirect after cd"),
    ("cat <<EOF\n$(touch pwned)\nEOF", False, "heredoc"),
    ("cat <<'EOF'\nx\nEOF", False, "heredoc"),
    ("cat <<< hi", False, "here-string"),
    # refused: structure
    ("git status &", False, "background"),
    ("git status & touch pwned", False, "background"),
    ("pytest |& cat", False, "|&"),
    ("pytestx ||", False, "could not be parsed"),
    ("git status |", False, "could not be parsed"),
    ("(git status)", False, "subshell"),
    ("{ git status; }", False, "command group"),
    ("! git status", False, "negation"),
    ("if true; then git status; fi", False, "if statement"),
    ("for f in a; do git status; done", False, "loop"),
    ("f() { touch pwned; }; git status", False, "function definition"),
    ("[ -f x ] && git status", False, "test expression"),
    ("git status\rtouch pwned", False, "control character"),
    ("gi\\\nt status", False, "line continuation inside a word"),
    ("", False, "no command"),
    # refused: code from arguments, changed shell, environment prefixes
    ("eval git status", False, "eval runs code"),
    ("exec git status", False, "exec runs code"),
    ("source ./env.sh", False, "source runs code"),
    (". ./env.sh", False, ". runs code"),
    ("export PATH=/tmp; git status", False, "declaration"),
    ('"export" PATH=/tmp', False, "export runs code"),
    ("PATH=/tmp git status", False, "sets PATH="),
    ("LD_PRELOAD=/tmp/x.so git status", False, "sets LD_PRELOAD="),
    ("X=1", False, "variable assignment"),
    ("printf -v 'a[$(touch pwned)]' x", False, "evaluates the subscript"),
    # the grammar hangs the words after `> file` on the redirect: they are still the command's words
    ("echo > out.txt $(touch pwned)", False, "command substitution"),
    ("printf > out.txt -v 'a[$(touch pwned)]' x", False, "evaluates the subscript"),
    ("'echo'\\x", False, "no rule allows it"),  # one word to bash: echox
    ("test -v 'a[$(touch pwned)]'", False, "evaluates the subscript"),
]


@pytest.mark.parametrize(("command", "allowed", "reason"), CASES, ids=[repr(c[0])[:60] for c in CASES])
def test_what_runs_without_asking(command: str, allowed: bool, reason: str, workspace: Path) -> None:
    verdict = CommandRules(RULES).assess(command, workspace)
    assert verdict.allowed is allowed, verdict
    if not allowed:
        assert any(reason in r for r in verdict.reasons), verdict.reasons


def _traced(stderr: str) -> list[tuple[str, ...]]:
    """The simple commands bash ran, from its ``-x`` trace. An argument holding a newline is traced in
    quotes over several lines: a line continues the entry before it while that entry's quote is open
    (any other line, such as bash's own error messages, is not part of the trace)."""

    def closed(entry: str) -> bool:
        try:
            shlex.split(entry)
        except ValueError:
            return False
        return True

    entries: list[str] = []
    for line in stderr.split("\n"):
        if entries and not closed(entries[-1]):
            entries[-1] += "\n" + line
        elif line.startswith("+ "):
            entries.append(line[2:])
    return [tuple(shlex.split(e)) for e in entries]


@pytest.mark.parametrize("command", [c for c, allowed, _ in CASES if allowed], ids=lambda c: repr(c)[:60])
def test_an_allowed_command_runs_exactly_the_words_the_parser_saw(
    command: str, workspace: Path, tmp_path: Path
) -> None:
    """Differential check against bash itself: `bash -x` traces each simple command after expansion."""
    shims = tmp_path / "bin"
    shims.mkdir()
    for name in {r.split()[0] for r in RULES} | {"tail"}:
        (shims / name).write_text(
            "#!/bin/sh\nexit 0\n"
        )  # nothing real runs; builtins (echo, cd) stay builtins
        (shims / name).chmod(0o755)
    (workspace / "sub").mkdir()
    verdict = CommandRules(RULES).assess(command, workspace)
    proc = subprocess.run(
        ["/bin/bash", "-x", "-c", command],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": str(shims), "PS4": "+ ", "HOME": str(tmp_path)},
    )
    traced = sorted(_traced(proc.stderr))
    parsed = sorted(c.tokens for c in verdict.commands if c.tokens is not None)
    if "||" in command:  # every shim succeeds, so what follows || is skipped
        assert traced and all(t in parsed for t in traced), proc.stderr
    else:
        assert traced == parsed, proc.stderr


WORDS = [
    "echo",
    "git status",
    "git status -s",
    "'echo'",
    '"git" status',
    "e\\cho",
    "touch pwned",
    "x",
    "pwned",
    "out.txt",
    "OUT/x",
    "../x",
    "'a;b'",
    '"a|b"',
    "\\;",
    "~",
    "*",
    "$x",
    "{a,b}",
    "#",
    "!",
    "=",
    "git",
]
JOINERS = [
    " ",
    ";",
    "; ",
    "|",
    " | ",
    "&&",
    "||",
    "\n",
    " > ",
    ">>",
    " 2>&1 ",
    " < ",
    "&",
    "|&",
    "$(",
    ")",
    "`",
    "(",
    "\\\n",
    "\r",
    "'",
    '"',
    "\\",
    "",
]


SOUP = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(JOINERS)), min_size=1, max_size=6)
SOUP_SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# make test's fixed sample (1,000 soups, ~20 of them allowed and run); the long twin runs 3,000.
@settings(SOUP_SETTINGS, max_examples=1000)
@given(SOUP)
def test_what_the_parser_allows_bash_runs_as_parsed(
    workspace: Path, tmp_path: Path, pieces: list[tuple[str, str]]
) -> None:
    """Random shell soup: whenever the rules allow it, bash (traced by -x) runs only the parsed commands
    with the parsed words, and writes nothing outside the workspace. About 2 % of the soup is allowed."""
    runs_as_parsed(workspace, tmp_path, pieces)


@pytest.mark.long
@settings(SOUP_SETTINGS, max_examples=3000)
@given(SOUP)
def test_long_what_the_parser_allows_bash_runs_as_parsed(
    workspace: Path, tmp_path: Path, pieces: list[tuple[str, str]]
) -> None:
    """The same property over 3,000 soups (``make test-long``)."""
    runs_as_parsed(workspace, tmp_path, pieces)


def runs_as_parsed(workspace: Path, tmp_path: Path, pieces: list[tuple[str, str]]) -> None:
    outside, shims = tmp_path / "outside", tmp_path / "bin"
    if not shims.exists():
        outside.mkdir()
        shims.mkdir()
        (shims / "git").write_text("#!/bin/sh\nexit 0\n")
        (shims / "touch").write_text(f"#!/bin/sh\n: > {outside}/touched\n")
        for shim in shims.iterdir():
            shim.chmod(0o755)
    command = "".join(w + j for w, j in pieces).replace("OUT/", f"{outside}/")
    verdict = CommandRules(["echo", "git status"]).assess(command, workspace)
    if not verdict.allowed:
        return
    proc = subprocess.run(
        ["/bin/bash", "-x", "-c", command],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": str(shims), "PS4": "+ ", "HOME": str(outside)},
    )
    parsed = [c.tokens for c in verdict.commands]
    traced = _traced(proc.stderr)
    assert all(t in parsed for t in traced), (command, proc.stderr)
    assert list(outside.iterdir()) == [], command


def test_the_table_is_broad() -> None:
    assert len(CASES) >= 40
    assert sum(a for _, a, _ in CASES) >= 15 and sum(not a for _, a, _ in CASES) >= 40


def test_quoted_and_escaped_words_are_normalised_to_their_literal_tokens(workspace: Path) -> None:
    verdict = CommandRules().assess('"git" \'sta\'tus p\\ath "a b" -m"x"', workspace)
    assert [c.tokens for c in verdict.commands] == [("git", "status", "path", "a b", "-mx")]
    assert verdict.commands[0].text == "git status path 'a b' -mx"


def test_words_are_split_where_bash_splits_them(workspace: Path) -> None:
    commands = CommandRules().assess("echo a > f b c; 'py'test\\s x 2>&1 y; cat >'o'ut z", workspace).commands
    assert [(c.tokens, c.text) for c in commands] == [
        (("echo", "a", "b", "c"), "echo a b c > f"),
        (("pytests", "x", "y"), "pytests x y 2>&1"),
        (("cat", "z"), "cat z >'o'ut"),
    ]


def test_each_simple_command_gets_a_line_that_says_why(workspace: Path) -> None:
    verdict = CommandRules(["git status"]).assess(
        "git status -s; touch pwned && echo $(id) > /tmp/x", workspace
    )
    lines = [(c.text, c.covered, c.reason) for c in verdict.commands]
    assert lines == [
        ("git status -s", True, None),
        ("touch pwned", False, "no rule allows it"),
        ("echo $(id) > /tmp/x", False, "command substitution $(…); redirect outside the workspace (/tmp/x)"),
    ]
    assert verdict.commands[0].rule == ("git", "status")


def test_a_symlink_out_of_the_workspace_is_outside(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "link").symlink_to(outside)
    verdict = CommandRules(["echo"]).assess("echo x > link/pwned", workspace)
    assert not verdict.allowed and "redirect outside the workspace (link/pwned)" in verdict.reasons[0]


def test_rules_are_token_prefixes(workspace: Path) -> None:
    rules = CommandRules(["git status", "npm run test"])
    assert rules.rule_for(["git", "status", "-s"]) == ("git", "status")
    assert rules.rule_for(["git", "statusx"]) is None
    assert rules.rule_for(["git"]) is None
    assert rules.rule_for(["npm", "run", "test:unit"]) is None
    assert rules.rule_for(["npm", "run", "test", "--", "-x"]) == ("npm", "run", "test")


def test_always_stores_the_full_tokens_the_prompt_showed(workspace: Path) -> None:
    rules = CommandRules(["pytest"])
    verdict = rules.assess("git push origin main && pytest -q; sudo make install; echo $(id)", workspace)
    assert verdict.to_remember == (("git", "push", "origin", "main"),)  # not sudo (a wrapper), not $(…)
    rules.remember(verdict)
    assert rules.assess("git push origin main --tags", workspace).allowed
    assert not rules.assess("git push --force", workspace).allowed
    assert not rules.assess("git push origin", workspace).allowed
    rebuilt = rules.with_configured(["ls"])  # new settings keep the session's approvals
    assert (
        rebuilt.assess("git push origin main", workspace).allowed
        and rebuilt.assess("ls -la", workspace).allowed
    )
    assert not rebuilt.assess("pytest", workspace).allowed
    assert CommandRules().assess("env", workspace).to_remember == ()  # `env` as a rule would cover `env rm …`


def test_a_string_is_not_a_list_of_rules() -> None:
    with pytest.raises(TypeError, match="allowed_commands must be a list"):
        CommandRules("git status")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a string"):
        CommandRules([3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="one command"):
        CommandRules(["git status; rm -rf ."])
    with pytest.raises(ValueError, match="must not be empty"):
        CommandRules(["  "])
    with pytest.raises(ValueError, match="cannot be split"):
        CommandRules(["git 'status"])
    assert parse_rule("git commit -m 'a b'") == ("git", "commit", "-m", "a b")
    assert check_rules("git status") == [
        "allowed_commands must be a list of strings, not a string ('git status')"
    ]
    assert check_rules(["git status", ""]) == ["an allowed_commands rule must not be empty"]


SMUGGLED = [
    "git status; touch pwned",
    "git status && touch pwned",
    "git status | touch pwned",
    "git status\ntouch pwned",
    "git status $(touch pwned)",
    "git status `touch pwned`",
    "git status > ../pwned",
    "git status & touch pwned",
    "git status >(touch pwned)",
    "git statusx || touch pwned",
    "PATH=. git status; touch pwned",
    'git status "$(touch pwned)"',
    "git status\rtouch pwned",
    "eval 'touch pwned'",
    "sh -c 'touch pwned'",
    "git status > /tmp/../$(touch pwned)",
    "cat <<EOF\n$(touch pwned)\nEOF",
    "git status |& touch pwned",
]


async def test_smuggled_commands_never_run_without_an_approver(workspace: Path) -> None:
    ctx = ToolContext(
        workspace=workspace,
        vault=ArtifactVault("s"),
        allowed_commands=CommandRules(["git status", "cat"]),
        bash_timeout=10,
    )
    for command in SMUGGLED:
        res = await BashTool().run({"command": command}, ctx)
        assert res.meta.get("declined"), command
    assert not (workspace / "pwned").exists() and not (workspace.parent / "pwned").exists()
    assert not (Path.cwd() / "pwned").exists()


async def test_the_approver_sees_the_assessment_and_always_remembers_it(workspace: Path) -> None:
    seen: list[Assessment] = []

    async def approver(tool: str, command: str, assessment: Assessment) -> Approval:
        seen.append(assessment)
        return "always"

    ctx = ToolContext(
        workspace=workspace,
        vault=ArtifactVault("s"),
        approver=approver,
        allowed_commands=CommandRules(["git status"]),
        bash_timeout=10,
    )
    # printf, not echo: echo is read-only and needs no rule
    assert "made" in (await BashTool().run({"command": "git status; printf '%s ' made"}, ctx)).content
    assert [c.text for c in seen[0].commands if not c.covered] == ["printf '%s ' made"]
    assert "again" in (await BashTool().run({"command": "printf '%s ' made again"}, ctx)).content
    assert len(seen) == 1 and ctx.allowed_commands.session == [("printf", "%s ", "made")]


def test_ask_without_yes_never_runs_a_smuggled_command(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """`myrm ask` (no TTY, no --yes) with allowed_commands = ["git status"]: only git status runs."""
    config = tmp_path / "config.toml"
    config.write_text('allowed_commands = ["git status"]\n')
    target = workspace / "pwned"
    variants = [*SMUGGLED, f"git status; touch {target}", f"git status > {tmp_path / 'pwned-outside'}"]
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": c}) for c in variants]), Reply(text="Tried them all.")
    )
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "git status -s"})]), Reply(text="Status shown."))
    env = {
        **os.environ,
        "MYRM_DB": str(tmp_path / "ask.db"),
        "MYRM_CONFIG": str(config),
        "OPENAI_API_KEY": "sk-test",
    }
    base = [
        "ask",
        "--model",
        "openai/gpt-4o-mini",
        "--api-base",
        emulator.openai_base,
        "--workspace",
        str(workspace),
    ]
    first = run_myrm([*base, "try these"], env=env, cwd=workspace)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Tried them all."
    assert first.stderr.count("[declined, non-interactive:") == len(variants), first.stderr
    assert "needs approval: touch pwned: no rule allows it" in first.stderr
    assert (
        not target.exists()
        and not (tmp_path / "pwned").exists()
        and not (tmp_path / "pwned-outside").exists()
    )
    assert not (ROOT / "pwned").exists()
    second = run_myrm([*base, "status please"], env=env, cwd=workspace)
    assert second.returncode == 0 and "[declined" not in second.stderr, second.stderr  # the rule itself works
    assert "[tool done] exit " in second.stderr  # it ran (ask prints the exit code in words)


# --- one normalisation of options (issue 44): GNU getopt's long-option prefixes, attached values ---------

GNU = sorted(c for c, spec in GETOPT.items() if spec.prefixes)  # rg takes no prefixes: exact names only
NAMED_LONGS = sorted((c, o) for c in GNU for o in GETOPT[c].longs)
DANGEROUS = {(c, o) for c, names in LINK_FOLLOWERS.items() for o in names if o.startswith("--")} | {
    ("git", o) for o in GIT_WRITERS if o.startswith("--")
}
PLAIN_SHORTS = "Rlino"  # short flags without a value (in these tests)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_every_prefix_of_every_long_option_the_rules_name_is_read_as_that_option(
    workspace: Path, data: st.DataObject
) -> None:
    name, option = data.draw(st.sampled_from(NAMED_LONGS))
    spec = GETOPT[name]
    typed = option[: data.draw(st.integers(3, len(option)))]  # "--d" … "--dereference-recursive"
    form = data.draw(st.sampled_from(["bare", "=value", "value"]))
    words = {"bare": [typed], "=value": [typed + "=hello.py"], "value": [typed, "hello.py"]}[form]
    plain = [f"-{c}" for c in PLAIN_SHORTS if c not in spec.short_values]
    before = data.draw(st.lists(st.sampled_from(["hello.py", "x", *plain]), max_size=3))
    after = data.draw(st.lists(st.sampled_from(["hello.py", *plain]), max_size=2))
    options, _ = parse_options([*before, *words, *after], spec)
    exact = typed if typed in spec.longs else option  # `--exclude` is itself, not `--exclude-dir`
    assert any(exact in o.names for o in options), (typed, options)
    if (name, exact) in DANGEROUS:
        line = shlex.join([name, *(["diff"] if name == "git" else []), *before, *words, *after])
        assert not CommandRules().assess(line, workspace).allowed, line


# make test runs a fixed 100 command lines; the long twin 300 new ones.
@settings(max_examples=100, deadline=None)
@given(st.data())
def test_the_normalisation_reads_options_as_gnu_getopt_does(data: st.DataObject) -> None:
    """Python's ``getopt.gnu_getopt`` implements GNU's rules (unambiguous prefixes, exact name first,
    ``=value`` or the next word, clusters, attached short values, permutation, ``--``): given the same
    option table, wherever it accepts a command line it reads the same options, values and operands."""
    reads_as_gnu_getopt(data)


@pytest.mark.long
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_long_the_normalisation_reads_options_as_gnu_getopt_does(data: st.DataObject) -> None:
    """The same property over 300 command lines (``make test-long``)."""
    reads_as_gnu_getopt(data)


def reads_as_gnu_getopt(data: st.DataObject) -> None:
    spec = GETOPT[data.draw(st.sampled_from(GNU))]
    shorts = {c for c in PLAIN_SHORTS if c not in spec.short_values} | set(spec.short_values)
    long_prefix = st.sampled_from(sorted(spec.longs) or ["--x"]).flatmap(
        lambda o: st.integers(3, len(o)).map(lambda k: o[:k])
    )
    word = st.one_of(
        long_prefix,
        long_prefix.map(lambda p: p + "=v"),
        st.text(alphabet="".join(sorted(shorts)), min_size=1, max_size=3).map(lambda t: "-" + t),
        st.text(alphabet="".join(sorted(shorts)), min_size=1, max_size=2).map(lambda t: "-" + t + "VAL"),
        st.sampled_from(["x", "hello.py", "-", "--", "--x"]),
    )
    args = data.draw(st.lists(word, max_size=6))
    shortopts = "".join(c + (":" if c in spec.short_values else "") for c in sorted(shorts))
    longopts = [o[2:] + ("=" if o in spec.long_values else "") for o in sorted(spec.longs)]
    try:
        expected, operands = getopt.gnu_getopt(args, shortopts, longopts)
    except getopt.GetoptError:
        assume(False)  # getopt refuses the line (ambiguous, unknown, a value missing): the command fails
    options, ours = parse_options(args, spec)
    assert ours == operands
    assert [(set(o.names), o.value or "") for o in options] == [({n}, v) for n, v in expected]
