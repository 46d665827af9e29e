"""The smart filter's declarative shell stage: shell-output rules written in YAML, extensible by users.

A rule file holds ``rules:``, each with a ``command`` regex and any of ``drop`` / ``keep`` (line
regexes; ``keep`` wins), ``dedupe`` (collapse repeated lines), ``max_lines`` with ``head``/``tail``.
Files are read from the project's ``prompts/filters/`` and then from user folders (later files may
add rules or replace a rule of the same name). A file that is not YAML, or a rule that is malformed, is
skipped with a one-line warning in ``RuleEngine.problems`` (a workspace's files must not stop start-up).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Rule:
    name: str
    command: re.Pattern[str]
    drop: tuple[re.Pattern[str], ...] = ()
    keep: tuple[re.Pattern[str], ...] = ()
    dedupe: bool = False
    max_lines: int = 0
    head: int = 40
    tail: int = 20

    def apply(self, output: str) -> str:
        lines = output.splitlines()
        dropped = 0
        kept: list[str] = []
        for ln in lines:
            if (
                self.drop
                and any(p.search(ln) for p in self.drop)
                and not any(p.search(ln) for p in self.keep)
            ):
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

    @classmethod
    def from_dirs(cls, dirs: Iterable[Path]) -> RuleEngine:
        """Rules of every ``*.yaml``/``*.yml`` in ``dirs``, in order; bad files and rules are skipped and
        listed in ``problems``."""
        engine = cls()
        for d in dirs:
            if not d.is_dir():
                continue
            for f in sorted(d.glob("*.y*ml")):
                try:
                    text = f.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    engine._problem(f"{f}: cannot read it ({exc}) (skipped)")
                    continue
                engine._load(text, str(f))
        return engine

    def load_text(self, text: str, source: str = "<string>") -> None:
        """Add these rules; ``ValueError`` naming the first problem (the good rules are added)."""
        before = len(self.problems)
        self._load(text, source)
        if len(self.problems) > before:
            raise ValueError(self.problems[before])

    def _problem(self, text: str) -> None:
        self.problems.append(text)  # shown by the CLI before start-up and by `myrm doctor`

    def _load(self, text: str, source: str) -> None:
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
                rule = _rule(spec)
            except (KeyError, re.error, TypeError, ValueError) as exc:
                name = spec.get("name") if isinstance(spec, dict) else None
                label = repr(str(name)) if name is not None else f"number {n}"
                reason = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
                self._problem(f"{source}: bad filter rule {label}: {reason} (skipped)")
                continue
            self.rules[rule.name] = rule

    def apply(self, command: str, output: str) -> tuple[str, str] | None:
        first = command.strip().split("\n", 1)[0]
        for rule in self.rules.values():
            if rule.command.search(first):
                result = rule.apply(output)
                if len(result) < len(output):
                    return f"rule:{rule.name}", result
        return None


def _rule(spec: Any) -> Rule:
    if not isinstance(spec, dict):
        raise TypeError(f"expected a mapping, got {type(spec).__name__}")
    unknown = set(spec) - {"name", "command", "drop", "keep", "dedupe", "max_lines", "head", "tail"}
    if unknown:
        raise ValueError(f"unknown key {sorted(unknown)[0]!r}")
    return Rule(
        name=str(spec["name"]),
        command=_regex(spec["command"], "command"),
        drop=_regexes(spec.get("drop", []), "drop"),
        keep=_regexes(spec.get("keep", []), "keep"),
        dedupe=_flag(spec.get("dedupe", False)),
        max_lines=_count(spec.get("max_lines", 0), "max_lines"),
        head=_count(spec.get("head", 40), "head"),
        tail=_count(spec.get("tail", 20), "tail"),
    )


def _regex(value: Any, key: str) -> re.Pattern[str]:
    if not isinstance(value, str):
        raise TypeError(f"{key}: expected a regex string, got {value!r}")
    try:
        return re.compile(value)
    except re.error as exc:
        raise ValueError(f"{key}: bad regex {value!r}: {exc}") from None


def _regexes(value: Any, key: str) -> tuple[re.Pattern[str], ...]:
    if not isinstance(value, list):
        raise TypeError(f"{key}: expected a list of regex strings, got {value!r}")
    return tuple(_regex(v, key) for v in value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"dedupe: expected true or false, got {value!r}")
    return value


def _count(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{key}: expected an integer >= 0, got {value!r}")
    return value
