"""Text from outside (a model, a tool, a file, an MCP server, the database, the user) shown as given.

Textual parses a ``str`` as content markup wherever a widget takes one with markup on (``Label``,
``Static``, a ``Collapsible`` title, an ``OptionList`` option, a ``Button`` label, a toast): ``[/]``
raises ``MarkupError`` (the app exits), ``[@click=app.quit]`` and ``[link=…]`` become live, ``[a-z]``
vanishes. ``plain`` builds the ``Content`` such a widget shows as it is, with terminal controls made
visible (``safe_text.sanitize``); ``PlainCollapsible`` is a ``Collapsible`` whose title is always plain.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Collapsible

from myrm_tui.safe_text import sanitize


def plain(text: str) -> Content:
    """``text`` as a widget shows it, character for character: never markup, controls neutralised."""
    return Content(sanitize(text))


class PlainCollapsible(Collapsible):
    """A ``Collapsible`` whose title, given at construction or set later, is plain text."""

    def __init__(self, *children: Any, title: str = "", **kwargs: Any) -> None:
        # The title widget is built from the argument before any validator runs: it must be Content already.
        # guard: untrusted-text-a-tool-cards-heading
        super().__init__(*children, title=plain(title), **kwargs)  # type: ignore[arg-type]

    def validate_title(self, title: str | Content) -> Content:
        return title if isinstance(title, Content) else plain(title)
