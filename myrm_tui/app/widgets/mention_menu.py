"""The ``@`` completion list above the prompt box: workspace files matching what follows the ``@``."""

from __future__ import annotations

from textual.widgets import OptionList


class MentionMenu(OptionList):
    DEFAULT_CSS = """
    MentionMenu { display: none; height: auto; max-height: 10; border: round $accent; margin: 0 1; }
    MentionMenu.-open { display: block; }
    """

    def show(self, paths: list[str]) -> None:
        """List ``paths`` (the best first, highlighted); nothing to list closes the menu."""
        self.clear_options()
        self.add_options(paths)
        self.set_class(bool(paths), "-open")
        if paths:
            self.highlighted = 0

    def close(self) -> None:
        self.remove_class("-open")

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def choice(self) -> str | None:
        if not self.is_open or self.highlighted is None or self.option_count == 0:
            return None
        return str(self.get_option_at_index(self.highlighted).prompt)
