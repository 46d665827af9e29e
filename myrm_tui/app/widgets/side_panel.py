"""The right-hand column: context ring, fork suggestion, then tabs for health metrics and the vault.

What it shows of the app's state (live numbers, the fork ratio, the compaction flag, the model line) is
bound from the screen's reactives, which are bound from the app's."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import var
from textual.widgets import Static, TabbedContent, TabPane

from myrm_tui.app.live import LiveContext
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.health_panel import SessionContextHealthPanel
from myrm_tui.app.widgets.plain import plain
from myrm_tui.app.widgets.vault_pane import VaultPane


class SidePanel(Vertical):
    DEFAULT_CSS = """
    SidePanel { width: 52; border-left: vkey $panel-lighten-2; padding: 0 1; }
    SidePanel #model { color: $text-muted; height: auto; }
    SidePanel #stats { height: auto; }
    SidePanel #fork-hint { color: $warning; display: none; height: auto; }
    SidePanel #sandbox { color: $warning; height: auto; display: none; }
    SidePanel.-suggest-fork #fork-hint { display: block; }
    SidePanel TabbedContent { height: 1fr; }
    SidePanel.-vault { width: 45%; min-width: 52; }
    SidePanel.-vault #model, SidePanel.-vault #stats { display: none; }
    """

    # init=False: the binding delivers the first value once the children exist.
    live: var[LiveContext] = var(LiveContext, init=False)
    fork_ratio: var[float] = var(1.0, init=False)
    compacting: var[bool] = var(False, init=False)
    model_line: var[str] = var("", init=False)
    collapsed: var[bool] = var(False, init=False)  # set by the screen: the ring shows as one line

    def compose(self) -> ComposeResult:
        yield ContextUsageIndicator(id="ring").data_bind(SidePanel.live, busy=SidePanel.compacting)
        yield Static("", id="model", markup=False)
        yield Static("", id="stats", markup=False)
        yield Static("", id="sandbox", markup=False)  # said once: there is no OS sandbox here
        yield Static("Context is getting full: ctrl+f forks this session with a summary.", id="fork-hint")
        with TabbedContent(id="tabs"):
            with TabPane("Health [F3]", id="health-tab"):
                yield SessionContextHealthPanel(id="health").data_bind(SidePanel.live)
            with TabPane("Vault [F4]", id="vault-tab"):
                yield VaultPane(id="vault")

    def on_mount(self) -> None:
        self.call_after_refresh(self._show_sandbox)  # a system call and ctypes: after the first frame

    def _show_sandbox(self) -> None:
        from myrm_tui.agent.sandbox import support

        missing = support().missing
        sandbox = self.query_one("#sandbox", Static)
        sandbox.display = bool(missing)
        sandbox.update(f"No OS sandbox here ({missing}): shell commands ask first" if missing else "")

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """The vault tab takes more room: the entries and the text they hold need it."""
        self.set_class(event.pane.id == "vault-tab", "-vault")

    def watch_collapsed(self, collapsed: bool) -> None:
        self.query_one(ContextUsageIndicator).compact = collapsed

    def watch_model_line(self, text: str) -> None:
        # guard: untrusted-text-the-model-line
        self.query_one("#model", Static).update(plain(text))  # a model name pasted into /model

    def watch_live(self) -> None:
        self._show_live()

    def watch_fork_ratio(self) -> None:
        self._show_live()

    def _show_live(self) -> None:
        """The lines under the ring and the fork hint (the ring and the health panel bind ``live``)."""
        live = self.live
        self.query_one("#stats", Static).update("\n".join(live.lines()))
        self.set_class(live.known and live.ratio >= self.fork_ratio, "-suggest-fork")
