"""The context pipeline: builds the view of a session that is sent to the model.

Nothing here imports ``myrm_tui.app`` or ``myrm_tui.store``: the pipeline is pure, synchronous where it
can be, and fed by the agent loop (or the benchmark) with messages and a per-session ``ContextState``.
"""

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.types import Message, ToolCall

__all__ = ["ContextConfig", "Message", "ToolCall"]
