"""Streaming one reply to the caller: answer text as it arrives, never a tool call.

The text of a reply is passed on while it streams, held back where it might be the start
of a call written as text (:class:`~leanloop.protocol.HoldBack`); a native call's chunks
are never shown. A stream of a model that always says how a reply ended and stops without
saying so is cut (:class:`~leanloop.loop.policies.cut_stream.CutStreamError`): what it
showed stays shown, and the retry's text that repeats it is not shown twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, message_chunk_to_message
from langchain_core.runnables import RunnableConfig

from leanloop.loop.policies.cut_stream import CutStreamError, cut_message, is_cut
from leanloop.protocol import HoldBack, ToolProtocol

__all__ = ["Stream", "TextSink", "stream_reply"]

TextSink = Callable[[str], Awaitable[None]]
"""Where streamed answer text goes."""


@dataclass
class Stream:
    """What streaming a run's replies keeps from one reply to the next."""

    on_text: TextSink | None = None
    """Receives answer text as it streams (``astream``); ``None`` when not streaming."""
    streamed: str = ""
    """The text of the latest reply that was passed to ``on_text``."""
    cut: bool = False
    """The latest streamed reply was cut (its text was shown, the reply did not count)."""
    replay: str = ""
    """What a cut reply showed that the retry has not repeated yet."""
    hold: bool = False
    """Replies are not streamed: the answer is shown whole at the run's end, once checked
    (the answer check may replace it, ADR 0035)."""

    async def show(self, text: str) -> None:
        """Pass ``text`` on to ``on_text``, less what a cut attempt showed of it already."""
        if not text or self.on_text is None:
            return
        if self.replay:
            # Sent again after a cut: the caller saw ``self.replay`` already. Text that
            # repeats it is not shown again; text that differs starts on a new paragraph.
            seen = min(len(text), len(self.replay))
            if text[:seen] == self.replay[:seen]:
                self.streamed += text[:seen]
                self.replay, text = self.replay[seen:], text[seen:]
                if not text:
                    return
            else:
                matched = self.streamed  # the retry's text so far, the same as before
                self.replay, self.streamed = "", ""
                await self.on_text("\n\n")
                text = matched + text
        self.streamed += text
        await self.on_text(text)


async def stream_reply(
    stream: Stream,
    model: Any,
    messages: Sequence[BaseMessage],
    config: RunnableConfig,
    *,
    protocol: ToolProtocol,
    judged: object,
) -> AIMessage:
    """Stream one reply of ``model``, passing on text that cannot be the start of a tool call.

    Args:
        stream: The run's streaming state; its ``on_text`` receives the text.
        model: The chat model as the request is sent (tools bound).
        messages: The request's view.
        config: The run's config.
        protocol: The run's tool protocol (what a call written as text looks like).
        judged: The chat model as the agent holds it: its class says whether its streams
            always end with a finish reason (:func:`~leanloop.loop.policies.cut_stream.is_cut`).

    Raises:
        CutStreamError: When the stream of a model that always says how a reply ended
            stops without saying so: the reply is incomplete, and nothing of it counts.
    """
    hold = HoldBack(protocol.parameters)
    whole: AIMessageChunk | None = None
    complete: AIMessage | None = None
    # Text a cut attempt already showed is not shown twice when the retry repeats it.
    stream.replay, stream.streamed = stream.streamed if stream.cut else "", ""
    async for item in model.astream(messages, config=config):
        if not isinstance(item, AIMessageChunk):
            # A model without streaming support hands over the whole reply at once.
            complete = item if isinstance(item, AIMessage) else AIMessage(content=str(item))
            calling = bool(complete.tool_calls)
            await stream.show("" if calling else hold.feed(complete.text))
            continue
        whole = item if whole is None else whole + item
        if item.tool_call_chunks:
            continue  # a native call has begun: its text is not for the reader
        await stream.show(hold.feed(item.text))
    if complete is not None:
        reply = complete
    elif whole is not None:
        if is_cut(judged, whole):
            stream.cut = True
            raise CutStreamError(cut_message(whole))
        reply = cast(AIMessage, message_chunk_to_message(whole))
    else:
        if is_cut(judged, None):
            stream.cut = True
            raise CutStreamError(cut_message(None))
        reply = AIMessage(content="")
    stream.cut = False
    if not reply.tool_calls:
        read = protocol.read(reply)
        # The hold-back stops at anything that might start a call; when the finished
        # reply holds none after all (a ```json block of data), show the rest of it.
        rest = hold.flush() if read.calls or read.corrections else reply.text[hold.shown :]
        await stream.show(rest)
    if stream.replay:  # the retry stopped short of what the cut attempt showed
        stream.streamed, stream.replay = stream.streamed + stream.replay, ""
    return reply
