"""The Textual UI: a view of the agent's state. It sends the agent messages and renders its events;
all decisions live in ``myrm_tui.agent`` and ``myrm_tui.context``."""
