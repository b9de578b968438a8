"""The mark that says "this turn carries tool results", in either tool protocol.

Native results are ``ToolMessage``s. In text mode (and when tool history is flattened
for a server that refuses it) results travel as user turns; those carry
:data:`TEXT_RESULT_MARK` in ``additional_kwargs`` so trimming, guards and reports can
tell them from the user's own words without comparing text or object identity.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

__all__ = ["TEXT_RESULT_MARK", "is_tool_result", "question_of", "text_result_turn"]

TEXT_RESULT_MARK = "leanloop_tool_result"
"""``additional_kwargs`` key set on a user turn that carries tool results."""


def text_result_turn(text: str) -> HumanMessage:
    """A user turn carrying tool results as text, marked as a tool result."""
    return HumanMessage(content=text, additional_kwargs={TEXT_RESULT_MARK: True})


def is_tool_result(message: BaseMessage) -> bool:
    """Whether ``message`` is a tool result (native, or a marked text-mode turn)."""
    if isinstance(message, ToolMessage):
        return True
    return isinstance(message, HumanMessage) and bool(
        message.additional_kwargs.get(TEXT_RESULT_MARK)
    )


def question_of(messages: Sequence[BaseMessage]) -> str:
    """The user's question: the text of the last human turn that is not a tool result.

    This is the one notion of "what the user asked" that the loop, the prefetch, the
    guard and the pruning pass share. With a multi-turn input it is the current turn,
    never an earlier one.
    """
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not is_tool_result(message):
            return message.text
    return ""
