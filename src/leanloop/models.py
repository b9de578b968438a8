"""Build LangChain chat models from :class:`~leanloop.spec.types.ModelSpec` values.

``openai`` → ``ChatOpenAI``; ``openai-compatible`` → ``ChatOpenAI`` with ``base_url`` and
``stream_usage=True`` (llama.cpp, LM Studio, vLLM report usage only when asked);
``ollama`` → ``ChatOllama`` with ``num_ctx`` when a window is configured (so the server
really loads that window); ``class`` → the imported ``BaseChatModel`` built with ``kwargs``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from leanloop._imports import ImportPathError, import_object
from leanloop.exceptions import SpecError, SpecIssue
from leanloop.spec.types import ModelSpec

__all__ = ["build_chat_model"]


def build_chat_model(spec: ModelSpec) -> BaseChatModel:
    """Build the chat model ``spec`` describes.

    Raises:
        SpecError: When the model cannot be built; the issue points at where the model
            was declared and never repeats the API key.
    """
    try:
        if spec.class_path is not None:
            return _from_class(spec)
        if spec.provider == "ollama":
            return _ollama(spec)
        return _openai(spec)
    except SpecError:
        raise
    except Exception as exc:  # provider constructors raise anything from ValueError to OSError
        raise _located(spec, f"cannot build the model: {_redact(str(exc), spec)}") from exc


def _openai(spec: ModelSpec) -> BaseChatModel:
    from langchain_openai import ChatOpenAI  # noqa: PLC0415 - heavy import, only when used

    options = _given(
        model=spec.model,
        base_url=spec.base_url,
        api_key=spec.api_key,
        temperature=spec.temperature,
        max_tokens=spec.max_tokens,
        timeout=spec.timeout,
    )
    if spec.provider == "openai-compatible":
        options["stream_usage"] = True
        options.setdefault("api_key", "none")  # local servers ignore it; the client requires one
    return ChatOpenAI(**options, **dict(spec.kwargs))


def _ollama(spec: ModelSpec) -> BaseChatModel:
    from langchain_ollama import ChatOllama  # noqa: PLC0415 - heavy import, only when used

    options = _given(
        model=spec.model,
        base_url=spec.base_url,
        temperature=spec.temperature,
        num_predict=spec.max_tokens,
        num_ctx=spec.context_window,  # so the server really loads the configured window
        client_kwargs={"timeout": spec.timeout} if spec.timeout is not None else None,
    )
    return ChatOllama(**options, **dict(spec.kwargs))


def _from_class(spec: ModelSpec) -> BaseChatModel:
    assert spec.class_path is not None
    try:
        cls = import_object(spec.class_path)
    except ImportPathError as exc:
        raise _located(spec, str(exc)) from exc
    if not (isinstance(cls, type) and issubclass(cls, BaseChatModel)):
        raise _located(spec, f"{spec.class_path} is not a LangChain chat model class")
    options = dict(spec.kwargs)
    for key in ("model", "temperature", "max_tokens", "timeout", "base_url", "api_key"):
        value = getattr(spec, key)
        if value is not None and key in cls.model_fields:
            options.setdefault(key, value)
    model: BaseChatModel = cls(**options)
    return model


def _given(**options: Any) -> dict[str, Any]:
    """The options that were set (``None`` leaves the class default in place)."""
    return {key: value for key, value in options.items() if value is not None}


def _redact(text: str, spec: ModelSpec) -> str:
    return text.replace(spec.api_key, "***") if spec.api_key else text


def _located(spec: ModelSpec, message: str) -> SpecError:
    loc = spec.location
    if loc is None:
        return SpecError([SpecIssue("<model>", None, None, spec.name or "model", message)])
    return SpecError([SpecIssue(loc.source, loc.line, loc.column, loc.path, message)])
