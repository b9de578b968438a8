"""The pruning meta-arguments: added to the schemas the model sees, stripped before tools run.

A prunable tool's schema gains two optional arguments that belong to leanloop, not to
the tool: ``output_prune`` (set false to receive the full output) and
``output_prune_context`` (what the model is looking for, which focuses the extraction).
:func:`augment_tool_schemas` adds them to copies of the schemas bound to the model;
:func:`split_meta_arguments` takes them out of a tool call's arguments so that no tool
ever receives them.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FOCUS_ARG",
    "META_ARGS",
    "PRUNE_ARG",
    "PruneRequest",
    "augment_tool_schemas",
    "split_meta_arguments",
]

PRUNE_ARG = "output_prune"
"""Boolean meta-argument: ``false`` asks for the full, unpruned output."""
FOCUS_ARG = "output_prune_context"
"""String meta-argument: what the model is looking for; it focuses the extraction."""
META_ARGS = frozenset({PRUNE_ARG, FOCUS_ARG})
"""Every argument name leanloop reserves in tool calls."""

_META_PROPERTIES: dict[str, dict[str, Any]] = {
    PRUNE_ARG: {
        "type": "boolean",
        "default": True,
        "description": "set false to receive the full output",
    },
    FOCUS_ARG: {
        "type": "string",
        "description": "what you are looking for in this output; focuses the extraction",
    },
}

# Spellings of "false" a model may send for a boolean argument in text mode.
_FALSE_WORDS = frozenset({"false", "0", "no", "off"})


@dataclass(frozen=True)
class PruneRequest:
    """What the model asked for about pruning one tool call's output."""

    prune: bool = True
    """``False`` when the model asked for the full output (``output_prune=false``)."""
    focus: str | None = None
    """The model's own description of what it looks for, or ``None``."""


def augment_tool_schemas(
    schemas: Sequence[Mapping[str, Any]], prunable: Collection[str]
) -> list[dict[str, Any]]:
    """Return copies of OpenAI-format tool schemas with the meta-arguments added.

    Each schema is ``{"type": "function", "function": {"name", "description",
    "parameters"}}`` (what ``convert_to_openai_tool`` produces); a flat
    ``{"name", "parameters"}`` form is accepted too. Tools named in ``prunable`` gain
    the optional properties ``output_prune`` and ``output_prune_context``; neither is
    added to ``required``.

    The input is never mutated: every schema is deep-copied, so tools that are not
    prunable come back equal to their input. A property that a tool already declares
    under one of these names is left alone (the tool's own meaning wins in its schema;
    the argument is still stripped before the tool runs).

    Args:
        schemas: The tool schemas as they would be bound to the model.
        prunable: Names of the tools whose output may be pruned.

    Returns:
        New schema dicts, in the same order.
    """
    result: list[dict[str, Any]] = []
    for schema in schemas:
        schema_copy = copy.deepcopy(dict(schema))
        function = schema_copy.get("function", schema_copy)
        if isinstance(function, dict) and function.get("name") in prunable:
            _add_meta_properties(function)
        result.append(schema_copy)
    return result


def _add_meta_properties(function: dict[str, Any]) -> None:
    parameters = function.get("parameters")
    if not isinstance(parameters, dict):
        parameters = {"type": "object", "properties": {}}
        function["parameters"] = parameters
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        properties = {}
        parameters["properties"] = properties
    for name, prop in _META_PROPERTIES.items():
        properties.setdefault(name, copy.deepcopy(prop))


def split_meta_arguments(args: Mapping[str, Any]) -> tuple[dict[str, Any], PruneRequest]:
    """Separate the tool's own arguments from the pruning meta-arguments.

    Works on any tool's arguments, prunable or not, so that no tool ever receives a
    meta-argument. ``output_prune`` is read tolerantly: booleans as they are, the
    strings ``"false"``, ``"0"``, ``"no"`` and ``"off"`` (any case) and the number 0
    as false, anything else as true. A blank focus counts as none.

    Args:
        args: The arguments of one tool call.

    Returns:
        A new dict of the remaining arguments and the :class:`PruneRequest`.
    """
    tool_args = {key: value for key, value in args.items() if key not in META_ARGS}
    return tool_args, PruneRequest(
        prune=_read_flag(args.get(PRUNE_ARG)), focus=_read_focus(args.get(FOCUS_ARG))
    )


def _read_flag(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    return str(value).strip().lower() not in _FALSE_WORDS


def _read_focus(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text.strip() or None
