"""``RepeatGuard``: a model calling the same tool with the same arguments again and again (a "doom loop").

Without it only ``max_steps`` stopped such a turn, after 40 identical calls and their cost. A call is a
repeat when it has the tool name and the arguments (JSON compared as values, key order aside) of the call
before it and that call got the same result as the one before it: a poll whose output changes is progress,
not a loop. Before the ``limit``-th repeat in a row runs, the turn asks the user (the approval path); with
no one to ask (``myrm ask``) it ends there and says so. ``repeat_limit = 0`` switches it off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from myrm_tui.context.types import ToolCall

# The ``tool`` an approver is asked about for a repeated call (front-ends word this question their way).
REPEAT_TOOL = "repeated_call"
# An approver's answer when no one is there to ask (``myrm ask``): the model is told once, then stopped.
UNATTENDED = "unattended"


def signature(call: ToolCall) -> tuple[str, str]:
    """The call's name and its arguments in a canonical form (a JSON object's key order and spacing do
    not make two calls different; anything else is compared as sent)."""
    try:
        value = json.loads(call.arguments or "{}")
    except (ValueError, RecursionError):
        return call.name, call.arguments.strip()
    try:
        return call.name, json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (ValueError, RecursionError):  # nested past the recursion limit: compared as sent
        return call.name, call.arguments.strip()


@dataclass
class RepeatGuard:
    """The streak of identical calls with identical results in one turn."""

    limit: int  # 0 = off
    _last: tuple[str, str] | None = None
    _result: str | None = None
    _count: int = 0  # identical calls in a row so far, each with the result of the one before
    _allowed: bool = False  # the user said "always": no more questions for this session
    warned: bool = False  # with no one to ask, the model was told once this turn that it repeats itself

    def reset(self) -> None:
        """A new turn: the user has spoken since, so the streak starts again."""
        self._last, self._result, self._count, self.warned = None, None, 0, False

    def repeated(self, calls: tuple[ToolCall, ...]) -> ToolCall | None:
        """The first of ``calls`` (one reply, in order) that would be the ``limit``-th identical call in a
        row, or None. Repeats inside the reply count too (their results are not known yet)."""
        if not self.limit or self._allowed:
            return None
        last, count = self._last, self._count
        for c in calls:
            sig = signature(c)
            count = count + 1 if sig == last else 1
            last = sig
            # guard: repeat-guard-asks-at-the-limit
            if count >= self.limit:
                return c
        return None

    def ran(self, call: ToolCall, result: str | None) -> None:
        """``call`` returned ``result``: the streak goes on only if both are the same as last time. None: a
        result that says something is still under way (a running job's read): waiting on it is no loop."""
        sig = signature(call)
        # guard: repeat-guard-a-running-job-is-waited-on
        if result is None:
            self._last, self._result, self._count = None, None, 0
            return
        # guard: repeat-guard-same-result-only
        if sig == self._last and result == self._result:
            self._count += 1
        else:
            self._last, self._result, self._count = sig, result, 1

    def answered(self, answer: str) -> None:
        """The user let the calls go on: "always" for the rest of the session, "yes" for another run of
        ``limit`` repeats."""
        if answer == "always":
            self._allowed = True
        self._count = 0
