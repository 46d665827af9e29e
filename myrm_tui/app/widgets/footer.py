"""The footer: the chat screen's keys, each shown whole.

Textual's footer clips what does not fit mid-word (``f4 Vau▏^p palette`` at 120 columns). This one
leaves out whole keys instead, the least needed first (``DROP_FIRST``), so what shows can be read;
``^p palette`` always stays: every command is there, and F1 lists every key."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# Left out in this order when the width is short (the others stay in the footer's order).
DROP_FIRST = (
    "quit",
    "new_session",
    "sessions",
    "help",
    "fork",
    "settings",
    "show_tab('health-tab')",
    "show_tab('vault-tab')",
    "cancel_turn",
)


def key_width(key: FooterKey) -> int:
    """Cells a key takes in the footer: `` key `` then ``description `` (Textual's padding)."""
    return len(key.key_display) + 2 + (len(key.description) + 1 if key.description else 0)


def shown_bindings(screen: Screen[object]) -> tuple[tuple[object, ...], ...]:
    """What the footer draws from a screen's bindings: a focus change that leaves this alone (most do)
    need not rebuild it."""
    palette = screen.app.COMMAND_PALETTE_BINDING
    return tuple(
        (key, b.action, b.description, enabled, tooltip)
        for key, (_node, b, enabled, tooltip) in screen.active_bindings.items()
        if b.show or key == palette
    )


class KeysFooter(Footer):
    def __init__(self) -> None:
        super().__init__()
        self._composed: tuple[int, tuple[tuple[object, ...], ...]] | None = None  # (width, keys) last built
        self._rebuild_pending = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        # Textual rebuilds the footer, a dozen keys and their styles, on every focus change and binding
        # refresh; most leave what it shows as it is.
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self._rebuild()

    def on_resize(self, _: events.Resize) -> None:
        self._rebuild()  # a rebuild only if the width changed what fits

    def _rebuild(self) -> None:
        """One rebuild after this refresh, however many changes asked for it (at start-up the first size
        and two binding refreshes came together: four builds of the same keys)."""
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild_if_changed)

    async def _rebuild_if_changed(self) -> None:
        self._rebuild_pending = False
        if not self.is_attached:  # its screen went away before the refresh
            return
        if self._composed != (self.app.size.width, shown_bindings(self.screen)):
            await self.recompose()

    def compose(self) -> ComposeResult:
        keys: list[Widget] = list(super().compose())
        if self._bindings_ready:
            self._composed = (self.app.size.width, shown_bindings(self.screen))
        room = self.app.size.width - 1  # the palette key's left border
        dropped = iter(DROP_FIRST)
        while sum(key_width(k) for k in keys if isinstance(k, FooterKey)) > room:
            action = next(dropped, None)
            if action is None:
                break
            keys = [k for k in keys if not (isinstance(k, FooterKey) and k.action == action)]
        yield from keys
