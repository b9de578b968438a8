"""Typed answers: the run's answer as an instance of a pydantic model (``output_schema``)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

__all__ = ["attach_structured"]


async def attach_structured(
    model: BaseChatModel,
    schema: type[BaseModel],
    answer: AIMessage,
    *,
    question: str,
    config: RunnableConfig | None = None,
) -> AIMessage:
    """PLACEHOLDER — the typed-answers helper writes this (see its brief)."""
    raise NotImplementedError(schema, answer, question, config, model, Any)
