"""The declarative half of L1: shell-output rules written in YAML, extensible by users.

A rule file holds ``rules:``, each with a ``command`` regex and any of ``drop`` / ``keep`` (line
regexes; ``keep`` wins), ``dedupe`` (collapse repeated lines), ``max_lines`` with ``head``/``tail``.
Files are read from the project's ``prompts/filters/`` and then from user folders (later files may
add rules or replace a rule of the same name).
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
            if self.drop and any(p.search(ln) for p in self.drop) and not any(p.search(ln) for p in self.keep):
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

    @classmethod
    def from_dirs(cls, dirs: Iterable[Path]) -> RuleEngine:
        engine = cls()
        for d in dirs:
            if not d.is_dir():
                continue
            for f in sorted(d.glob("*.y*ml")):
                engine.load_text(f.read_text(encoding="utf-8"), source=str(f))
        return engine

    def load_text(self, text: str, source: str = "<string>") -> None:
        data = yaml.safe_load(text) or {}
        for spec in data.get("rules", []):
            try:
                rule = _rule(spec)
            except (KeyError, re.error, TypeError) as exc:
                raise ValueError(f"{source}: bad filter rule {spec.get('name', '?')!r}: {exc}") from exc
            self.rules[rule.name] = rule

    def apply(self, command: str, output: str) -> tuple[str, str] | None:
        first = command.strip().split("\n", 1)[0]
        for rule in self.rules.values():
            if rule.command.search(first):
                result = rule.apply(output)
                if len(result) < len(output):
                    return f"rule:{rule.name}", result
        return None


def _rule(spec: dict[str, Any]) -> Rule:
    return Rule(
        name=str(spec["name"]),
        command=re.compile(spec["command"]),
        drop=tuple(re.compile(p) for p in spec.get("drop", [])),
        keep=tuple(re.compile(p) for p in spec.get("keep", [])),
        dedupe=bool(spec.get("dedupe", False)),
        max_lines=int(spec.get("max_lines", 0)),
        head=int(spec.get("head", 40)),
        tail=int(spec.get("tail", 20)),
    )
