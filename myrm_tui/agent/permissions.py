"""Which shell commands run without asking: a bash parse of the command, checked against allow rules.

A command runs unasked only when every simple command in it is covered by a rule and the script has
nothing but plain words joined by ``&&``, ``||``, ``;``, ``|`` or newlines: no substitution, subshell,
group, background ``&``, ``|&``, environment prefix, heredoc, or redirect outside the workspace.
Anything else asks, and the prompt shows each parsed command with the reason it is not covered.

A rule is a command and its leading arguments as tokens (``git status`` covers ``git status -s``, not
``git statusx`` nor ``git push``). "Always" remembers, for the session, the full tokens of each command
the user saw (as Codex CLI remembers the exact command it approved); wrappers that run another command
(``env``, ``sudo``, ``xargs``, ``sh``...) are never remembered, since their rule would cover anything.

Why tree-sitter-bash: it is a real, maintained grammar of bash (the one editors and GitHub use), so
``$(…)``, backticks, ``>(…)``, heredocs and quoting come out as typed nodes instead of guesses.
``shlex`` only splits words — it sees ``;`` inside ``a;b`` as part of a word and knows no
substitution; ``bashlex`` is a partial port of bash's parser, unmaintained and incomplete for
constructs like ``>(…)`` or ``|&``. Codex CLI makes the same choice for its safe-command check
(``codex-rs/core/src/bash.rs``). Grammar and bash can still disagree at the edges, so this module
accepts only a small allow-list of node kinds and treats every other node, and every parse error, as
"ask".

A redirect into a file is a write: a rule covers it only when the rule names it (``pytest > report.txt``);
``/dev/null`` and descriptor copies (``2>&1``) are not writes. A named write in a line whose other commands
may change files asks too: ``git checkout x && echo k >> out/keys`` can turn ``out`` into a symlink after
the target was checked. A few read-only commands (``READ_ONLY``) run without a rule, within the workspace;
their options are read as the command reads them (``parse_options``: long options by unambiguous prefix,
attached values), and they run in the OS sandbox (``sandbox.py``) with git's program settings made inert
(``git_hardening_env``): these rules decide what needs asking, the sandbox is the boundary.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Protocol

from tree_sitter import Language, Node, Parser

from myrm_tui.paths import private_in, private_paths

# Builtins and keywords that run code from their arguments, evaluate array subscripts in them (bash runs
# the `$(…)` in `read 'a[$(cmd)]'`) or change how later commands resolve: always ask, whatever the rules say.
SHELL_EVALUATORS = frozenset(
    {
        "eval",
        "exec",
        "source",
        ".",
        "trap",
        "enable",
        "hash",
        "alias",
        "unalias",
        "set",
        "shopt",
        "coproc",
        "let",
        "read",
        "mapfile",
        "readarray",
        "getopts",
        "export",
        "declare",
        "typeset",
        "local",
        "readonly",
        "unset",
    }
)
# These evaluate a subscript only in an argument like `a[…]` (`printf -v`, `test -v`, `wait -p`).
SUBSCRIPT_EVALUATORS = frozenset({"test", "printf", "wait"})
# Commands that run another command given as arguments. Covered only by a rule that names them; never
# remembered by "always" (a rule `env` would cover `env rm -rf ~`).
WRAPPERS = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "env",
        "xargs",
        "sudo",
        "doas",
        "su",
        "nice",
        "ionice",
        "timeout",
        "nohup",
        "time",
        "command",
        "builtin",
        "stdbuf",
        "setsid",
        "chroot",
        "flock",
        "watch",
        "strace",
        "ltrace",
        "unbuffer",
        "parallel",
        "busybox",
        "script",
    }
)
DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})
SAFE_TARGETS = frozenset({"/dev/null"})
WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})

# Commands that only read, run without a rule when every path argument is inside the workspace, no `cd`
# came before them in the line and they write no file. `git` ones only while the workspace's git config
# sets nothing that runs a program (the file tools can write `.git/config`).
READ_ONLY = frozenset({"cat", "ls", "head", "tail", "wc", "pwd", "echo", "grep", "rg", "find"})
READ_ONLY_GIT = frozenset({"status", "log", "diff", "show", "branch"})
# Of those, the ones that never open their operands (they list or print names).
NAMES_ONLY = frozenset({"ls", "pwd", "echo", "find"})
FIND_ACTIONS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
# Options that write a file or run a configured program (option names as ``parse_options`` gives them).
GIT_WRITERS = frozenset({"--output", "--ext-diff", "--textconv", "-o"})
# Options that make a command follow symbolic links while it walks a tree: the walk then reads wherever a
# link inside the workspace points (`grep -R x .` with `ws/dirlink -> $HOME`). The path check only sees the
# words of the command line, so these never run unasked. `--files0-from` reads file names from a file.
LINK_FOLLOWERS = {
    "grep": frozenset({"-R", "--dereference-recursive"}),
    "ls": frozenset({"-L", "--dereference"}),
    "rg": frozenset({"-L", "--follow"}),
    "wc": frozenset({"--files0-from"}),
}
FIND_FOLLOWERS = frozenset({"-L", "-follow", "-files0-from"})
# ripgrep's flags are allow-listed, not deny-listed: several run programs (`--pre`, `--hostname-bin`,
# `--search-zip`'s decompressors) and each release may add one. Short flags may be clustered (`-inw`).
RG_SHORT = frozenset("0abcFhHiIlnNopPqsSuUvVwxABCdeEfgjmMrtT")
RG_SHORT_VALUE = frozenset("ABCdeEfgjmMrtT")  # take a value (attached or the next word)
RG_LONG = frozenset(
    "--" + flag
    for flag in """
    after-context auto-hybrid-regex before-context binary block-buffered byte-offset case-sensitive
    color colors column context context-separator count count-matches crlf debug dfa-size-limit
    encoding engine field-context-separator field-match-separator file files files-with-matches
    files-without-match fixed-strings glob glob-case-insensitive heading help hidden iglob ignore
    ignore-case ignore-file ignore-file-case-insensitive include-zero invert-match json
    line-buffered line-number line-regexp max-columns max-columns-preview max-count max-depth
    max-filesize mmap multiline multiline-dotall no-binary no-column no-config no-filename
    no-heading no-hidden no-ignore no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global
    no-ignore-messages no-ignore-parent no-ignore-vcs no-json no-line-number no-messages no-mmap
    no-pcre2-unicode no-require-git no-text no-unicode null null-data one-file-system only-matching
    passthru path-separator pcre2 pretty quiet regex-size-limit regexp replace smart-case sort sortr
    stats text threads trace trim type type-list type-not unrestricted version vimgrep with-filename
    word-regexp
""".split()  # noqa: SIM905 (a list of 100 flags reads better as words)
)
RG_LONG_VALUE = frozenset(
    "--" + flag
    for flag in """
    after-context before-context color colors context context-separator dfa-size-limit encoding
    engine field-context-separator field-match-separator file glob iglob ignore-file max-columns
    max-count max-depth max-filesize path-separator regex-size-limit regexp replace sort sortr
    threads type type-not
""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Getopt:
    """How a command reads its options. GNU ``getopt_long`` and git's ``parse-options`` take any unambiguous
    prefix of a long option (``--der`` is ``--dereference-recursive``), ``--opt=value`` or ``--opt value``,
    clustered short options (``-inR``) and a short option's value attached (``-fFILE``) or next. ripgrep
    takes no prefixes (``prefixes=False``).

    Only options whose name matters are listed: the dangerous ones and those that take a value. A prefix
    is read as every listed option it begins (getopt itself refuses an ambiguous one: asking is then
    harmless). An option marked as taking a value when it does not would hide the next word from the
    checks, so only options that *require* one are marked; one left unmarked only makes its value look
    like an option or an operand, which the checks then see too."""

    long_values: frozenset[str] = frozenset()  # "--file": takes a value
    short_values: frozenset[str] = frozenset()  # "f": takes a value
    named: frozenset[str] = frozenset()  # other options that matter ("--dereference-recursive", "-R")
    prefixes: bool = True

    @property
    def longs(self) -> frozenset[str]:
        return frozenset(o for o in self.long_values | self.named if o.startswith("--"))


def _opts(words: str) -> frozenset[str]:
    return frozenset("--" + w for w in words.split())


GETOPT = {
    "grep": Getopt(
        _opts(
            "regexp file max-count label after-context before-context context binary-files devices "
            "directories exclude exclude-from exclude-dir include group-separator"
        ),
        frozenset("efmABCdD"),
        LINK_FOLLOWERS["grep"],
    ),
    "ls": Getopt(
        _opts(
            "block-size format hide ignore indicator-style quoting-style sort tabsize time time-style width"
        ),
        frozenset("ITw"),
        LINK_FOLLOWERS["ls"],
    ),
    "wc": Getopt(_opts("files0-from")),
    "head": Getopt(_opts("bytes lines"), frozenset("cn")),
    "tail": Getopt(_opts("bytes lines pid sleep-interval max-unchanged-stats"), frozenset("cns")),
    "cat": Getopt(),
    "git": Getopt(_opts("output"), frozenset("O"), GIT_WRITERS),
    "rg": Getopt(RG_LONG_VALUE, RG_SHORT_VALUE, RG_LONG | LINK_FOLLOWERS["rg"], prefixes=False),
}


@dataclass(frozen=True)
class Option:
    """One option as the command reads it: every name it may stand for (``--der`` -> the long options it
    begins), and its value (attached or the next word)."""

    names: frozenset[str]
    value: str | None
    word: str  # as typed (the first word when the value is the next one)


def long_names(typed: str, spec: Getopt) -> frozenset[str]:
    """What ``--typed`` (no ``=value``) stands for: the exact option, else every listed option it is a
    prefix of, else itself (an option the spec does not list)."""
    if typed in spec.longs or not spec.prefixes:
        return frozenset({typed})
    # guard: options-long-options-by-unambiguous
    found = frozenset(o for o in spec.longs if o.startswith(typed))
    return found or frozenset({typed})


def parse_options(args: Sequence[str], spec: Getopt) -> tuple[list[Option], list[str]]:
    """``args`` as the command reads them: its options and its operands (the one normalisation of every
    flag check). Options may follow operands (GNU permutes them); ``--`` ends the options."""
    options: list[Option] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            operands += args[i:]
            break
        if a.startswith("--"):
            typed, eq, value = a.partition("=")
            names = long_names(typed, spec)
            if not eq and names & spec.long_values and i < len(args):
                value, eq = args[i], "="
                i += 1
            options.append(Option(names, value if eq else None, a))
        elif a.startswith("-") and len(a) > 1:
            for k, ch in enumerate(a[1:], 1):
                # guard: options-a-short-options-attached-value
                if ch in spec.short_values:
                    value = a[k + 1 :]
                    if not value and i < len(args):
                        value = args[i]
                        i += 1
                    options.append(Option(frozenset({"-" + ch}), value, a))
                    break
                options.append(Option(frozenset({"-" + ch}), None, a))
        else:
            operands.append(a)
    return options, operands


def has_option(options: Sequence[Option], wanted: frozenset[str]) -> bool:
    return any(o.names & wanted for o in options)


GIT_BRANCH_LIST = frozenset(
    {"-a", "-r", "-l", "-v", "-vv", "--all", "--remotes", "--list", "--show-current", "--no-color", "--color"}
)
GIT_CONFIG_RUNS = re.compile(
    r"fsmonitor|textconv|external|pager|hook|sshcommand|include|editor|askpass|command|filter|program", re.I
)

# Node kinds that can never run unasked, as the prompt names them.
STRUCTURE = {
    "subshell": "subshell ( … )",
    "compound_statement": "command group { … }",
    "negated_command": "negation !",
    "if_statement": "if statement",
    "while_statement": "loop",
    "for_statement": "loop",
    "c_style_for_statement": "loop",
    "case_statement": "case statement",
    "function_definition": "function definition",
    "test_command": "test expression [ … ]",
    "declaration_command": "declaration (export/declare/local/readonly)",
    "unset_command": "unset",
    "variable_assignment": "variable assignment",
}
EXPANSIONS = {
    "simple_expansion": "variable expansion $…",
    "expansion": "variable expansion ${…}",
    "$": "variable expansion $…",
    "arithmetic_expansion": "arithmetic expansion $(( … ))",
    "process_substitution": "process substitution",
    "ansi_c_string": "ANSI-C string $'…'",
    "translated_string": 'translated string $"…"',
    "brace_expression": "brace expansion {…}",
}
CONTINUATION_IN_WORD = re.compile(r"[^\s\\](?:\\\\)*\\\n")
NUMBER = re.compile(r"[0-9A-Za-z_#+-]+")
WORD_SPECIAL = {
    "*": "glob pattern",
    "?": "glob pattern",
    "[": "glob pattern",
    "{": "brace expansion",
    "}": "brace expansion",
    "$": "variable expansion $…",
    "`": "command substitution `…`",
}
WORD_FORBIDDEN = set("'\"();&|<> \t\n")


@cache
def _parser() -> Parser:
    import tree_sitter_bash

    return Parser(Language(tree_sitter_bash.language()))


@dataclass(frozen=True)
class ParsedCommand:
    """One simple command as the prompt shows it. ``tokens`` is None when a word is not a plain literal."""

    text: str
    tokens: tuple[str, ...] | None
    problems: tuple[str, ...] = ()  # reasons no rule can cover it
    rule: tuple[str, ...] | None = None  # the rule that covers it
    rememberable: bool = False  # "always" may store its tokens as a rule
    writes: tuple[str, ...] = ()  # redirects into files, as `write_label` spells them ("> out.txt")
    read_only: bool = False  # a READ_ONLY command within the workspace (no rule needed)
    unnamed: tuple[str, ...] = ()  # writes its rule does not name ("always" adds them to the rule)

    @property
    def covered(self) -> bool:
        return (self.rule is not None or (self.read_only and not self.writes)) and not (
            self.problems or self.unnamed
        )

    @property
    def reason(self) -> str | None:
        """Why this command needs approval, or None when a rule covers it."""
        why = list(self.problems)
        if self.unnamed:
            why.append(f"writes a file ({', '.join(self.unnamed)}) its rule does not name")
        elif self.rule is None and self.read_only and self.writes:
            why.append(f"writes a file ({', '.join(self.writes)})")
        if why:
            return "; ".join(why)
        return None if self.rule is not None or self.read_only else "no rule allows it"


@dataclass(frozen=True)
class Assessment:
    """The verdict on one shell command: its simple commands and the problems of the script around them."""

    command: str
    commands: tuple[ParsedCommand, ...]
    problems: tuple[str, ...] = ()  # script-wide: background, |&, parse errors

    @property
    def allowed(self) -> bool:
        # guard: shell-every-simple-command-covered
        return bool(self.commands) and not self.problems and all(c.covered for c in self.commands)

    @property
    def read_only(self) -> bool:
        """It runs unasked because every part only reads (no rule involved): the read-only sandbox's case."""
        return self.allowed and all(c.read_only and not c.writes for c in self.commands)

    @property
    def to_remember(self) -> tuple[tuple[str, ...], ...]:
        """The rules "always" adds: the tokens of each uncovered command that may be remembered."""
        out: list[tuple[str, ...]] = []
        for c in self.commands:
            if c.rememberable and c.tokens and (c.rule is None or c.unnamed) and c.tokens not in out:
                out.append(c.tokens)
        return tuple(out)

    @property
    def reasons(self) -> list[str]:
        """One line per problem, for places without the full prompt (``myrm ask``)."""
        return [f"{c.text}: {c.reason}" for c in self.commands if c.reason] + list(self.problems)

    @property
    def warnings(self) -> list[str]:
        """Destructive or remote-code patterns, for the prompt to flag (they ask like any other command)."""
        return destructive(self.command, self.commands)


def parse_rule(rule: str) -> tuple[str, ...]:
    """A rule string as tokens (shlex); a rule is one command with its leading arguments, nothing more."""
    return split_rule(rule)[0]


def split_rule(rule: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """A rule's tokens and the file writes it names: ``pytest > report.txt`` covers ``pytest -q >
    report.txt``; only the redirects are parsed by the shell grammar, the words by shlex as before."""
    if isinstance(rule, str) and ">" in rule:
        parsed = parse_command(rule, Path("/"))
        if len(parsed.commands) == 1 and not parsed.problems:
            c = parsed.commands[0]
            # the words before the first redirect, without its descriptor (`2>`, `&>`: touching the `>`)
            words = re.sub(r"(?<=\s)(\d+|&)$", "", rule[: rule.index(">")]).rstrip()
            if c.tokens and not c.problems and words and _rule_tokens(words) == c.tokens:
                return c.tokens, frozenset(c.writes)
        raise ValueError(
            f"allowed_commands rule {rule!r} must be one command and its arguments, then redirects "
            "such as > file (no ; | & < ( ))"
        )
    return _rule_tokens(rule), frozenset()


def _rule_tokens(rule: str) -> tuple[str, ...]:
    if not isinstance(rule, str):
        raise TypeError(f"an allowed_commands rule must be a string, not {type(rule).__name__}: {rule!r}")
    lexer = shlex.shlex(rule, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = tuple(lexer)
    except ValueError as e:
        raise ValueError(f"allowed_commands rule {rule!r} cannot be split into words: {e}") from None
    if not tokens:
        raise ValueError("an allowed_commands rule must not be empty")
    if any(t and set(t) <= set("();<>|&") for t in tokens):
        raise ValueError(
            f"allowed_commands rule {rule!r} must be one command and its arguments, without ; | & < > ( )"
        )
    return tokens


# The allow rule for file edits: ``allowed_commands = ["file_edit_tool"]`` lets edits run unasked (as
# Claude Code's "Edit" rule), and "always" on an edit adds it for the session.
EDIT_RULE = ("file_edit_tool",)


class CommandRules:
    """Allow rules from the config (``allowed_commands``, a list of strings) plus those "always" adds."""

    def __init__(
        self,
        configured: Sequence[str] = (),
        session: list[tuple[str, ...]] | None = None,
        session_writes: dict[tuple[str, ...], frozenset[str]] | None = None,
    ) -> None:
        if isinstance(configured, str | bytes):
            raise TypeError(
                f'allowed_commands must be a list of command rules such as ["git status", "pytest"], '
                f"not a string ({configured!r})"
            )
        split = [split_rule(r) for r in configured]
        self.configured = tuple(tokens for tokens, _ in split)
        self.session = session if session is not None else []  # shared by agents rebuilt from this one
        # rule -> the file writes it names (the session's dict is shared like ``session``)
        self.session_writes = session_writes if session_writes is not None else {}
        self.named: dict[tuple[str, ...], frozenset[str]] = {}
        for tokens, writes in split:
            self.named[tokens] = self.named.get(tokens, frozenset()) | writes

    def with_configured(self, configured: Sequence[str]) -> CommandRules:
        """New configured rules, the same session approvals."""
        return CommandRules(configured, self.session, self.session_writes)

    def writes_named(self, rule: tuple[str, ...]) -> frozenset[str]:
        return self.named.get(rule, frozenset()) | self.session_writes.get(rule, frozenset())

    @property
    def rules(self) -> tuple[tuple[str, ...], ...]:
        return self.configured + tuple(self.session)

    def rule_for(self, tokens: Sequence[str], writes: Sequence[str] = ()) -> tuple[str, ...] | None:
        """The first rule that covers ``tokens`` and names every one of ``writes``; else the first that
        covers the tokens."""
        matching = []
        for rule in self.rules:
            # guard: shell-rules-are-token-prefixes
            if tuple(tokens[: len(rule)]) == rule:
                matching.append(rule)
        for rule in matching:
            if set(writes) <= self.writes_named(rule):
                return rule
        return matching[0] if matching else None

    def edits_allowed(self) -> bool:
        return EDIT_RULE in self.rules

    def allow_edits(self) -> None:
        if EDIT_RULE not in self.session:
            self.session.append(EDIT_RULE)

    def remember(self, assessment: Assessment) -> None:
        for c in assessment.commands:
            if c.tokens is None or c.tokens not in assessment.to_remember:
                continue
            if c.tokens not in self.session:
                self.session.append(c.tokens)
            if c.writes:  # the user saw the write in the prompt: it is part of what they allowed
                self.session_writes[c.tokens] = self.session_writes.get(c.tokens, frozenset()) | set(c.writes)

    def assess(self, command: str, workspace: Path) -> Assessment:
        parsed = parse_command(command, workspace)
        commands = []
        for c in parsed.commands:
            rule = self.rule_for(c.tokens, c.writes) if c.tokens else None
            # guard: shell-a-write-needs-a-rule-that-names-it
            unnamed = tuple(w for w in c.writes if rule is None or w not in self.writes_named(rule))
            commands.append(replace(c, rule=rule, unnamed=unnamed if rule is not None else ()))
        return Assessment(command, tuple(commands), parsed.problems)


def parse_command(command: str, workspace: Path) -> Assessment:
    """The simple commands of ``command`` and what keeps each from running unasked (no rules applied)."""
    # A lone surrogate (JSON's "\udcff") encodes too: it is no printable character, so the command asks.
    # guard: a-lone-surrogate-in-a-command-asks
    walker = _Walker(command.encode("utf-8", "surrogatepass"), workspace.resolve())
    # bash and the grammar split words differently around these (bash keeps a carriage return in a word,
    # the grammar treats it as a space; a backslash-newline inside a word joins it in bash, splits it here).
    if any(not ch.isprintable() and ch not in "\n\t" for ch in command):
        walker.problems.append("control character in the command")
    if CONTINUATION_IN_WORD.search(command):
        walker.problems.append("line continuation inside a word")
    tree = _parser().parse(walker.source)
    root = tree.root_node
    if root.has_error:
        walker.problems.append("the shell syntax could not be parsed")
    walker.program(root)
    if not walker.commands and not walker.problems:
        walker.problems.append("no command")
    # guard: shell-a-write-beside-a-command-that-may
    return Assessment(
        command, tuple(_check_line_writes(walker.commands)), tuple(dict.fromkeys(walker.problems))
    )


def _check_line_writes(commands: list[ParsedCommand]) -> list[ParsedCommand]:
    """A write's target was checked before anything ran: another command of the line (before it, or
    beside it in a pipeline) that may change files could move it (a checkout that turns a folder into a
    symlink). Only read-only commands and ``cd`` are known not to."""
    out = []
    for i, c in enumerate(commands):
        others = [o for j, o in enumerate(commands) if j != i]
        if (
            c.writes
            and not c.problems
            and any(
                not (o.tokens and (o.read_only or o.tokens[0] in DIRECTORY_CHANGERS)) or o.writes
                for o in others
            )
        ):
            problem = f"writes {', '.join(c.writes)} in a line whose other commands may change files"
            c = replace(c, problems=(*c.problems, problem), rememberable=c.rememberable)
        out.append(c)
    return out


@dataclass
class _Walker:
    source: bytes
    workspace: Path
    commands: list[ParsedCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    changed_directory: bool = False

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode(errors="replace")

    def program(self, node: Node) -> None:
        for child in node.children:
            if child.is_named:
                self.statement(child)
            elif child.type == "&":
                # guard: shell-background-refused
                self.problems.append("runs in the background (&)")
            elif child.type not in (";", "\n"):
                self.problems.append(f"unsupported shell syntax {child.type!r}")

    def statement(self, node: Node, trailing: Sequence[Node] = ()) -> None:
        """Walk one statement; ``trailing`` are redirects the grammar hung on an enclosing list or
        pipeline."""
        kind = node.type
        if kind == "comment" or node.start_byte == node.end_byte:  # a word the parser supplied (MISSING)
            return
        if kind == "command":
            self.simple(node, list(trailing))
        elif kind == "redirected_statement":
            body = node.child_by_field_name("body")
            redirects = [c for c in node.children if c.is_named and c != body and c.type != "comment"]
            if body is not None and body.type in ("command", "list", "pipeline"):
                # The grammar gives `a && b > x` to the whole list; bash gives `> x` to `b`, the last command.
                self.statement(body, [*redirects, *trailing])
            else:
                problems = [
                    STRUCTURE.get(body.type, f"unsupported shell syntax ({body.type})")
                    if body
                    else "redirect without a command"
                ]
                problems += [p for r in [*redirects, *trailing] for p in self.redirect(r)]
                self.commands.append(ParsedCommand(self.text(node), None, tuple(problems)))
        elif kind in ("list", "pipeline"):
            joiners = ("&&", "||") if kind == "list" else ("|",)
            last = max((i for i, c in enumerate(node.children) if c.is_named), default=-1)
            for i, child in enumerate(node.children):
                if child.is_named:
                    self.statement(child, trailing if i == last else ())
                elif child.type == "|&":
                    self.problems.append("pipes stderr too (|&)")
                elif child.type not in joiners:
                    self.problems.append(f"unsupported shell syntax {child.type!r}")
        else:
            reason = STRUCTURE.get(
                kind,
                "the shell syntax could not be parsed"
                if kind == "ERROR"
                else f"unsupported shell syntax ({kind})",
            )
            problems = [reason, *(p for r in trailing for p in self.redirect(r))]
            self.commands.append(ParsedCommand(self.text(node), None, tuple(problems)))

    def simple(self, node: Node, outer_redirects: list[Node]) -> None:
        words: list[list[Node]] = []  # bash words: nodes with no space between them are one word
        word_problems: list[str] = []  # the command has no literal tokens: no rule can match it

        def add(child: Node) -> None:
            if words and words[-1][-1].end_byte == child.start_byte:
                words[-1].append(child)  # `'echo'\x` is one word to bash, two nodes to the grammar
            else:
                words.append([child])

        redirects: list[Node] = []
        for child in [*node.children, *outer_redirects]:
            if child.type == "variable_assignment":
                var = child.child_by_field_name("name")
                word_problems.append(f"sets {self.text(var) if var else 'a variable'}= for the command")
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                redirects.append(child)
                # The grammar hangs the words after `> file` on the redirect; bash gives them to the command.
                # guard: shell-words-after-a-redirect-target-are
                for extra in _split_target(child)[1]:
                    add(extra)
            elif child.type != "comment":
                add(child)
        tokens: list[str] = []
        for group in words:
            value, why = self.literal_group(group)
            if why:
                word_problems.append(why)
            else:
                tokens.append(value)
        problems = list(word_problems)
        name = tokens[0] if tokens and not word_problems else None
        if name in SHELL_EVALUATORS:
            problems.append(f"{name} runs code from its arguments or changes the shell")
        elif name in SUBSCRIPT_EVALUATORS and any("[" in t for t in tokens[1:]):
            problems.append(f"{name} evaluates the subscript in an argument like a[…]")
        for r in redirects:
            problems += self.redirect(r)
        writes = tuple(w for r in redirects if (w := self.write_label(r)))
        read_only = (
            not problems
            and bool(tokens)
            and not self.changed_directory
            and read_only_command(tuple(tokens), self.workspace)
        )
        if name in DIRECTORY_CHANGERS:
            self.changed_directory = True
        literal = not word_problems and bool(tokens)
        head = shlex.join(tokens) if literal else self.text(node)
        shown = redirects if literal else outer_redirects
        text = " ".join([head, *filter(None, (self.redirect_label(r) for r in shown))])
        self.commands.append(
            ParsedCommand(
                text,
                tuple(tokens) if literal else None,
                tuple(dict.fromkeys(problems)),
                rememberable=not problems and literal and tokens[0] not in WRAPPERS,
                writes=writes,
                read_only=read_only,
            )
        )

    def write_label(self, node: Node) -> str | None:
        """``> out.txt`` for a redirect that writes a file (not /dev/null, not a descriptor copy), else
        None; the descriptor is shown when it is not stdout's (``2> err.txt``)."""
        if node.type != "file_redirect":
            return None
        op = next((c.type for c in node.children if not c.is_named), "")
        target = _split_target(node)[0]
        if op not in WRITE_OPS or not target:
            return None
        if op == ">&" and len(target) == 1 and (target[0].type == "number" or self.text(target[0]) == "-"):
            return None
        value, why = self.literal_group(target)
        if why or value in SAFE_TARGETS:
            return None if not why else f"{op} {self.text(target[0])}"
        fd = node.child_by_field_name("descriptor")
        prefix = self.text(fd) if fd is not None and self.text(fd) != "1" else ""
        return f"{prefix}{op} {value}"

    def literal_group(self, nodes: Sequence[Node]) -> tuple[str, str | None]:
        parts: list[str] = []
        for n in nodes:
            value, why = self.literal(n.children[0] if n.type == "command_name" and n.children else n)
            if why:
                return "", why
            parts.append(value)
        return "".join(parts), None

    def redirect_label(self, node: Node) -> str:
        """A redirect as the prompt shows it: descriptor, operator and target (not the words after it)."""
        if node.type != "file_redirect":
            return self.text(node).partition("\n")[0]
        target = _split_target(node)[0]
        end = target[-1].end_byte if target else node.end_byte
        return self.source[node.start_byte : end].decode(errors="replace")

    def redirect(self, node: Node) -> list[str]:
        if node.type == "heredoc_redirect":
            return ["heredoc <<"]
        if node.type == "herestring_redirect":
            return ["here-string <<<"]
        if node.type != "file_redirect":
            return [f"unsupported redirect ({node.type})"]
        op = next((c.type for c in node.children if not c.is_named), "")
        target = _split_target(node)[0]
        if op in (">&-", "<&-"):
            return []  # closes a descriptor
        if not target:
            return ["redirect without a target"]
        if (
            op in (">&", "<&")
            and len(target) == 1
            and (target[0].type == "number" or self.text(target[0]) == "-")
        ):
            return []  # duplicates or closes a descriptor (2>&1): no file involved
        value, why = self.literal_group(target)
        if why:
            return [f"redirect target is not a plain path ({why})"]
        if value in SAFE_TARGETS:
            return []
        path = Path(value)
        if not path.is_absolute() and self.changed_directory:
            return [f"redirect after cd ({value})"]
        full = (path if path.is_absolute() else self.workspace / path).resolve()
        # guard: shell-redirects-confined
        if full != self.workspace and self.workspace not in full.parents:
            return [f"redirect outside the workspace ({value})"]
        return []

    def literal(self, node: Node) -> tuple[str, str | None]:
        """The literal value of a word node, or why it has none (an expansion, a glob...)."""
        kind = node.type
        if kind == "word":
            return _unescape_word(self.text(node))
        if kind == "number":
            text = self.text(node)
            return (text, None) if NUMBER.fullmatch(text) else ("", "unusual number")
        if kind == "raw_string":
            return self.text(node)[1:-1], None
        if kind == "string":
            for child in node.children:
                if child.type not in ('"', "string_content"):
                    return "", self._expansion(child)
            # The whole text between the quotes: tree-sitter splits string_content at a newline and leaves
            # the newline out of every child, but inside "…" bash keeps it.
            text = self.text(node)
            if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
                return "", "unusual string"
            return _unescape_double_quoted(text[1:-1])
        if kind == "concatenation":
            parts = []
            for child in node.children:
                value, why = self.literal(child)
                if why:
                    return "", why
                parts.append(value)
            return "".join(parts), None
        # guard: shell-expansions-are-not-literal-words
        return "", self._expansion(node)

    def _expansion(self, node: Node) -> str:
        if node.type == "command_substitution":
            return (
                "command substitution `…`" if self.text(node).startswith("`") else "command substitution $(…)"
            )
        return EXPANSIONS.get(node.type, f"{node.type} is not a plain word")


def _split_target(redirect: Node) -> tuple[list[Node], list[Node]]:
    """A file redirect's target (its first destination and the nodes touching it) and the words after it."""
    if redirect.type != "file_redirect":
        return [], []
    dests = redirect.children_by_field_name("destination")
    n = 1
    while 0 < n < len(dests) and dests[n - 1].end_byte == dests[n].start_byte:
        n += 1
    return dests[:n], dests[n:]


def _unescape_word(text: str) -> tuple[str, str | None]:
    """An unquoted word's value; a word with an unescaped glob, brace, tilde or ``$`` has none."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 == len(text):
                out.append(ch)  # a trailing backslash stays, as in bash
            elif text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        if ch in WORD_SPECIAL:
            return "", WORD_SPECIAL[ch]
        if ch == "~" and (i == 0 or text[i - 1] in "=:"):
            return "", "tilde expansion ~"
        if ch in WORD_FORBIDDEN or not ch.isprintable():
            return "", f"unusual character {ch!r} in a word"
        out.append(ch)
        i += 1
    return "".join(out), None


def _unescape_double_quoted(text: str) -> tuple[str, str | None]:
    r"""Inside "…" a backslash escapes only ``$ ` " \`` and newline; ``$`` or a backtick left is an
    expansion."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        if ch in "$`":
            return "", WORD_SPECIAL[ch]
        out.append(ch)
        i += 1
    return "".join(out), None


def read_only_command(tokens: tuple[str, ...], workspace: Path) -> bool:
    """Whether ``tokens`` is a READ_ONLY command whose every argument that could name a file is inside
    the workspace (a path in an option's value too: ``--file=/etc/x``, ``-f/etc/x``, ``-fLINK``)."""
    name, args = tokens[0], tokens[1:]
    if name == "git":
        if not args or args[0] not in READ_ONLY_GIT or not _git_config_safe(workspace):
            return False
        sub, args = args[0], args[1:]
        if sub == "branch" and any(a not in GIT_BRANCH_LIST for a in args):
            return False  # `git branch x` creates one
    elif name not in READ_ONLY:
        return False
    spec = GETOPT.get(name)
    words: list[str] = []  # operands and option values: paths, whatever they begin with (`cat -- -LINK`)
    if spec is not None:
        options, operands = parse_options(args, spec)
        if name == "git" and has_option(options, GIT_WRITERS):
            return False
        # guard: link-following-walks-are-not-read-only
        if name in LINK_FOLLOWERS and has_option(options, LINK_FOLLOWERS[name]):
            return False
        if name == "rg" and (not _rg_flags_known(options) or not _rg_config_outside(workspace)):
            return False
        words = operands + [o.value for o in options if o.value]
    if name == "find" and any(a in FIND_ACTIONS or a in FIND_FOLLOWERS for a in args):
        return False
    # Every word as a path, and for a word that is an option, what follows its first `=` or `/` (an
    # option this file does not know may still take a path: `-O/etc/x`).
    private: list[Path] | None = None  # ``private_paths``, looked up once a command (~0.4 ms a look)
    for n, a in enumerate([*words, *args]):
        if n >= len(words) and a.startswith("-"):
            cut = min((i for i in (a.find("="), a.find("/")) if i >= 0), default=-1)
            if cut < 0:
                continue
            a = a[cut + 1 :] if a[cut] == "=" else a[cut:]
            if not a:
                continue
        # guard: read-only-paths-through-proc-ask
        if _through_proc(workspace / a):
            return False
        try:
            full = (workspace / a).resolve()  # an absolute `a` replaces the workspace
        except (OSError, RuntimeError, ValueError):
            return False
        # guard: shell-read-only-commands-stay-inside
        if not _within(workspace, full):
            return False
        if private is None:
            private = private_paths(workspace)
        if private_in(full, private) is not None:  # myrm's database in the workspace
            return False
        # guard: read-only-commands-open-no-fifo-or-device
        if name not in NAMES_ONLY and _special(full):
            return False
    return True


# Their links name the reading process's own files (its folder, its descriptors): resolved here they are
# myrm's, read by the command they are its own (`cat /proc/self/cwd/../x` from a myrm started in a subfolder).
PROCESS_RELATIVE = ("/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr")


def _through_proc(path: Path, hops: int = 0) -> bool:
    """Whether ``path`` (absolute, unresolved) leads through ``PROCESS_RELATIVE``: by its own words, or by
    a link on its way (``ws/here -> /proc/self/cwd``). A loop, or a link that cannot be read, counts."""
    parts = path.parts
    cur = Path(parts[0])
    for i, part in enumerate(parts[1:], 1):
        cur = cur.parent if part == ".." else cur if part == "." else cur / part
        if any(str(cur) == p or str(cur).startswith(p + "/") for p in PROCESS_RELATIVE):
            return True
        if part in (".", ".."):
            continue
        try:
            if not cur.is_symlink():
                continue
            target = Path(os.readlink(cur))
        except (OSError, ValueError):
            return True
        if hops >= 40:
            return True
        return _through_proc((cur.parent / target).joinpath(*parts[i + 1 :]), hops + 1)
    return False


def _special(full: Path) -> bool:
    """``full`` is a FIFO, a socket or a device: opening one waits for a writer or never ends (a FIFO
    named ``main.py`` held ``cat main.py`` until the command's time limit)."""
    try:
        mode = os.stat(full).st_mode
    except OSError:
        return False  # nothing there to open
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _within(root: Path, full: Path) -> bool:
    """``full`` (resolved) is ``root`` or lies under it."""
    return full == root or root in full.parents


def _rg_config_outside(workspace: Path) -> bool:
    """ripgrep reads extra flags from the file ``$RIPGREP_CONFIG_PATH`` names: the user's own is trusted,
    one inside the workspace (a tool could have written it) is not."""
    named = os.environ.get("RIPGREP_CONFIG_PATH")
    if not named:
        return True
    try:
        full = (workspace / named).resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return not _within(workspace, full)


def _rg_flags_known(options: Sequence[Option]) -> bool:
    """Every flag of an ``rg`` command line is one of ``RG_SHORT`` / ``RG_LONG`` (so none runs a program
    or follows links), whatever the values of those that take one hold."""
    for o in options:
        (flag,) = o.names  # ripgrep takes no prefixes: one name each
        if flag.startswith("--"):
            if flag not in RG_LONG:
                return False
        # guard: rg-flags-are-allow-listed
        elif flag[1:] not in RG_SHORT:
            return False
    return True


# Environment variables that point git at other config or make it run a program: while one is set, no git
# command runs unasked. (A `GIT_PAGER` other than `cat` counts too, though tool commands get `cat`.)
GIT_CONFIG_ENV = (
    "GIT_DIR", "GIT_COMMON_DIR", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_EDITOR",
)  # fmt: skip


def git_dirs(workspace: Path) -> list[Path]:
    """The git directories that a git command run in ``workspace`` would read config from: ``$GIT_DIR``,
    or the nearest ``.git`` (folder, or file holding ``gitdir: …``) at or above it, and that one's
    ``commondir`` (a linked worktree's main repository)."""
    env = os.environ
    found: list[Path] = []
    if env.get("GIT_DIR"):
        gitdir: Path | None = (workspace / env["GIT_DIR"]).resolve()
    else:
        gitdir = None
        for folder in [workspace, *workspace.parents]:
            dot = folder / ".git"
            if dot.is_dir():
                gitdir = dot.resolve()
                break
            if dot.is_file():
                text = dot.read_text(errors="replace").strip()
                if text.startswith("gitdir:"):
                    gitdir = (folder / text[len("gitdir:") :].strip()).resolve()
                break
    if gitdir is None:
        return found
    found.append(gitdir)
    common = gitdir / "commondir"
    if common.is_file():
        found.append((gitdir / common.read_text(errors="replace").strip()).resolve())
    elif env.get("GIT_COMMON_DIR"):
        found.append((workspace / env["GIT_COMMON_DIR"]).resolve())
    return found


def git_config_files(workspace: Path) -> list[Path]:
    """Every config file git reads for ``workspace`` that a tool could have written: the repository's
    ``config`` and ``config.worktree`` (read when ``extensions.worktreeConfig`` is on: checked either way),
    and the user's global files when they lie inside the workspace (myrm run in the home folder)."""
    env = os.environ
    # guard: read-only-git-reads-config-worktree
    files = [d / name for d in git_dirs(workspace) for name in ("config", "config.worktree")]
    home = Path(env.get("HOME", "~")).expanduser()
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    for user_file in (home / ".gitconfig", xdg / "git" / "config"):
        full = user_file.resolve()
        if _within(workspace, full):
            files.append(full)
    return files


def _git_config_safe(workspace: Path) -> bool:
    """Nothing git reads for the workspace sets a program to run (fsmonitor, textconv, pager, hooks,
    include…), and no environment variable points git at other config. Any doubt is "not safe"."""
    if any(os.environ.get(k) for k in GIT_CONFIG_ENV) or os.environ.get("GIT_PAGER", "cat") not in (
        "cat",
        "",
    ):
        return False
    try:
        for f in git_config_files(workspace):
            try:
                text = f.read_text(errors="replace")
            except FileNotFoundError:
                continue
            if GIT_CONFIG_RUNS.search(text):
                return False
    except (OSError, ValueError, RuntimeError):
        return False
    return True


# Read-only git runs with every configuration key that runs a program set to something inert, and bare
# repositories found only when named (a workspace laid out as one would otherwise be used: `config` at
# its root with `core.worktree = .` and `core.fsmonitor`). Set through GIT_CONFIG_COUNT, which outranks
# every config file and reaches the git processes git starts for submodules; submodules are not entered.
# guard: read-only-git-bare-repositories-only
GIT_NEUTRAL = (
    ("safe.bareRepository", "explicit"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("core.editor", "false"),
    ("core.alternateRefsCommand", ""),
    ("sequence.editor", "false"),
    ("diff.external", ""),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    *((f"pager.{sub}", "false") for sub in sorted(READ_ONLY_GIT)),
)
# A driver named in the config: `[diff "x"] textconv = …`, `[filter "x"] clean = …` (the attributes pick it)
GIT_DRIVERS = {
    "diff": ("textconv", "command"),
    "filter": ("clean", "smudge", "process"),
    "merge": ("driver",),
}
GIT_DRIVER_SECTION = re.compile(
    r'^\s*\[\s*(diff|filter|merge)(?:\s+"((?:[^"\\\n]|\\.)*)"|\.([^\]\s]+))\s*\]', re.M | re.I
)


def git_driver_names(workspace: Path) -> list[tuple[str, str]]:
    """(section, name) of each diff, filter and merge driver the workspace's git config files define."""
    found: list[tuple[str, str]] = []
    try:
        files = git_config_files(workspace)
    except (OSError, ValueError, RuntimeError):
        return found
    for f in files:
        try:
            text = f.read_text(errors="replace")
        except OSError:
            continue
        for m in GIT_DRIVER_SECTION.finditer(text):
            name = (m.group(2) or m.group(3) or "").replace('\\"', '"').replace("\\\\", "\\")
            if name and (m.group(1).lower(), name) not in found:
                found.append((m.group(1).lower(), name))
    return found


def git_hardening_env(workspace: Path) -> dict[str, str]:
    """Environment for a command that runs unasked as read-only: ``GIT_NEUTRAL``, every configured
    driver's program emptied, no optional lock (``git status`` writes no index), no prompt."""
    pairs = list(GIT_NEUTRAL)
    for section, name in git_driver_names(workspace):
        pairs += [(f"{section}.{name}.{key}", "") for key in GIT_DRIVERS[section]]
    env = {"GIT_CONFIG_COUNT": str(len(pairs)), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def git_internal(workspace: Path, full: Path) -> bool:
    """Whether ``full`` lies in a git directory of the workspace (or any folder named ``.git``): what a
    file tool writes there can make a later read-only git command run a program."""
    if ".git" in full.parts:
        return True
    try:
        return any(_within(d, full) for d in git_dirs(workspace))
    except (OSError, ValueError, RuntimeError):
        return True


# The options the warnings look for, read like every other flag check (``parse_options``): `rm --rec`
# is `rm --recursive`, `git push --forc` a force-push.
WARN_GETOPT = {
    "rm": Getopt(named=_opts("recursive force")),
    "chmod": Getopt(_opts("reference"), named=_opts("recursive")),
    "chown": Getopt(_opts("reference from"), named=_opts("recursive")),
    "chgrp": Getopt(_opts("reference"), named=_opts("recursive")),
    "git": Getopt(named=_opts("force force-with-lease force-if-includes hard")),
}

# `curl … | sh`, `wget -O- … | sudo python3`, `bash <(curl …)`, `sh -c "$(curl …)"`
REMOTE_CODE = re.compile(
    r"\b(curl|wget)\b[^\n;&]*\|\s*(sudo\s+)?(sh|bash|zsh|dash|ksh|fish|python3?|perl|ruby|node)\b"
    r"|\b(sh|bash|zsh|dash|ksh)\s+(-c\s+)?[\"']?(<\(|\$\()\s*(curl|wget)\b"
)


def destructive(command: str, commands: Sequence[ParsedCommand]) -> list[str]:
    """Warnings for patterns that delete, overwrite history or run code from the network; they are shown
    in the prompt and never decide anything (such commands ask like any other)."""
    out: list[str] = []
    if REMOTE_CODE.search(command):
        out.append("runs code downloaded from the network (curl/wget piped into a shell)")
    for c in commands:
        words = list(c.tokens) if c.tokens else c.text.split()
        while words and words[0] in ("sudo", "doas", "env", "nice", "nohup", "time", "command"):
            if words[0] in ("sudo", "doas"):
                out.append(f"runs as root ({words[0]})")
            words = words[1:]
        if not words:
            continue
        name, args = words[0].rsplit("/", 1)[-1], words[1:]
        sub = args[0] if name == "git" and args else ""
        options, operands = parse_options(args[1:] if sub else args, WARN_GETOPT.get(name, Getopt()))
        flags = {n for o in options for n in o.names}
        if name == "rm" and flags & {"-r", "-R", "--recursive"}:
            out.append("deletes recursively (rm -r" + ("f" if flags & {"-f", "--force"} else "") + ")")
        elif name in ("chmod", "chown", "chgrp") and flags & {"-R", "--recursive"}:
            out.append(f"changes permissions recursively ({name} -R)")
        elif name == "dd":
            out.append("dd writes raw data to files or devices")
        elif name.startswith("mkfs") or name in ("fdisk", "parted", "wipefs", "shred"):
            out.append(f"{name} erases or formats a disk")
        elif sub == "push" and (
            flags & {"-f", "--force", "--force-with-lease", "--force-if-includes"}
            or any(a.startswith("+") for a in operands)
        ):
            out.append("force-push rewrites the remote's history (git push --force)")
        elif sub == "reset" and "--hard" in flags:
            out.append("discards uncommitted changes (git reset --hard)")
        elif sub == "clean" and flags & {"-f", "--force"}:
            out.append("deletes untracked files (git clean -f)")
    return list(dict.fromkeys(out))


def check_rules(values: Iterable[str]) -> list[str]:
    """Problems with configured rules, one line each (empty when all parse); for config validation and
    doctor."""
    if isinstance(values, str | bytes):
        return [f"allowed_commands must be a list of strings, not a string ({values!r})"]
    problems = []
    for v in values:
        try:
            parse_rule(v)
        except (TypeError, ValueError) as e:
            problems.append(str(e))
    return problems


class UserApprover(Protocol):
    """A front-end's question to its user about a command or an edit the rules do not cover (a dialog,
    an editor's permission request, a refusal when no one can answer): "yes", "always" or "no"."""

    def __call__(self, tool: str, command: str, assessment: Assessment, /) -> Awaitable[str]: ...
