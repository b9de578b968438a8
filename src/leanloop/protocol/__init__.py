"""The text-mode tool protocol: tools offered in the prompt, calls read back from text.

- :mod:`~leanloop.protocol.parse` reads calls in every form models write them;
- :mod:`~leanloop.protocol.text` renders the tool prompt, frames results and flattens
  tool history into plain messages;
- :mod:`~leanloop.protocol.stream` holds back the start of a call while a reply streams.

The agent loop decides when to use them (``tool_mode``, the fallbacks); see ADR 0007.
"""

from __future__ import annotations

from leanloop.protocol.parse import (
    CALL_FORMS,
    ParsedCall,
    ParseResult,
    correction_for,
    parse_tool_calls,
)
from leanloop.protocol.stream import HoldBack
from leanloop.protocol.text import (
    TOOL_RESULTS_ARE_DATA,
    example_call,
    flatten_tool_history,
    format_call_json,
    format_tool_call,
    format_tool_result,
    render_tool_prompt,
    tool_parameters,
)

__all__ = [
    "CALL_FORMS",
    "TOOL_RESULTS_ARE_DATA",
    "HoldBack",
    "ParseResult",
    "ParsedCall",
    "correction_for",
    "example_call",
    "flatten_tool_history",
    "format_call_json",
    "format_tool_call",
    "format_tool_result",
    "parse_tool_calls",
    "render_tool_prompt",
    "tool_parameters",
]
