"""The smart filter's declarative shell stage: shell-output rules written in YAML, extensible by users.

A rule file holds ``rules:``, each with a ``command`` regex and any of ``drop`` / ``keep`` (line
regexes; ``keep`` wins), ``dedupe`` (collapse repeated lines), ``max_lines`` with ``head``/``tail``.
Files are read from the project's ``prompts/filters/`` and then from user folders (later files may
add rules or replace a rule of the same name). A file that is not YAML, or a rule that is malformed, is
skipped with a one-line warning in ``RuleEngine.problems`` (a workspace's files must not stop start-up).

Every pattern not shipped with myrm is a user's (or a cloned repository's, when its folder is trusted): it
runs bounded. (The packaged rules are ours and reviewed: they run on ``re`` without a clock, 4x faster on a
big output, where a deadline check per line would be most of the filter's time.) A bounded pattern is
compiled by the ``regex`` package (the ``re`` syntax) only when its counted repeats stay small (compiling
``(a{1000}){1000}`` takes seconds), and matched with a deadline (``(a+)+$`` on a line of a's backtracks
for ever under ``re``): a rule whose matching runs over ``budget_seconds`` on one output is skipped from
then on, with a notice, and the output goes on to the other filters whole.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex
import yaml

log = logging.getLogger(__name__)

MAX_PATTERN_CHARS = 2_000
# The product of a pattern's counted-repeat bounds: compiling costs about this many steps (0.1 s at 100,000).
MAX_REPEAT_PRODUCT = 100_000
_COUNTED = regex.compile(r"\{(\d*),?(\d*)\}")  # escaped braces count too: only ever stricter
# A rule's matching on one output: a base, and more for a big output (an honest rule reads ~50 MB/s).
BASE_SECONDS = 0.1
SECONDS_PER_CHAR = 1e-7


def match_budget(chars: int) -> float:
    """How long one rule may match on an output of ``chars`` characters before it is skipped."""
    return BASE_SECONDS + chars * SECONDS_PER_CHAR


@functools.lru_cache(maxsize=512)
def user_regex(pattern: str) -> Any:
    """``pattern`` compiled for bounded matching (pass ``timeout=`` to its searches); ``ValueError``
    naming what is wrong: bad syntax, too long, or counted repeats past ``MAX_REPEAT_PRODUCT``."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"over {MAX_PATTERN_CHARS:,} characters")
    product = 1
    for low, high in _COUNTED.findall(pattern):
        product *= max(int(low or 0), int(high or 0), 1)
        # guard: filter-rules-huge-repeats-refused
        if product > MAX_REPEAT_PRODUCT:
            raise ValueError(f"counted repeats too large (their bounds multiply past {MAX_REPEAT_PRODUCT:,})")
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(str(exc)) from None


class RuleStalled(Exception):
    """A rule's matching ran past its deadline."""


@dataclass(frozen=True)
class Rule:
    name: str
    command: Any  # regex.Pattern[str], matched with a timeout (re.Pattern[str] for a packaged rule)
    drop: tuple[Any, ...] = ()
    keep: tuple[Any, ...] = ()
    dedupe: bool = False
    max_lines: int = 0
    head: int = 40
    tail: int = 20

    def apply(self, output: str, deadline: float = float("inf")) -> str:
        """``output`` filtered; ``RuleStalled`` once its matching passes ``deadline`` (``time.monotonic``)."""

        def hit(patterns: tuple[Any, ...], line: str) -> bool:
            return any(_search(p, line, deadline) for p in patterns)

        lines = output.splitlines()
        dropped = 0
        kept: list[str] = []
        for ln in lines:
            if self.drop and hit(self.drop, ln) and not hit(self.keep, ln):
                dropped += 1
                continue
            if self.dedupe and kept and kept[-1] == ln:
                dropped += 1
                continue
            kept.append(ln)
        if self.max_lines and len(kept) > self.max_lines:
            cut = len(kept) - self.head - self.tail
            kept = [*kept[: self.head], f"[… {cut} lines cut]", *kept[-self.tail :]]
        if dropped:
            kept.append(f"[rule {self.name}: {dropped} lines removed]")
        return "\n".join(kept)


class RuleEngine:
    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules: dict[str, Rule] = {r.name: r for r in rules}
        self.problems: list[str] = []  # "<file>: <what is wrong> (skipped)", one line each
        self.stalled: set[str] = set()  # rules that ran past their budget: skipped from then on
        self._notices: list[str] = []

    @classmethod
    def from_dirs(cls, dirs: Iterable[Path], *, packaged: Iterable[Path] = ()) -> RuleEngine:
        """Rules of every ``*.yaml``/``*.yml`` in ``packaged`` (myrm's own: unbounded) and then ``dirs``
        (bounded), in order; bad files and rules are skipped and listed in ``problems``."""
        engine = cls()
        for bounded, group in ((False, packaged), (True, dirs)):
            for d in group:
                if not d.is_dir():
                    continue
                for f in sorted(d.glob("*.y*ml")):
                    try:
                        text = f.read_text(encoding="utf-8")
                    except (OSError, UnicodeDecodeError) as exc:
                        engine._problem(f"{f}: cannot read it ({exc}) (skipped)")
                        continue
                    engine._load(text, str(f), bounded=bounded)
        return engine

    def load_text(self, text: str, source: str = "<string>") -> None:
        """Add these rules; ``ValueError`` naming the first problem (the good rules are added)."""
        before = len(self.problems)
        self._load(text, source)
        if len(self.problems) > before:
            raise ValueError(self.problems[before])

    def _problem(self, text: str) -> None:
        self.problems.append(text)  # shown by the CLI before start-up and by `myrm doctor`

    def _load(self, text: str, source: str, *, bounded: bool = True) -> None:
        # guard: filter-rules-a-bad-file-is-skipped
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            self._problem(
                f"{source}: not valid YAML{where}: {getattr(exc, 'problem', None) or exc} (skipped)"
            )
            return
        if data is None:
            return
        specs = data.get("rules", []) if isinstance(data, dict) else None
        if not isinstance(specs, list):
            self._problem(f"{source}: expected a mapping with a list under 'rules:' (skipped)")
            return
        for n, spec in enumerate(specs, 1):
            try:
                rule = _rule(spec, bounded)
            except (KeyError, TypeError, ValueError) as exc:
                name = spec.get("name") if isinstance(spec, dict) else None
                label = repr(str(name)) if name is not None else f"number {n}"
                reason = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
                self._problem(f"{source}: bad filter rule {label}: {reason} (skipped)")
                continue
            self.rules[rule.name] = rule

    def apply(self, command: str, output: str) -> tuple[str, str] | None:
        """The first rule for ``command`` that shortens ``output``: its name and result. A rule whose
        matching runs past ``match_budget`` is skipped, from then on, with a notice (``take_notices``)."""
        first = command.strip().split("\n", 1)[0]
        budget = match_budget(len(first) + len(output))
        for rule in self.rules.values():
            if rule.name in self.stalled:
                continue
            deadline = time.monotonic() + budget
            try:
                if not _search(rule.command, first, deadline):
                    continue
                result = rule.apply(output, deadline)
            except RuleStalled:
                # guard: filter-rules-a-stalled-rule-is-skipped
                self.stalled.add(rule.name)
                log.warning(
                    "filter rule %r ran over %.2f s; skipped from now on", rule.name, budget, exc_info=True
                )
                self._notices.append(
                    f"filter rule {rule.name!r} failed: its patterns ran over {budget:.2f} s on one output "
                    "(a catastrophic regex?); the rule is skipped from now on and the output kept whole"
                )
                continue
            if len(result) < len(output):
                return f"rule:{rule.name}", result
        return None

    def take_notices(self) -> list[str]:
        """The notices of rules skipped since the last call (each rule's once)."""
        out, self._notices = self._notices, []
        return out


def _search(pattern: Any, text: str, deadline: float) -> bool:
    if isinstance(pattern, re.Pattern):  # a packaged rule's
        return pattern.search(text) is not None
    left = deadline - time.monotonic()
    if left <= 0:
        raise RuleStalled
    try:
        # guard: filter-rules-matching-has-a-deadline
        return pattern.search(text, timeout=min(left, 3600.0)) is not None
    except TimeoutError:
        raise RuleStalled from None


def _rule(spec: Any, bounded: bool = True) -> Rule:
    if not isinstance(spec, dict):
        raise TypeError(f"expected a mapping, got {type(spec).__name__}")
    unknown = set(spec) - {"name", "command", "drop", "keep", "dedupe", "max_lines", "head", "tail"}
    if unknown:
        raise ValueError(f"unknown key {sorted(unknown)[0]!r}")
    return Rule(
        name=str(spec["name"]),
        command=_regex(spec["command"], "command", bounded),
        drop=_regexes(spec.get("drop", []), "drop", bounded),
        keep=_regexes(spec.get("keep", []), "keep", bounded),
        dedupe=_flag(spec.get("dedupe", False)),
        max_lines=_count(spec.get("max_lines", 0), "max_lines"),
        head=_count(spec.get("head", 40), "head"),
        tail=_count(spec.get("tail", 20), "tail"),
    )


def _regex(value: Any, key: str, bounded: bool = True) -> Any:
    if not isinstance(value, str):
        raise TypeError(f"{key}: expected a regex string, got {value!r}")
    try:
        if not bounded:
            try:
                return re.compile(value)
            except re.error as exc:
                raise ValueError(str(exc)) from None
        return user_regex(value)
    except ValueError as exc:
        shown = value if len(value) <= 60 else value[:57] + "…"
        raise ValueError(f"{key}: bad regex {shown!r}: {exc}") from None


def _regexes(value: Any, key: str, bounded: bool = True) -> tuple[Any, ...]:
    if not isinstance(value, list):
        raise TypeError(f"{key}: expected a list of regex strings, got {value!r}")
    return tuple(_regex(v, key, bounded) for v in value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"dedupe: expected true or false, got {value!r}")
    return value


def _count(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{key}: expected an integer >= 0, got {value!r}")
    return value
