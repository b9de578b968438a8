"""What the benchmarks that talk to the embedded llama-server share."""

from __future__ import annotations

import socket

from langchain_openai import ChatOpenAI

from leanloop.localmodel import MODEL_ALIAS

__all__ = ["free_port", "local_chat_model"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def local_chat_model(base_url: str, *, reply_tokens: int, timeout: float) -> ChatOpenAI:
    """A deterministic ``ChatOpenAI`` for the local server at ``base_url`` (``…/v1``).

    No retries: a benchmark reports a failed request instead of hiding it in a retry.
    """
    return ChatOpenAI(
        model=MODEL_ALIAS,
        base_url=base_url,
        api_key="none",  # type: ignore[arg-type]  # the local server wants no key
        temperature=0,
        max_completion_tokens=reply_tokens,
        timeout=timeout,
        max_retries=0,
    )
