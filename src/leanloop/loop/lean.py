"""The lean path: the model's generation called directly when nothing would see the call.

``model.ainvoke`` (and a tool binding's) runs LangChain's per-call plumbing before the
model's own generation: the input converted to a prompt value and back, a callback
manager configured, ``on_chat_model_start``/``on_llm_end`` sent to no one, the messages
formatted for tracing, the invocation params and LangSmith params gathered, the one
request wrapped in ``asyncio.gather``. When no callback handler, tracer or verbose flag is
configured (in the run's config, on the model or in the environment), no cache (the
model's or LangChain's global one) and no rate limiter, none of that has an effect: the
lean path normalises content given as blocks as ``agenerate`` does and calls the model's
``_agenerate`` with the same ``stop`` and the binding's keyword arguments (``tools``,
``tool_choice``), and sets the reply's metadata as ``_agenerate_with_cache`` does; a model
that streams by flag or wants ``output_version="v1"`` goes through
``_agenerate_with_cache`` itself (``run_manager=None``), which handles both. The reply
gets an id of the form LangChain gives it (``lc_run--<uuid>-0``).

A model class that overrides ``ainvoke``, ``agenerate``, ``agenerate_prompt`` or
``_agenerate_with_cache``, or a binding with a config of its own, takes LangChain's path.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.globals import get_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableBinding, RunnableConfig

# LangChain's private helpers: a langchain-core (<2, as pinned) that moves one sends every
# request on LangChain's own path instead of failing to import.
try:
    from langchain_core.language_models._utils import _normalize_messages
    from langchain_core.language_models.chat_models import _gen_info_and_msg_metadata
    from langchain_core.utils._signature import _signature_parameters
except ImportError:  # pragma: no cover - depends on the installed langchain-core
    _HELPERS = False
else:
    _HELPERS = True

from leanloop.tools import quiet_callbacks

__all__ = ["lean_generate", "lean_target"]

_OWN = ("ainvoke", "agenerate", "agenerate_prompt", "_agenerate_with_cache")
_STRUCTURED_KEYS = ("ls_structured_output_format", "structured_output_format")
_PREFIX = "lc_run-"


def lean_target(model: Any, config: RunnableConfig) -> tuple[BaseChatModel, dict[str, Any]] | None:
    """The chat model and keyword arguments to generate with directly, or ``None``.

    ``model`` is what the loop would ``ainvoke``: a chat model or its tool binding.
    """
    if not _HELPERS:
        return None
    kwargs: dict[str, Any] = {}
    if isinstance(model, RunnableBinding):
        if model.config or model.config_factories:
            return None
        kwargs = dict(model.kwargs)
        model = model.bound
    if not isinstance(model, BaseChatModel):
        return None
    cls = type(model)
    if any(getattr(cls, name) is not getattr(BaseChatModel, name) for name in _OWN):
        return None
    if model.callbacks or model.verbose or model.rate_limiter is not None:
        return None
    if isinstance(model.cache, BaseCache) or model.cache is True:
        return None
    if model.cache is None and get_llm_cache() is not None:
        return None
    if not quiet_callbacks(config.get("callbacks")):
        return None
    return model, kwargs


async def lean_generate(
    model: BaseChatModel, messages: Sequence[BaseMessage], kwargs: dict[str, Any]
) -> BaseMessage:
    """The model's reply to ``messages``, generated as the module docstring says."""
    kwargs = dict(kwargs)
    stop = kwargs.pop("stop", None)
    for key in _STRUCTURED_KEYS:  # for LangSmith only: ``agenerate`` drops them too
        kwargs.pop(key, None)
    # Normalising changes only content given as blocks: plain text goes as it is.
    plain = all(type(message.content) is str for message in messages)
    sent = list(messages) if plain else _normalize_messages(messages)
    if getattr(model, "output_version", None) == "v1" or model._should_stream(
        async_api=True, run_manager=None, **kwargs
    ):  # LangChain's own handling: a stream gathered, content turned into v1 blocks
        result = await model._agenerate_with_cache(sent, stop=stop, run_manager=None, **kwargs)
    else:
        result = await _generated(model, sent, stop, kwargs)
    generation = result.generations[0]
    message = generation.message if isinstance(generation, ChatGeneration) else generation
    if message.id is None:
        message.id = f"{_PREFIX}-{uuid.uuid4()}-0"
    return message


_TAKES_RUN_MANAGER: dict[type, bool] = {}
"""Whether a model class's ``_agenerate`` has a ``run_manager`` parameter, per class."""


async def _generated(
    model: BaseChatModel, messages: list[BaseMessage], stop: Any, kwargs: dict[str, Any]
) -> ChatResult:
    """``_agenerate_with_cache`` without a cache, a rate limiter or a stream (see
    :func:`lean_target`): the generation and the reply's metadata as LangChain sets them."""
    cls = type(model)
    takes = _TAKES_RUN_MANAGER.get(cls)
    if takes is None:
        takes = _TAKES_RUN_MANAGER[cls] = "run_manager" in _signature_parameters(model._agenerate)
    if takes:
        result = await model._agenerate(messages, stop=stop, run_manager=None, **kwargs)
    else:
        result = await model._agenerate(messages, stop=stop, **kwargs)
    for generation in result.generations:
        generation.message.response_metadata = _gen_info_and_msg_metadata(generation)
    if len(result.generations) == 1 and result.llm_output is not None:
        result.generations[0].message.response_metadata = {
            **result.llm_output,
            **result.generations[0].message.response_metadata,
        }
    return result
