"""Small fake chat models the pruning scenarios build on."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

__all__ = ["AsyncOnlyChatModel"]


class AsyncOnlyChatModel(BaseChatModel):
    """A fake that answers only asynchronously (the loop never calls a model synchronously).

    Subclasses implement ``_agenerate``; a synchronous call is a test mistake and says so.
    """

    @property
    def _llm_type(self) -> str:
        return f"{type(self).__name__}-fake"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        raise NotImplementedError("this fake answers asynchronously only")
