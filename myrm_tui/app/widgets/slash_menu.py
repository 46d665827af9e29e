"""The slash-command menu above the prompt box: typing ``/`` lists the commands of the table that match
what follows it; the prompt box moves it (Up/Down), completes from it (Tab) or runs the pick (Enter)."""

from __future__ import annotations

import re

from textual.widgets import OptionList
from textual.widgets.option_list import Option

from myrm_tui.app.commands import Command, completions

_TYPED = re.compile(r"/([\w-]*)")


class SlashMenu(OptionList):
    DEFAULT_CSS = """
    SlashMenu { display: none; height: auto; max-height: 10; border: none; padding: 0 1; }
    SlashMenu.-open { display: block; }
    """
    can_focus = False  # the prompt box keeps the focus and drives the menu

    def __init__(self, **kwargs: object) -> None:
        super().__init__(markup=False, **kwargs)  # type: ignore[arg-type]  # usages hold brackets: [NAME]
        self._items: list[tuple[str, Command]] = []

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def update_for(self, text: str) -> None:
        """Show the commands matching ``text`` while it is ``/word`` (no space, one line)."""
        typed = _TYPED.fullmatch(text)
        items = completions(typed.group(1)) if typed else []
        if typed and items:  # an exact name first: Enter runs what was typed
            items.sort(key=lambda item: item[0] != typed.group(1))
        if [n for n, _ in items] != [n for n, _ in self._items]:
            self._items = items
            self.clear_options()
            heads = [f"/{name} {c.usage}".rstrip() for name, c in items]
            width = max((len(h) for h in heads), default=0)
            self.add_options(
                Option(f"{head.ljust(width)}   {c.title}", id=name)
                for head, (name, c) in zip(heads, items, strict=True)
            )
        self.set_class(bool(items), "-open")
        if items and self.highlighted is None:
            self.highlighted = 0

    def move(self, step: int) -> None:
        if self._items:
            self.highlighted = ((self.highlighted or 0) + step) % len(self._items)

    def chosen(self) -> tuple[str, Command] | None:
        if not self.is_open or self.highlighted is None or not self._items:
            return None
        return self._items[self.highlighted]

    def close(self) -> None:
        self.remove_class("-open")
