"""How tools are offered and read back: native tool calling or the text protocol.

``native`` binds the tool schemas and reads ``tool_calls`` (and, when a reply has none,
calls written as text, which some servers pass through untouched). ``text`` lists the tools
in the system prompt and reads calls from the reply text; results go back as user turns
``<tool_result name="…">`` marked so trimming recognises them. ``auto`` starts native when
the model can bind tools, and the loop falls back to text when the server refuses them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)

from leanloop.protocol.marks import text_result_turn
from leanloop.protocol.parse import correction_for, parse_tool_calls
from leanloop.protocol.text import (
    TOOL_RESULTS_ARE_DATA,
    example_call,
    format_tool_result,
    render_tool_prompt,
    tool_parameters,
)
from leanloop.spec.types import ToolMode

__all__ = [
    "Mode",
    "ReadCalls",
    "ToolProtocol",
    "answer_text",
    "initial_mode",
    "is_tools_refusal",
]

Mode = Literal["native", "text"]

_TOOLS_REFUSED = re.compile(
    r"(tools?|function[ _-]?call\w*|tool[ _-]?choice)\b.{0,80}"
    r"(not supported|unsupported|not allowed|invalid|unknown|unexpected|does not support"
    r"|requires?\b)"
    r"|(does not support|doesn't support|not support)\w*.{0,40}\b(tools?|function)",
    re.IGNORECASE | re.DOTALL,
)


_PROBE_TOOL = {
    "type": "function",
    "function": {"name": "probe", "description": "", "parameters": {"type": "object"}},
}


def initial_mode(setting: ToolMode, model: BaseChatModel) -> Mode:
    """The mode a run starts in: ``auto`` is native when the model can bind tools.

    A class that overrides ``bind_tools`` only to call BaseChatModel's (which raises
    ``NotImplementedError``) cannot either, so an override is tried once on a probe tool.
    """
    if setting != "auto":
        return setting
    if type(model).bind_tools is BaseChatModel.bind_tools:
        return "text"
    try:
        model.bind_tools([_PROBE_TOOL])
    except NotImplementedError:
        return "text"
    except Exception:  # any other complaint is about the probe, not about binding
        return "native"
    return "native"


def is_tools_refusal(error: BaseException) -> bool:
    """Whether a provider error refuses the ``tools`` field (not the request as a whole)."""
    status = getattr(error, "status_code", None)
    # llama-server without --jinja refuses tools with a 500 server_error.
    if status is not None and status not in (400, 500):
        return False
    return bool(_TOOLS_REFUSED.search(str(error)))


@dataclass(frozen=True)
class ReadCalls:
    """The calls of one reply, and the reply as it goes into the history."""

    reply: AIMessage
    calls: list[ToolCall]
    corrections: list[str]
    """One-line corrections for call attempts that could not be read."""


class ToolProtocol:
    """Offers tools and reads calls in one mode; the loop may switch it to text once."""

    def __init__(self, *, mode: Mode, schemas: Sequence[Mapping[str, Any]]) -> None:
        self.mode: Mode = mode
        self.schemas = list(schemas)
        self.parameters = tool_parameters(self.schemas)
        self.example = example_call(self.schemas)
        """The call the tool prompt shows, shown again in corrections."""

    def bound_schemas(self, *, tools: bool) -> list[Mapping[str, Any]]:
        """The schemas to bind to this request (none in text mode or without tools)."""
        return self.schemas if tools and self.mode == "native" else []

    def system_message(self, base: SystemMessage | None) -> SystemMessage | None:
        """The run's system message: in text mode it lists the tools and how to call them."""
        if self.mode == "native" or not self.schemas:
            if base is None and self.schemas:
                return SystemMessage(content=TOOL_RESULTS_ARE_DATA)
            if base is not None and self.schemas:
                return SystemMessage(content=f"{base.text}\n\n{TOOL_RESULTS_ARE_DATA}")
            return base
        section = render_tool_prompt(self.schemas)
        return SystemMessage(content=f"{base.text}\n\n{section}" if base else section)

    def system_without_tools(self, base: SystemMessage | None) -> SystemMessage:
        """The system message with no tool list: for requests that should not call tools."""
        text = f"{base.text}\n\n{TOOL_RESULTS_ARE_DATA}" if base else TOOL_RESULTS_ARE_DATA
        return SystemMessage(content=text)

    def read(self, reply: AIMessage) -> ReadCalls:
        """The calls ``reply`` makes, native or written as text."""
        if reply.tool_calls:
            return ReadCalls(reply, list(reply.tool_calls), [])
        parsed = parse_tool_calls(reply.text, tools=self.parameters)
        calls: list[ToolCall] = [
            {
                "name": c.name,
                "args": c.args,
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "tool_call",
            }
            for c in parsed.calls
        ]
        corrections = (
            [correction_for(b, example=self.example) for b in parsed.broken] if not calls else []
        )
        if self.mode == "native" and calls:
            # Give the text calls ids and put them where native calls live, so each result
            # pairs with its call like any other.
            reply = reply.model_copy(update={"tool_calls": calls, "content": parsed.prose})
        return ReadCalls(reply, calls, corrections)

    def results(
        self, calls: Sequence[ToolCall], texts: Sequence[str], oks: Sequence[bool]
    ) -> list[BaseMessage]:
        """The messages that carry ``texts`` back to the model, one per call in order."""
        if self.mode == "native":
            return [
                ToolMessage(
                    content=text,
                    tool_call_id=call.get("id") or "",
                    name=call["name"],
                    status="success" if ok else "error",
                )
                for call, text, ok in zip(calls, texts, oks, strict=True)
            ]
        blocks = [format_tool_result(c["name"], t) for c, t in zip(calls, texts, strict=True)]
        return [text_result_turn("\n\n".join(blocks))]


def answer_text(reply: AIMessage, parameters: Mapping[str, Sequence[str]]) -> str:
    """The reply's text without any tool call written in it (for the final answer)."""
    parsed = parse_tool_calls(reply.text, tools=parameters)
    return parsed.prose if parsed.calls or parsed.broken else reply.text.strip()
