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
Every request is recorded in ``requests``, when it arrives.

Two keys of a mapping make a slow or silent server, for timeouts and deadlines:

``delay``
    Seconds to wait before answering (``{"delay": 30, "content": "late"}``). Asynchronous
    calls wait with ``asyncio.sleep``, so on an event loop with virtual time (``looptime``,
    as the project's tests run) a 30 s delay takes no real time and still loses to a 1 s
    timeout; synchronous calls wait in real time.
``hang``
    ``True``: never answer; the call waits until it is cancelled (by the caller's timeout,
    say). Asynchronous calls only: a synchronous one raises ``ScriptError`` instead of
    blocking its thread for good.

``in_flight`` and ``peak_in_flight`` count the calls waiting at once, to check concurrency.
"""

from __future__ import annotations

import asyncio
import time
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
    """The script ran out of replies, or a reply asked to raise.

    Outside leanloop's exception tree on purpose: it stands for a provider's own failure,
    which is no ``LeanloopError`` either, so a run meets it on the path a real model's
    error takes (and ``testing`` imports nothing from leanloop, ADR 0026).
    """


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
    _in_flight: int = PrivateAttr(default=0)
    _peak_in_flight: int = PrivateAttr(default=0)
    _waiters: list[tuple[int, asyncio.Future[None]]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "leanloop-scripted"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        return self._requests

    @property
    def in_flight(self) -> int:
        """Calls received and not answered yet (waiting on a ``delay`` or a ``hang``)."""
        return self._in_flight

    @property
    def peak_in_flight(self) -> int:
        """The most calls that were in flight at once."""
        return self._peak_in_flight

    async def wait_for_requests(self, count: int = 1) -> None:
        """Return once ``count`` requests have arrived (at once, if they have).

        For a test that acts while the model holds a request (a ``hang``), without polling.

        Args:
            count: How many requests to wait for, in all.
        """
        if len(self._requests) >= count:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((count, waiter))
        await waiter

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
        reply = self._receive(messages, kwargs)
        delay, hang = _pause(reply)
        if hang:
            # Blocking a thread for good would hang the test run, not fail it.
            msg = "a hanging reply needs an asynchronous call (ainvoke)"
            raise ScriptError(msg)
        if delay:
            with self._waiting():
                time.sleep(delay)
        return self._answer(reply, messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._receive(messages, kwargs)
        delay, hang = _pause(reply)
        if hang or delay:
            with self._waiting():
                if hang:
                    await asyncio.Event().wait()  # nobody sets it: only a cancel ends the wait
                # The loop's clock, so a virtual-time loop skips the wait in no real time.
                await asyncio.sleep(delay)
        return self._answer(reply, messages)

    def _receive(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> Any:
        """Record the request and pick its reply (a callable one is called now)."""
        tools = list(kwargs.pop("tools", []) or [])
        tool_choice = kwargs.pop("tool_choice", None)
        self._requests.append(RecordedRequest(list(messages), tools, tool_choice, kwargs))
        self._wake_waiters()
        reply = self._next_reply()
        if callable(reply) and not isinstance(reply, AIMessage):
            reply = reply(messages)
        return reply

    def _wake_waiters(self) -> None:
        due = [w for w in self._waiters if w[0] <= len(self._requests)]
        for entry in due:
            self._waiters.remove(entry)
            # Thread-safe: a synchronous call may run in another thread than the waiter's loop.
            waiter = entry[1]
            waiter.get_loop().call_soon_threadsafe(_resolve, waiter)

    def _waiting(self) -> _InFlight:
        return _InFlight(self)

    def _answer(self, reply: Any, messages: list[BaseMessage]) -> ChatResult:
        message = self._to_message(reply, messages)
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


class _InFlight:
    """Counts a call as in flight while it waits (a context manager)."""

    def __init__(self, model: ScriptedChatModel) -> None:
        self._model = model

    def __enter__(self) -> None:
        model = self._model
        model._in_flight += 1
        model._peak_in_flight = max(model._peak_in_flight, model._in_flight)

    def __exit__(self, *exc: object) -> None:
        self._model._in_flight -= 1


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():  # a cancelled waiter stays cancelled
        waiter.set_result(None)


def _pause(reply: Any) -> tuple[float, bool]:
    """The ``delay`` (seconds) and ``hang`` a reply asks for: ``(0.0, False)`` for none."""
    if not isinstance(reply, Mapping):
        return 0.0, False
    delay = float(reply.get("delay", 0) or 0)
    if delay < 0:
        msg = f"a scripted delay cannot be negative: {delay}"
        raise ScriptError(msg)
    return delay, bool(reply.get("hang", False))
