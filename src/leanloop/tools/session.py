"""The tools a session gives the model: ``recall`` (earlier turns) and ``note`` (memory).

``recall`` searches the session's own earlier turns, including those the request view
left out to save context, and returns the best-matching turns whole, as text. Its
result is a tool result like any other: capped, trimmed and (when listed in
``pruning_tools``) pruned. ``note`` keeps a short remark in the session; notes are sent
with every later request of the session and never trimmed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

__all__ = ["NOTE_MAX_CHARS", "note_tool", "recall_tool", "render_turn"]

NOTE_MAX_CHARS = 500
"""The longest one note may be; a longer note is refused with a message to the model."""
_RECALL_TURNS = 3
"""Most turns one recall returns (the best-matching first)."""
_WORD = re.compile(r"[\w.-]{3,}", re.UNICODE)
_COMMON_WORDS = (
    "the and for was what which with that this from have has had are were did "
    "does about into when where who how why you your our their there then than they them"
)
_COMMON = frozenset(_COMMON_WORDS.split())


def render_turn(number: int, messages: Sequence[BaseMessage]) -> str:
    """One earlier turn as plain text: the question, each call and result, the answer."""
    lines = [f"## turn {number}"]
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, ToolMessage):
            name = names.get(message.tool_call_id, message.name or "tool")
            lines.append(f"result of {name}:\n{message.text}")
        elif isinstance(message, AIMessage):
            for call in message.tool_calls:
                names[call.get("id") or ""] = call["name"]
                args = json.dumps(call["args"], ensure_ascii=False)
                lines.append(f"called {call['name']}({args})")
            if message.text.strip():
                lines.append(f"assistant: {message.text}")
        elif isinstance(message, HumanMessage):
            lines.append(f"user: {message.text}")
    return "\n".join(lines)


def recall_tool(turns: Sequence[tuple[int, Sequence[BaseMessage]]]) -> BaseTool:
    """``recall(query)`` over ``turns`` (the session's earlier turns: number, messages)."""
    texts = [(number, render_turn(number, messages)) for number, messages in turns]

    def recall(query: str) -> str:
        words = {w for w in _WORD.findall(query.lower()) if w not in _COMMON}
        scored = []
        for number, text in texts:
            lowered = text.lower()
            score = sum(lowered.count(word) for word in words)
            if score:
                scored.append((score, number, text))
        if not scored:
            topics = "; ".join(_first_question(text) for _, text in texts[-10:])
            return (
                f"No earlier turn mentions {query!r}. "
                f"The earlier turns were about: {topics or 'nothing yet'}."
            )
        best = sorted(scored, key=lambda item: (-item[0], -item[1]))[:_RECALL_TURNS]
        return "\n\n".join(text for _, _, text in sorted(best, key=lambda item: item[1]))

    return StructuredTool.from_function(
        func=recall,
        name="recall",
        description=(
            "Search the earlier turns of this conversation (also those left out of the "
            "request to save context) and return the turns that match `query` "
            "(words to look for), whole."
        ),
    )


def note_tool(save: Callable[[str], Awaitable[None]]) -> BaseTool:
    """``note(text)``: keep ``text`` in the session for the next turns (``save`` stores it)."""

    async def note(text: str) -> str:
        text = " ".join(text.split())
        if not text:
            return "Nothing noted: the note was empty."
        if len(text) > NOTE_MAX_CHARS:
            return f"Nothing noted: a note may be at most {NOTE_MAX_CHARS} characters."
        await save(text)
        return "Noted; you will see this note in the next turns."

    return StructuredTool.from_function(
        coroutine=note,
        name="note",
        description=(
            "Keep a short note (a fact, a decision, a name) for the next turns of this "
            "conversation. Notes are always shown to you later; keep each one short."
        ),
    )


def _first_question(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("user: "):
            return line[6:80]
    return ""
