"""Build LangChain chat models from :class:`~leanloop.spec.types.ModelSpec` values.

``openai`` → ``ChatOpenAI``; ``openai-compatible`` → ``ChatOpenAI`` with ``base_url`` and
``stream_usage=True`` (llama.cpp, LM Studio, vLLM report usage only when asked);
``anthropic`` → ``ChatAnthropic`` (the ``leanloop[anthropic]`` extra); ``ollama`` →
``ChatOllama`` (``num_ctx`` from ``context_window``; a run without one asks for the window it
discovered); ``class`` → any imported ``BaseChatModel`` subclass.

Every class is built the same way: each portable option (``model``, ``base_url``,
``api_key``, ``temperature``, ``max_tokens``, ``timeout``) is passed under the keyword the
class itself accepts — a field name or one of its pydantic aliases — and ``kwargs`` go
along unchanged, so the class's own validation judges their values. An option the class
has no field for is an error, never dropped: a dropped ``base_url`` sends requests to the
hosted API with a key meant for another server. So is a ``kwargs`` key the class takes no
keyword for (pydantic would drop it; ``ChatOpenAI`` would warn and send it in every
request body): located at the key, with the closest keyword and the class's own field for
undeclared extras (``model_kwargs``, ``extra_body``) when it has one (ADR 0017).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from leanloop._imports import ImportPathError, import_object
from leanloop.exceptions import SpecError, SpecIssue
from leanloop.httpclients import LoopLocalTransport, loop_safe_async_client
from leanloop.redact import redact_logs, redact_text
from leanloop.spec.options import (
    PORTABLE_OPTIONS,
    field_of,
    not_accepted,
    option_keyword,
    unknown_kwargs,
)
from leanloop.spec.types import ModelSpec, SourceLocation

__all__ = ["DEFAULT_TIMEOUT", "build_chat_model"]

DEFAULT_TIMEOUT = 120.0
"""Seconds one request may wait when the file sets no ``timeout``: never forever (a
stalled server would hold the run). Streamed replies count it between two chunks."""

_PROVIDER_CLASSES = {
    "openai": ("langchain_openai", "ChatOpenAI", "langchain-openai"),
    "openai-compatible": ("langchain_openai", "ChatOpenAI", "langchain-openai"),
    "anthropic": ("langchain_anthropic", "ChatAnthropic", "leanloop[anthropic]"),
    "ollama": ("langchain_ollama", "ChatOllama", "langchain-ollama"),
}


def build_chat_model(spec: ModelSpec) -> BaseChatModel:
    """Build the chat model ``spec`` describes; no request is made.

    Raises:
        SpecError: When the model cannot be built (a missing package or credential, an
            option the class does not accept); the issue points at where the model was
            declared and never repeats the API key or a password in ``base_url``.
    """
    # httpx logs each request's URL, base_url's credentials included: hidden from here on.
    redact_logs()
    try:
        cls = _model_class(spec)
        model: BaseChatModel = cls(**_arguments(spec, cls))
    except SpecError:
        raise
    except Exception as exc:  # constructors raise anything from ValidationError to OSError
        raise _located(spec, f"cannot build the model: {_redact(str(exc), spec)}") from exc
    return model


def _model_class(spec: ModelSpec) -> type[BaseChatModel]:
    if spec.class_path is not None:
        try:
            # A class beside the agents file imports from its folder (ADR 0023).
            near = spec.location.folder if spec.location is not None else None
            cls = import_object(spec.class_path, near=near)
        except ImportPathError as exc:
            raise _located(spec, str(exc)) from exc
        if not (isinstance(cls, type) and issubclass(cls, BaseChatModel)):
            raise _located(spec, f"{spec.class_path} is not a LangChain chat model class")
        return cls
    assert spec.provider is not None
    module_name, class_name, package = _PROVIDER_CLASSES[spec.provider]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        message = f"the {spec.provider!r} provider needs {package}: pip install '{package}'"
        raise _located(spec, message) from exc
    found: type[BaseChatModel] = getattr(module, class_name)
    return found


def _arguments(spec: ModelSpec, cls: type[BaseChatModel]) -> dict[str, Any]:
    unknown = unknown_kwargs(cls, spec.kwargs)
    if unknown:
        raise SpecError([_kwarg_issue(spec, key, message) for key, message in unknown])
    options: dict[str, Any] = {
        name: getattr(spec, name) for name in PORTABLE_OPTIONS if getattr(spec, name) is not None
    }
    options.setdefault("timeout", DEFAULT_TIMEOUT)
    extra: dict[str, Any] = {}
    if spec.provider == "openai-compatible":
        extra["stream_usage"] = True
        options.setdefault("api_key", "none")  # local servers ignore it; the client needs one
    if spec.provider == "ollama":
        # ChatOllama's timeout lives in its HTTP client's settings.
        extra["client_kwargs"] = {"timeout": options.pop("timeout")}
        if spec.context_window is not None:  # so the server really loads that window
            if "num_ctx" in spec.kwargs:
                message = "kwargs.num_ctx sets what 'context_window' sets; give it once"
                raise _located(spec, message)
            extra["num_ctx"] = spec.context_window
        # Without either, each run sends the window it budgets for (budget.run.sized_model).
    arguments: dict[str, Any] = {}
    fields_set: dict[str, str] = {}
    for option, value in options.items():
        keyword = option_keyword(cls, option)
        if keyword is None:
            if option == "timeout" and spec.timeout is None:
                continue  # only the default: a class without a timeout keeps its own
            raise _located(spec, not_accepted(cls, option))
        arguments[keyword] = value
        fields_set[field_of(cls, keyword)] = option
    for key, value in {**extra, **spec.kwargs}.items():
        field = field_of(cls, key)
        if field in fields_set:
            message = f"kwargs.{key} sets what '{fields_set[field]}' sets; give it once"
            raise _located(spec, message)
        arguments[key] = value
    _loop_safe_clients(cls, arguments)
    return arguments


def _loop_safe_clients(cls: type[BaseChatModel], arguments: dict[str, Any]) -> None:
    """Give the model async HTTP clients that work from every event loop (see httpclients).

    Only where the class takes a client and the file did not bring its own (or a proxy,
    which ChatOpenAI builds its own client for).
    """
    fields = cls.model_fields
    if "http_async_client" in fields and not {"http_async_client", "openai_proxy"} & set(arguments):
        arguments["http_async_client"] = loop_safe_async_client()
    if "async_client_kwargs" in fields:  # ChatOllama: its AsyncClient passes these to httpx
        given = dict(arguments.get("async_client_kwargs") or {})
        given.setdefault("transport", LoopLocalTransport())
        arguments["async_client_kwargs"] = given


def _redact(text: str, spec: ModelSpec) -> str:
    secrets: list[str] = [spec.api_key] if spec.api_key else []
    secrets += [v for k, v in spec.kwargs.items() if isinstance(v, str) and _secret_key(str(k))]
    for secret in secrets:
        text = text.replace(secret, "***")
    return redact_text(text)  # a constructor's error may repeat base_url (pydantic's do)


def _secret_key(key: str) -> bool:
    lowered = key.lower()
    return any(word in lowered for word in ("key", "token", "secret", "password"))


def _kwarg_issue(spec: ModelSpec, key: str, message: str) -> SpecIssue:
    """``message`` about ``kwargs.<key>``, at the key when the file still shows it."""
    loc = spec.location
    if loc is None:
        return SpecIssue("<model>", None, None, f"{spec.name or 'model'}.kwargs.{key}", message)
    line, column = _key_position(loc, key) or (loc.line, loc.column)
    return SpecIssue(loc.source, line, column, f"{loc.path}.kwargs.{key}", message)


def _key_position(loc: SourceLocation, key: str) -> tuple[int, int] | None:
    """Line and column of ``key`` under the model's ``kwargs`` in its file, if found there.

    A spec keeps only the model's own position; the file is read again for the key's
    (only on this error path). A model made by hand or from text has no file: ``None``.
    """
    from leanloop.spec.yamlsource import parse_yaml  # noqa: PLC0415 - only on an error

    file = Path(loc.source)
    if not file.is_absolute() and loc.folder is not None:
        file = loc.folder / file.name
    try:
        _, positions, _ = parse_yaml(file.read_text(encoding="utf-8-sig"))
    except Exception:  # not a readable file (text, a spec made by hand): the model's place
        return None
    mark = positions.keys.get((*loc.path.split("."), "kwargs", key))
    return (mark.line, mark.column) if mark is not None else None


def _located(spec: ModelSpec, message: str) -> SpecError:
    loc = spec.location
    if loc is None:
        return SpecError([SpecIssue("<model>", None, None, spec.name or "model", message)])
    return SpecError([SpecIssue(loc.source, loc.line, loc.column, loc.path, message)])
