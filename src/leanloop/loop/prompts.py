"""The few fixed instructions the loop adds to a conversation."""

from __future__ import annotations

from typing import Final

__all__ = [
    "FINAL_ANSWER_PROMPT",
    "OUT_OF_CONTEXT_TEXT",
    "SYNTHESIS_PROMPT",
    "fan_out_note",
]

FINAL_ANSWER_PROMPT: Final = (
    "You are out of tool calls for this request. Without calling a tool, answer the user: "
    "say what you found, and what is still left to do, in plain sentences. Do not "
    "describe an action you did not take as taken."
)
"""The last request of a run that ran out of rounds or budget (no tools are offered)."""

SYNTHESIS_PROMPT: Final = (
    "The context budget for this request is spent. Make at most one more round of tool "
    "calls, and only if it is essential; then answer with what you have."
)
"""Added once when trimming cannot bring a request under the budget."""


def fan_out_note(limit: int) -> str:
    """The result given to each call dropped because a reply asked for too many at once."""
    return (
        f"not run: at most {limit} tool calls are run from one reply; "
        "call it again in your next step if you still need it"
    )


OUT_OF_CONTEXT_TEXT: Final = (
    "I could not finish: the conversation no longer fits the model's context window "
    "(about {tokens:,} tokens for a window of {window:,})."
)
"""Said for the model when not even the final, trimmed request fits its window."""
