"""One async streaming interface over litellm, for every model (embedded, local servers, cloud)."""

from myrm_tui.llm.errors import LLMError
from myrm_tui.llm.events import Finish, LLMEvent, ReasoningDelta, TextDelta, ToolCallDelta, Usage

__all__ = ["Finish", "LLMError", "LLMEvent", "ReasoningDelta", "TextDelta", "ToolCallDelta", "Usage"]
