"""The model options an agents file names, and what chat model classes call them.

Every option a model mapping has at its top level (``model``, ``base_url`` …) is a
portable name; LangChain's classes spell the same setting their own way
(``ChatOpenAI.openai_api_base``, ``ChatAnthropic.default_request_timeout``), usually with
the portable name as a pydantic alias. The table below is the one place that knows the
spellings: the loader lifts a spelling found in ``kwargs`` to the top level (so window
discovery sees a ``base_url`` wherever it was written), ``validate`` refuses the same
setting given twice, and the model builder maps each option onto the class's own field.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices, AliasPath, BaseModel
from pydantic.fields import FieldInfo

__all__ = [
    "OPTION_SPELLINGS",
    "PASS_THROUGH_FIELDS",
    "PORTABLE_OPTIONS",
    "accepted_keywords",
    "field_of",
    "lift_options",
    "not_accepted",
    "option_keyword",
    "unknown_kwargs",
]

OPTION_SPELLINGS: Mapping[str, tuple[str, ...]] = {
    "model": ("model", "model_name"),
    "base_url": ("base_url", "openai_api_base", "anthropic_api_url", "api_base"),
    "api_key": ("api_key", "openai_api_key", "anthropic_api_key"),
    "temperature": ("temperature",),
    "max_tokens": ("max_tokens", "max_completion_tokens", "max_tokens_to_sample", "num_predict"),
    "timeout": ("timeout", "request_timeout", "default_request_timeout"),
    "max_retries": ("max_retries",),
}
"""Each portable option and the names model classes use for it, portable name first."""

PORTABLE_OPTIONS = tuple(OPTION_SPELLINGS)

PASS_THROUGH_FIELDS = ("model_kwargs", "extra_body")
"""Fields through which a class sends request settings it does not declare itself
(``ChatOpenAI.model_kwargs`` and ``extra_body``, ``ChatAnthropic.model_kwargs``): the
escape hatch an unknown ``kwargs`` key is pointed to."""


def lift_options(
    options: Mapping[str, Any], kwargs: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], list[tuple[str, str]]]:
    """Move settings written in ``kwargs`` under another spelling to their portable name.

    Args:
        options: The top-level options that were given (``None`` values count as absent).
        kwargs: The model's ``kwargs``.

    Returns:
        The options and kwargs after the move, and one ``(kwargs key, option)`` pair for
        each setting given twice (the top-level value wins; the caller reports the clash).
    """
    lifted = {key: value for key, value in options.items() if value is not None}
    rest = dict(kwargs)
    clashes: list[tuple[str, str]] = []
    for option, spellings in OPTION_SPELLINGS.items():
        for spelling in spellings:
            if spelling not in rest:
                continue
            if option in lifted:
                clashes.append((spelling, option))
                continue
            lifted[option] = rest.pop(spelling)
    return lifted, rest, clashes


def option_keyword(cls: type[BaseModel], option: str) -> str | None:
    """The keyword ``cls`` accepts for the portable ``option``, or ``None`` if it has none.

    Looks through the option's known spellings (``base_url``, ``openai_api_base`` …) for a
    field name or alias of ``cls`` and returns the keyword that field is always accepted
    under: its validation alias when it has one, else its name.
    """
    fields = cls.model_fields
    for spelling in OPTION_SPELLINGS.get(option, (option,)):
        for name, info in fields.items():
            if spelling == name or spelling in _aliases(info):
                return _keyword(name, info, cls)
    return None


def _aliases(info: FieldInfo) -> set[str]:
    found: set[str] = set()
    for alias in (info.alias, info.validation_alias):
        if isinstance(alias, str):
            found.add(alias)
        elif isinstance(alias, AliasChoices):
            found.update(choice for choice in alias.choices if isinstance(choice, str))
        elif isinstance(alias, AliasPath) and len(alias.path) == 1:
            found.add(str(alias.path[0]))
    return found


def _keyword(name: str, info: FieldInfo, cls: type[BaseModel]) -> str:
    aliases = sorted(_aliases(info))
    config = cls.model_config
    by_name = bool(config.get("populate_by_name") or config.get("validate_by_name"))
    if not aliases or by_name:
        return name
    if isinstance(info.alias, str):
        return info.alias
    return aliases[0]


def field_of(cls: type[BaseModel], key: str) -> str:
    """The field ``key`` sets (``key`` itself when it is no field or alias)."""
    for name, info in cls.model_fields.items():
        if key == name or key in _aliases(info):
            return name
    return key


def not_accepted(cls: type[BaseModel], option: str) -> str:
    """The message for a portable ``option`` that ``cls`` has no keyword for."""
    spellings = ", ".join(OPTION_SPELLINGS[option])
    return (
        f"{cls.__name__} has no option {option!r} (no field or alias {spellings}); "
        "remove it, or pass the class's own keyword under 'kwargs'"
    )


def accepted_keywords(cls: type[BaseModel]) -> set[str] | None:
    """Every keyword ``cls``'s constructor takes, or ``None`` when it takes any.

    A field's aliases always; its name when it has no alias or the class populates by
    name (pydantic ignores the name of an aliased field otherwise); the named parameters
    of an ``__init__`` the class (not pydantic or LangChain) defines. ``None`` when any
    key may be taken: a class that keeps extra keywords (``extra="allow"``), or whose own
    ``__init__`` takes ``**kwargs`` (its code may read keys no field declares).
    """
    config = cls.model_config
    if config.get("extra") == "allow":
        return None
    by_name = bool(config.get("populate_by_name") or config.get("validate_by_name"))
    accepted: set[str] = set()
    for name, info in cls.model_fields.items():
        aliases = _aliases(info)
        accepted |= aliases
        if not aliases or by_name:
            accepted.add(name)
    owner = next((k for k in cls.__mro__ if "__init__" in vars(k)), object)
    if owner.__module__.partition(".")[0] in {"pydantic", "langchain_core", "builtins"}:
        return accepted  # the base constructors take the fields and nothing else
    try:
        parameters = list(inspect.signature(cls.__init__).parameters.values())
    except (TypeError, ValueError):  # no signature to read: it may take anything
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None  # its own **kwargs may use keys no field declares: not judged
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    accepted.update(p.name for p in parameters if p.kind in named and p.name != "self")
    return accepted


def unknown_kwargs(cls: type[BaseModel], kwargs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """One ``(key, message)`` for each key of ``kwargs`` that ``cls`` takes no keyword for.

    Such a key is never silently passed on: pydantic would drop it, and ``ChatOpenAI``
    would warn and send it in every request body. The message suggests the closest
    keyword and names the class's escape hatch (:data:`PASS_THROUGH_FIELDS`) for a
    provider-specific setting the class does not declare.
    """
    accepted = accepted_keywords(cls)
    if accepted is None:
        return []
    hatches = [f"kwargs.{name}" for name in PASS_THROUGH_FIELDS if name in cls.model_fields]
    if hatches:
        hatch = f"; a setting the class does not declare goes under {' or '.join(hatches)}"
    else:
        hatch = "; remove it, or use one of the class's own fields"
    found: list[tuple[str, str]] = []
    for key in kwargs:
        if key not in accepted:
            # As leanloop.spec.issues.did_you_mean words it (that module imports this one).
            close = difflib.get_close_matches(str(key), sorted(accepted), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            found.append((str(key), f"{cls.__name__} has no option {str(key)!r}{hint}{hatch}"))
    return found
