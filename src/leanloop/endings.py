"""How a run ends when it does not end with an answer, and how the loop tells.

A reply is judged before it becomes a run's answer. A small model, asked "answer in one or
two sentences: {question}. If the results do not hold the answer, say so.", sometimes
writes that instruction back, or the question, or a JSON object shaped like the request
("found" / "left to do"). None of those is an answer, and a caller who reads only the
text cannot tell: the run then ends as ``no_answer`` (or by what stopped it), and its text
says so in words (issue 37).

A run that stopped for a limit (rounds, budget, repeats) ends with the text its last,
tool-less request got. That text rests on what the tools returned: when no tool call
returned anything, it rests on nothing, and it is replaced by the ending's own words.

Each stop reason has one wording here (:data:`STOP_WORDS`): the CLI, the HTML page,
``serve`` and ``batch`` say the same thing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from leanloop.report import ToolCallRecord

__all__ = [
    "STOP_WORDS",
    "Judgement",
    "describe_ending",
    "ending_text",
    "judge_reply",
    "read_clause",
    "rests_on",
]

STOP_WORDS: Final[Mapping[str, str]] = {
    "max_rounds": "it used all its rounds before the model answered",
    "budget_exhausted": "the context budget was spent before the model answered",
    "repeated_calls": "the model kept repeating the same tool calls instead of answering",
    "no_answer": "the model's reply was not an answer",
    "paused": "the run is waiting for a person to approve tool calls",
}
"""What stopped a run that did not end with an answer, per stop reason, in a few words."""

_ECHO_MIN_WORDS = 4
"""A sentence of fewer words is never taken for an echo ("Port 7431." is an answer)."""

_QUESTION_COVER = 0.8
"""Share of the question's words a reply made of nothing else must repeat to be an echo."""

_SYNTHESIS_KEYS: Final = frozenset(
    {
        "found",
        "what_was_found",
        "remaining",
        "left",
        "left_to_do",
        "still_left",
        "still_to_do",
        "to_do",
        "todo",
        "what_is_left",
        "missing",
        "next_steps",
    }
)
"""Keys of the JSON a small model writes when asked "say what you found, and what is
left": the request's own shape, not an answer."""

_FOUND_KEYS: Final = ("found", "what_was_found", "answer")
"""Keys whose text, in such an object, is the model's finding."""

_NOTHING: Final = frozenset({"", "none", "nothing", "n/a", "null", "-"})
"""Values that say a field is empty."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


@dataclass(frozen=True)
class Judgement:
    """What the loop makes of a reply meant to be the run's answer.

    Attributes:
        text: The answer to give: the reply as it is, or the finding taken out of a
            request-shaped JSON object.
        why: ``""`` for an answer; else what the reply is instead ("it repeats the
            loop's instruction", "it repeats the question", "it is the request's JSON
            shape with nothing found").
    """

    text: str
    why: str = ""

    @property
    def is_answer(self) -> bool:
        """Whether the reply can stand as the run's answer."""
        return not self.why


def judge_reply(
    text: str, *, question: str, instructions: Iterable[str], read_something: bool
) -> Judgement:
    """Judge ``text``, a reply the loop is about to return as the run's answer.

    Args:
        text: The reply's answer text (tool calls already taken out).
        question: The user's request.
        instructions: The texts the loop itself put into the conversation (final-answer,
            repeats, answer-turn and synthesis prompts, with the question filled in).
        read_something: Whether any tool call of the run returned data.

    Returns:
        The judgement: an answer (maybe unwrapped from a request-shaped object), or why not.
    """
    stripped = text.strip()
    shaped = _synthesis_object(stripped)
    if shaped is not None:
        found = _finding(shaped)
        if found and read_something:
            return Judgement(found)
        return Judgement(text, "it is the request's JSON shape with nothing found in it")
    words = _words(stripped)
    if not words:
        return Judgement(text, "it holds no words")
    asked = _words(question)
    # A short exchange ("Hello?" / "Hello.") is no echo: only a question of some words is.
    echoed = set(words) <= set(asked) and len(words) >= _QUESTION_COVER * len(asked)
    if len(words) >= _ECHO_MIN_WORDS and echoed:
        return Judgement(text, "it repeats the question")
    said = [" ".join(_words(line)) for line in instructions]
    sentences = [s for s in (_words(part) for part in _SENTENCE_END.split(stripped)) if s]
    if sentences and all(_echoes(s, said, asked) for s in sentences):
        return Judgement(text, "it repeats the loop's own instruction")
    return Judgement(text)


def rests_on(calls: Sequence[ToolCallRecord], *, resumed: bool = False) -> list[str]:
    """The calls whose results a run read, as ``name(key=value, ...)`` (first 80 chars).

    A call counts when its tool ran and did not fail (a repeat's reminder is not data);
    ``resumed`` adds the results an earlier process of the turn read.
    """
    seen: list[str] = []
    for call in calls:
        if call.ok and not call.repeated:
            args = ", ".join(f"{k}={v}" for k, v in call.args.items())
            named = f"{call.name}({args})"
            named = named if len(named) <= 80 else named[:79] + "…"
            if named not in seen:
                seen.append(named)
    if resumed:
        seen.append("the results read before the turn was resumed")
    return seen


def ending_text(reason: str, *, read: Sequence[str], why: str = "") -> str:
    """The text a run ends with when it has no answer to give.

    Args:
        reason: The stop reason (a key of :data:`STOP_WORDS`).
        read: What the run read (:func:`rests_on`).
        why: For ``no_answer``, what the reply was instead.
    """
    stop = STOP_WORDS.get(reason, reason)
    head = f"I could not finish: {stop}" + (f" ({why})" if why else "") + "."
    return f"{head} {read_clause(read)}"


def read_clause(read: Sequence[str]) -> str:
    """The sentence that says what an ending rests on: what was read, or that nothing was."""
    if not read:
        return "No tool call returned data, so there is nothing to answer from."
    return f"What was read: {'; '.join(read)}."


def describe_ending(report: Mapping[str, object]) -> str:
    """How a run ended, in one clause, from its report dict (``""`` for an answer).

    ``the context budget was spent before the model answered; the text is the model's
    last reply, from what 2 tool calls returned``, or ``…; the text says what stopped the
    run: no tool call returned data`` — never "composed from what was found" when
    nothing was found.
    """
    reason = str(report.get("stop_reason") or "")
    if reason in {"", "answer"}:
        return ""
    if reason == "failed":
        return "the run failed"
    stop = STOP_WORDS.get(reason, reason)
    read = report.get("rests_on")
    count = len(read) if isinstance(read, list) else 0
    results = f"{count} tool call{'' if count == 1 else 's'}"
    if report.get("set_aside") is not None or reason == "no_answer":
        basis = f"what was read ({results})" if count else "no tool call returned data"
        return f"{stop}; the text is no answer: it says what stopped the run and {basis}"
    if not count and report.get("tool_calls"):
        return f"{stop}; the text says what stopped the run: no tool call returned data"
    if not count:
        return f"{stop}; the text is the model's last reply, from the conversation alone"
    return f"{stop}; the text is the model's last reply, from what {results} returned"


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _echoes(sentence: list[str], said: Sequence[str], asked: list[str]) -> bool:
    """Whether a sentence repeats the loop's instructions or the question."""
    if len(sentence) < _ECHO_MIN_WORDS:
        return False
    joined = f" {' '.join(sentence)} "
    if any(joined in f" {line} " for line in said):
        return True
    return bool(asked) and joined in f" {' '.join(asked)} "


def _synthesis_object(text: str) -> dict[str, object] | None:
    """The JSON object ``text`` is, when its keys are the request's "found / left" shape."""
    body = _FENCE.sub("", text).strip()
    if not (body.startswith("{") and body.endswith("}")):
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not data:
        return None
    keys = {re.sub(r"\W+", "_", str(k).strip().lower()).strip("_") for k in data}
    if not keys & _SYNTHESIS_KEYS:
        return None
    return {re.sub(r"\W+", "_", str(k).strip().lower()).strip("_"): v for k, v in data.items()}


def _finding(data: Mapping[str, object]) -> str:
    """The finding of a request-shaped object, as plain text ("" when it found nothing)."""
    for key in _FOUND_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip().lower() not in _NOTHING:
            return value.strip()
    return ""
