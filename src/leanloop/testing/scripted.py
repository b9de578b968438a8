"""A scripted chat model for tests and examples: replays replies, records requests.

Use it to test an agent without a server (in Python, or from YAML with
``class: leanloop.testing:ScriptedChatModel``)::

    model = ScriptedChatModel(replies=[
        {"tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}}]},
        "The notes say hello.",
    ])

A reply is a string (an answer), an ``AIMessage``, a mapping with ``content``,
``tool_calls``, ``usage`` (``{"input_tokens": .., "output_tokens": ..}``, optionally
``"cache_read": ..``: prompt tokens served from the server's prompt cache, reported as
LangChain's ``input_token_details``) or ``raise`` (an error message to raise instead of
answering), or a callable that receives the request's messages and returns any of these.
Every request is recorded in ``requests``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

__all__ = ["RecordedRequest", "ScriptError", "ScriptedChatModel"]


class ScriptError(RuntimeError):
    """The script ran out of replies, or a reply asked to raise."""


@dataclass
class RecordedRequest:
    """What one request to the scripted model carried."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = None
    kwargs: dict[str, Any] = field(default_factory=dict)


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script and records what it was sent."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replies: list[Any] = Field(default_factory=list)
    """The replies, in order (see the module docstring for their forms)."""
    repeat_last: bool = False
    """Keep answering with the last reply once the script is used up."""
    report_usage: bool = False
    """Attach usage figures (``chars_per_token`` characters a token) to replies without any."""
    chars_per_token: float = 4.0
    model_name: str = "scripted"
    _requests: list[RecordedRequest] = PrivateAttr(default_factory=list)
    _cursor: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "leanloop-scripted"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        return self._requests

    def bind_tools(
        self,
        tools: Sequence[Mapping[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools the way provider models do: as OpenAI-format schemas."""
        schemas = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=schemas, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = list(kwargs.pop("tools", []) or [])
        tool_choice = kwargs.pop("tool_choice", None)
        self._requests.append(RecordedRequest(list(messages), tools, tool_choice, kwargs))
        message = self._to_message(self._next_reply(), messages)
        if message.usage_metadata is None and self.report_usage:
            sent = sum(len(str(m.content)) for m in messages)
            inp = max(1, int(sent / self.chars_per_token))
            out = max(1, int(len(str(message.content)) / self.chars_per_token))
            message.usage_metadata = {
                "input_tokens": inp,
                "output_tokens": out,
                "total_tokens": inp + out,
            }
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, None, **kwargs)

    def _next_reply(self) -> Any:
        if self._cursor >= len(self.replies):
            if self.repeat_last and self.replies:
                return self.replies[-1]
            msg = f"the script has no reply left (it had {len(self.replies)})"
            raise ScriptError(msg)
        reply = self.replies[self._cursor]
        self._cursor += 1
        return reply

    def _to_message(self, reply: Any, messages: list[BaseMessage]) -> AIMessage:
        if callable(reply) and not isinstance(reply, AIMessage):
            reply = reply(messages)
        if isinstance(reply, AIMessage):
            return reply.model_copy(deep=True)
        if isinstance(reply, str):
            return AIMessage(content=reply)
        if isinstance(reply, Mapping):
            if "raise" in reply:
                raise ScriptError(str(reply["raise"]))
            calls = [
                {
                    "name": c["name"],
                    "args": dict(c.get("args", {})),
                    "id": c.get("id") or f"call_{self._cursor}_{i}",
                    "type": "tool_call",
                }
                for i, c in enumerate(reply.get("tool_calls", []))
            ]
            usage = reply.get("usage")
            message = AIMessage(content=reply.get("content", ""), tool_calls=calls)
            if usage:
                inp, out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
                message.usage_metadata = {
                    "input_tokens": inp,
                    "output_tokens": out,
                    "total_tokens": inp + out,
                }
                if "cache_read" in usage:  # as ChatOpenAI reports llama.cpp's cached_tokens
                    cached = int(usage["cache_read"])
                    message.usage_metadata["input_token_details"] = {"cache_read": cached}
            return message
        msg = f"unsupported scripted reply: {reply!r}"
        raise ScriptError(msg)
