"""What a pruning pass looks for when the main model gave no focus: the task context.

:func:`task_context_from` is the user's question and the main model's latest reasoning,
each shortened; :func:`question_about_file` narrows a question about several files to the
parts about the one being pruned. The loop builds both (:mod:`leanloop.loop.tool_round`)
and hands the result to :meth:`~leanloop.pruning.extract.Pruner.prune`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage

__all__ = ["question_about_file", "task_context_from"]

# Longest user request and reasoning text carried into the task context (each).
_CONTEXT_CHARS = 1_000
_CLAUSES = re.compile(r"(?<=[;.?!])\s+|\s+(?=\(\d+\)\s)")


def question_about_file(question: str, path: str, named: Sequence[str]) -> str:
    """``question`` without its parts about other files, for pruning the file at ``path``.

    A question that asks for facts from several files ("(1) in logs/a.log, the id of …;
    (2) in config/b.yaml, …") gives each file's pruning pass the whole list; a small
    model then copies the question back instead of lines (measured: Qwen2.5-Coder 0.5B,
    every pass of a three-file task). The clauses (split at ``;``, sentence ends and
    ``(n)`` markers) that name one of the other ``named`` files and not this one are left
    out; everything else, the clauses naming no file included, is kept.

    Args:
        question: The user's request.
        path: The path the tool was called with.
        named: The workspace paths the request names (:func:`~leanloop.loop.prefetch.
            requested_paths`).

    Returns:
        The narrowed question, or ``question`` itself when it names fewer than two
        files or not this one.
    """
    wanted = path.strip().removeprefix("./")
    this = next((p for p in named if p == wanted or p.endswith("/" + wanted)), None)
    if this is None or len(named) < 2:
        return question
    others = [p for p in named if p != this]
    kept = [
        clause
        for clause in _CLAUSES.split(question.strip())
        if _names(clause, this) or not any(_names(clause, other) for other in others)
    ]
    return " ".join(kept)


def _names(clause: str, path: str) -> bool:
    """Whether ``clause`` names ``path`` (as written, or by its file name alone)."""
    return path in clause or path.rsplit("/", 1)[-1] in clause


def task_context_from(messages: Sequence[BaseMessage], *, question: str) -> str:
    """The task context for extraction: the user's question and the latest reasoning.

    Args:
        messages: The conversation so far (read for the assistant's latest reasoning).
        question: The user's current question, as the loop found it (the last human
            turn of the input, so a multi-turn input is steered by its current turn).

    Returns:
        The question and the latest non-empty AI message text (each shortened), or
        ``""`` when there is neither.
    """
    reasoning = next(
        (m for m in reversed(messages) if isinstance(m, AIMessage) and str(m.text).strip()),
        None,
    )
    parts = []
    if question.strip():
        parts.append("The user asked: " + _head(question, _CONTEXT_CHARS))
    if reasoning is not None:
        # The end of the reasoning says what the model is about to look for.
        parts.append("The assistant's latest reasoning: " + _tail(str(reasoning.text)))
    return "\n".join(parts)


def _head(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _CONTEXT_CHARS else "…" + text[-(_CONTEXT_CHARS - 1) :].lstrip()
