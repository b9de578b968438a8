"""The tool protocol: how tools are offered to a model and its calls read back.

- :mod:`~leanloop.protocol.modes` is the per-run protocol (native tool calls, or text
  mode) the loop talks to: it offers the tools, reads the calls, frames the results;
- :mod:`~leanloop.protocol.marks` marks user turns that carry tool results;
- :mod:`~leanloop.protocol.parse` reads calls in every form models write them;
- :mod:`~leanloop.protocol.text` renders the tool prompt, frames results and flattens
  tool history into plain messages;
- :mod:`~leanloop.protocol.stream` holds back the start of a call while a reply streams.

The agent loop decides when to use them (``tool_mode``, the fallbacks); see ADR 0007.
"""

from __future__ import annotations

from leanloop.protocol.marks import (
    TEXT_RESULT_MARK,
    is_tool_result,
    question_of,
    text_result_turn,
)
from leanloop.protocol.modes import (
    Mode,
    ReadCalls,
    ToolProtocol,
    answer_text,
    initial_mode,
    is_tools_refusal,
)
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
    "TEXT_RESULT_MARK",
    "TOOL_RESULTS_ARE_DATA",
    "HoldBack",
    "Mode",
    "ParseResult",
    "ParsedCall",
    "ReadCalls",
    "ToolProtocol",
    "answer_text",
    "correction_for",
    "example_call",
    "flatten_tool_history",
    "format_call_json",
    "format_tool_call",
    "format_tool_result",
    "initial_mode",
    "is_tool_result",
    "is_tools_refusal",
    "parse_tool_calls",
    "question_of",
    "render_tool_prompt",
    "text_result_turn",
    "tool_parameters",
]
