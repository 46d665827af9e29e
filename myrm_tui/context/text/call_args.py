"""``CallArgs``: a stored tool call's arguments, parsed once and read with the types the schema promises.

A model may send any JSON as a call's arguments (``{"paths": 42}``, a list, a string, null, invalid
text). The call is stored as it came and read again by every later compaction, card and export, so
every reader goes through this one accessor: a wrong shape reads as absent and is reported in
``problems`` (for the tool's error answer), never raised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from myrm_tui.context.types import ToolCall

SHELL_TOOLS = frozenset({"bash", "shell", "run_command"})
SHOWN_CHARS = 80  # a value rendered for a one-line gist
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class CallArgs:
    """The arguments of one call: the JSON object (empty when the text is not one) and what is wrong."""

    name: str
    raw: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # malformed JSON, not an object

    @property
    def ok(self) -> bool:
        return not self.problems

    def has(self, key: str) -> bool:
        return key in self.fields

    def text(self, key: str) -> str:
        """A string field; "" when it is absent or of another type."""
        v = self.fields.get(key)
        return whole_text(v) if isinstance(v, str) else ""

    def texts(self, key: str) -> tuple[str, ...]:
        """A list-of-strings field (a lone string counts as a list of one); other items are skipped."""
        v = self.fields.get(key)
        if isinstance(v, str):
            return (whole_text(v),) if v else ()
        if isinstance(v, list):
            return tuple(whole_text(x) for x in v if isinstance(x, str) and x)
        return ()

    def flag(self, key: str) -> bool:
        """True only for a JSON ``true`` (a string "false" is not true)."""
        return self.fields.get(key) is True

    def number(self, key: str) -> float | None:
        v = self.fields.get(key)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    def shown(self, key: str, limit: int = SHOWN_CHARS) -> str:
        """Any field's value as short one-line text, for display."""
        v = self.fields.get(key)
        s = v[: limit * 4] if isinstance(v, str) else _dumps(v)[: limit * 4]
        s = " ".join(whole_text(s).split())
        return s if len(s) <= limit else s[: limit - 1] + "…"

    # -- the typed views of the built-in tools' arguments ------------------------------------------
    @property
    def command(self) -> str:
        """A shell call's command ("" when it is missing or not a string)."""
        return self.text("command")

    @property
    def read_paths(self) -> tuple[str, ...]:
        """The paths a ``file_read_tool`` call names (``paths``, or the ``path`` some models send)."""
        return self.texts("paths") or self.texts("path")

    @property
    def path(self) -> str:
        return self.text("path")


@lru_cache(maxsize=8192)  # a stored call is read by several layers on every compaction: parse it once
def call_args(call: ToolCall) -> CallArgs:
    return parse(call.name, call.arguments)


def parse(name: str, raw: str) -> CallArgs:
    """``raw`` parsed as a JSON object; anything else gives empty fields and says why."""
    text = raw if isinstance(raw, str) else ""
    if not text.strip():
        return CallArgs(name, text)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return CallArgs(name, text, problems=(f"not valid JSON ({exc.msg} at char {exc.pos})",))
    except (RecursionError, ValueError) as exc:  # nesting too deep, a number too long for int()
        return CallArgs(name, text, problems=(f"not readable JSON ({type(exc).__name__})",))
    if not isinstance(value, dict):
        return CallArgs(name, text, problems=(f"not a JSON object (got {_kind(value)})",))
    return CallArgs(name, text, value)


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def check(args: CallArgs, schema: Mapping[str, Any]) -> list[str]:
    """What in ``args`` breaks the top level of a tool's JSON schema: parse problems, missing required
    fields, wrong types, values outside an enum. Schema keywords not known here are not checked."""
    if args.problems:
        return list(args.problems)
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    out = [
        f"{key} is required"
        for key in schema.get("required") or ()
        if isinstance(key, str) and key not in args.fields and not _alias_given(args, key)
    ]
    for key, value in args.fields.items():
        spec = props.get(key)
        if isinstance(spec, Mapping):
            out += _problems(key, value, spec)
    return out


def _alias_given(args: CallArgs, key: str) -> bool:
    # file_read_tool has always read a lone ``path`` as ``paths``; models send it.
    return key == "paths" and bool(args.texts("path"))


def _problems(key: str, value: Any, spec: Mapping[str, Any]) -> list[str]:
    want = spec.get("type")
    names = [want] if isinstance(want, str) else [w for w in want or () if isinstance(w, str)]
    known = [n for n in names if n in _TYPES]
    lone_string = "array" in known and isinstance(value, str) and _items_are(spec, "string")
    if known and not any(_is(value, n) for n in known) and not lone_string:
        return [f"{key} must be {' or '.join(_article(n) for n in known)}, got {_kind(value)}"]
    enum = spec.get("enum")
    if isinstance(enum, list) and value not in enum:
        return [f"{key} must be one of {', '.join(_dumps(e) for e in enum)}, got {_dumps(value)[:40]}"]
    items = spec.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        for i, item in enumerate(value):
            found = _problems(f"{key}[{i}]", item, items)
            if found:
                return found  # the first bad item says enough
    return []


def whole_text(s: str) -> str:
    """``s`` with lone surrogates (JSON allows ``"\\ud800"``) replaced, so it can be stored and shown."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        # guard: a-lone-surrogate-in-a-calls-arguments
        return _SURROGATE.sub("\ufffd", s)
    return s


def _is(value: Any, type_name: str) -> bool:
    if isinstance(value, bool) and type_name in ("integer", "number"):
        return False
    if type_name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[type_name])


def _items_are(spec: Mapping[str, Any], type_name: str) -> bool:
    items = spec.get("items")
    return isinstance(items, Mapping) and items.get("type") == type_name


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _article(type_name: str) -> str:
    return {"array": "a list", "object": "an object", "integer": "an integer", "null": "null"}.get(
        type_name, f"a {type_name}"
    )


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        try:
            return repr(value)
        except RecursionError:  # nested past the limit: repr recurses as deep as json does
            return f"<{type(value).__name__} nested too deep>"
