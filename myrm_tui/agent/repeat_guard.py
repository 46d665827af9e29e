"""``RepeatGuard``: a model calling the same tool with the same arguments again and again (a "doom loop").

Without it only ``max_steps`` stopped such a turn, after 40 identical calls and their cost. A call is a
repeat when it has the tool name and the arguments (JSON compared as values, key order aside) of the call
before it and that call got the same result as the one before it: a poll whose output changes is progress,
not a loop. Before the ``limit``-th repeat in a row runs, the turn asks the user (the approval path); with
no one to ask (``myrm ask``) it ends there and says so. ``repeat_limit = 0`` switches it off.

The answers, as an approval in Claude Code or Codex covers what it was asked about: "yes" covers the run of
identical calls it answered (no question while the model keeps asking for that call; another call ends the
run, and a new run of repeats is asked about again); "always" ends the questions for the
session, kept by ``SessionGrants`` across the agent's rebuilds. Several identical calls in one reply get one
question about all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from myrm_tui.agent.grants import SessionGrants
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


@dataclass(frozen=True)
class Repeat:
    """``call`` reaches the limit in a run of ``count`` identical calls in a row, the last ``in_reply`` of
    them in the reply being checked (not run yet)."""

    call: ToolCall
    count: int
    in_reply: int


@dataclass
class RepeatGuard:
    """The streak of identical calls with identical results in one turn."""

    limit: int  # 0 = off
    grants: SessionGrants = field(default_factory=SessionGrants)  # "always" lives here: the session's
    _last: tuple[str, str] | None = None
    _result: str | None = None
    _count: int = 0  # identical calls in a row so far, each with the result of the one before
    _ran: tuple[str, str] | None = None  # the last call that ran, whatever its result
    # calls whose run the user let go on ("yes"): until another call runs (its results may change meanwhile)
    _approved: set[tuple[str, str] | None] = field(default_factory=set)
    warned: bool = False  # with no one to ask, the model was told once this turn that it repeats itself

    def reset(self) -> None:
        """A new turn: the user has spoken since, so the streak starts again."""
        self._last, self._result, self._count, self.warned, self._ran = None, None, 0, False, None
        self._approved.clear()

    def repeated(self, calls: tuple[ToolCall, ...]) -> tuple[Repeat, ...]:
        """The calls of ``calls`` (one reply, in order) that reach the ``limit``-th identical call in a row,
        one a kind of call (all asked about in one question); none whose run the user let go on. Repeats
        inside the reply count too (their results are not known yet)."""
        if not self.limit or self.grants.repeats:
            return ()
        last, count, in_reply = self._last, self._count, 0
        found: dict[tuple[str, str], Repeat] = {}
        for c in calls:
            sig = signature(c)
            same = sig == last
            count, in_reply = (count + 1, in_reply + 1) if same else (1, 1)
            last = sig
            # guard: repeat-guard-asks-at-the-limit
            asked = count >= self.limit and (sig not in found or count > found[sig].count)  # its longest run
            # guard: repeat-guard-yes-covers-the-run-it-answered
            if asked and sig not in self._approved:
                found[sig] = Repeat(found[sig].call if sig in found else c, count, in_reply)
        return tuple(found.values())

    def ran(self, call: ToolCall, result: str | None) -> None:
        """``call`` returned ``result``: the streak goes on only if both are the same as last time. None: a
        result that says something is still under way (a running job's read): waiting on it is no loop."""
        sig = signature(call)
        # guard: repeat-guard-another-call-ends-the-approved-run
        if sig != self._ran:  # another call: the run the user let go on has ended
            self._approved.discard(self._ran)
            self._ran = sig
        # guard: repeat-guard-a-running-job-is-waited-on
        if result is None:
            self._last, self._result, self._count = None, None, 0
            return
        # guard: repeat-guard-same-result-only
        if sig == self._last and result == self._result:
            self._count += 1
        else:
            self._last, self._result, self._count = sig, result, 1

    def answered(self, answer: str, repeats: tuple[Repeat, ...]) -> None:
        """The user let ``repeats`` go on: "yes" for the runs they are in, "always" for the session."""
        if answer == "always":
            self.grants.repeats = True
        self._approved.update(signature(r.call) for r in repeats)
