"""The ``@`` completion list above the prompt box: workspace files matching what follows the ``@``."""

from __future__ import annotations

from typing import Any

from textual.widgets import OptionList
from textual.widgets.option_list import Option

from myrm_tui.safe_text import sanitize


class MentionMenu(OptionList):
    DEFAULT_CSS = """
    MentionMenu { display: none; height: auto; max-height: 10; border: round $accent; margin: 0 1; }
    MentionMenu.-open { display: block; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)  # a file's name is not markup: ``[a-z].py`` shows as it is
        self._paths: list[str] = []

    def show(self, paths: list[str]) -> None:
        """List ``paths`` (the best first, highlighted); nothing to list closes the menu."""
        self._paths = list(paths)  # the names as they are; the options show them with controls made visible
        self.clear_options()
        self.add_options(Option(sanitize(p)) for p in paths)
        self.set_class(bool(paths), "-open")
        if paths:
            self.highlighted = 0

    def close(self) -> None:
        self.remove_class("-open")

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def choice(self) -> str | None:
        if not self.is_open or self.highlighted is None or not 0 <= self.highlighted < len(self._paths):
            return None
        return self._paths[self.highlighted]
