"""``SessionGrants``: what the user allowed for a whole session, outliving each build of its agent."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SessionGrants:
    """What the user allowed for the whole session ("always"): the command rules and file writes it added,
    and no more questions about repeated calls. A session keeps one for every agent it builds, so a rebuild
    (a settings change) does not ask again what the user already answered."""

    commands: list[tuple[str, ...]] = field(default_factory=list)
    writes: dict[tuple[str, ...], frozenset[str]] = field(default_factory=dict)
    repeats: bool = False
