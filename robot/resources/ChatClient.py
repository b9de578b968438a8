"""Robot keywords that talk to an OpenAI-compatible server through LangChain's ChatOpenAI."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

sys.path.insert(0, str(Path(__file__).parent))

from aio import run


@tool
def read_file(path: str) -> str:
    """Read a file of the workspace."""
    return path


@tool
def list_files(path: str = ".") -> str:
    """List the files under a folder of the workspace."""
    return path


def _model(base_url: str, *, stream: bool = False) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=base_url,
        api_key="none",  # type: ignore[arg-type]
        model="local-test",
        temperature=0,
        max_retries=0,
        stream_usage=True,
        streaming=stream,
        timeout=300,
    )


def _summary(message: BaseMessage) -> dict[str, Any]:
    usage = getattr(message, "usage_metadata", None) or {}
    calls = [{"name": c["name"], "args": c["args"]} for c in getattr(message, "tool_calls", [])]
    content = message.content if isinstance(message.content, str) else str(message.content)
    return {"content": content, "tool_calls": calls, "usage": dict(usage)}


class ChatClient:
    """ChatOpenAI with two workspace-like tools bound, as an agent would call it."""

    def chat_with_tools(self, base_url: str, text: str) -> dict[str, Any]:
        """One non-streaming request with tools bound; returns content, tool calls, usage."""
        model = _model(base_url).bind_tools([read_file, list_files])
        reply = run(model.ainvoke(text))
        return _summary(reply)

    def chat_streaming(self, base_url: str, text: str) -> dict[str, Any]:
        """One streaming request with tools bound; the chunks are added up."""

        async def collect() -> AIMessageChunk:
            total: AIMessageChunk | None = None
            model = _model(base_url, stream=True).bind_tools([read_file, list_files])
            async for chunk in model.astream(text):
                total = chunk if total is None else total + chunk
            assert total is not None, "the stream was empty"
            return total

        return _summary(run(collect()))

    def chat_expecting_error(self, base_url: str, text: str) -> str:
        """Send one request that must fail; returns ``ErrorType: message``."""
        try:
            reply: AIMessage = run(_model(base_url).ainvoke(text))
        except Exception as exc:  # the test inspects whatever was raised
            bases = ", ".join(cls.__name__ for cls in type(exc).__mro__[1:-2])
            body = getattr(exc, "body", None)
            return f"{type(exc).__name__} ({bases}): {exc} {body}"
        msg = f"expected an error, got an answer: {reply.content!r}"
        raise AssertionError(msg)
