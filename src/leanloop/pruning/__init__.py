"""LLM-directed tool-output pruning: keep only what the main model is looking for.

For the tools named in ``pruning_tools`` the model sees two extra optional arguments
(:mod:`~leanloop.pruning.schema`); after such a tool runs, :class:`Pruner` asks a
pruning model to copy out the relevant lines in the marker format
(:mod:`~leanloop.pruning.markers`), verifies them against the raw output, and returns a
short tool message, or the raw output when anything goes wrong
(:mod:`~leanloop.pruning.extract`).
"""

from __future__ import annotations

from leanloop.pruning.extract import (
    PruneOutcome,
    Pruner,
    PruneSettings,
    UnreadRange,
    task_context_from,
)
from leanloop.pruning.markers import (
    RESERVED_MARKERS,
    PruneFormatError,
    PruneParse,
    escape_reserved,
    format_pruned,
    is_pruned,
    parse_prune_response,
    restore_reserved,
)
from leanloop.pruning.schema import (
    FOCUS_ARG,
    META_ARGS,
    PRUNE_ARG,
    PruneRequest,
    augment_tool_schemas,
    split_meta_arguments,
)
from leanloop.pruning.speed import ServerSpeed, processed_tokens
from leanloop.pruning.trigger import Candidate, PruningTrigger, pick_pruned

__all__ = [
    "FOCUS_ARG",
    "META_ARGS",
    "PRUNE_ARG",
    "RESERVED_MARKERS",
    "Candidate",
    "PruneFormatError",
    "PruneOutcome",
    "PruneParse",
    "PruneRequest",
    "PruneSettings",
    "Pruner",
    "PruningTrigger",
    "ServerSpeed",
    "UnreadRange",
    "augment_tool_schemas",
    "escape_reserved",
    "format_pruned",
    "is_pruned",
    "parse_prune_response",
    "pick_pruned",
    "processed_tokens",
    "restore_reserved",
    "split_meta_arguments",
    "task_context_from",
]
