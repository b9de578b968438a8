"""How the first-agent benchmark judges one run (issue 37).

Four outcomes, decided in this order:

1. **non-answer**: the run failed or timed out; or it ended with a stop reason other than
   ``answer`` on a question of shape ``a``/``b``; or its text is not an answer: empty, a
   JSON object or array (the synthesis request's ``{"found": …}`` shape), a bare tool call,
   the loop's own prompt written back (eight words in a row of one of leanloop's prompts)
   or the question written back (at least three words, each a word that says nothing,
   such as "the" or "is", or one of the question's, used no more often than there).
2. Shape ``c`` (the workspace does not hold it): **honest-not-found** when the run ended
   with a non-answer stop (``max_rounds``, ``repeated_calls``, …: an honest ending) or the
   answer says it is not there (:func:`says_not_found`); else **wrong**.
3. Shapes ``a``/``b``: **correct** when the expected regex matches and the distractor's
   does not; else **honest-not-found** when the answer says it is not there (counted
   apart, not as correct); else **wrong**.

A non-answer is *passed off* when the channel said "answer" all the same: exit 0 (CLI),
``stop_reason == "answer"`` without an exception (Python), ``finish_reason: "stop"``
(``serve``). The acceptance wants none.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Literal

from benchmarks.first_agent_cases import Case

__all__ = [
    "CATEGORIES",
    "FAILED_STOPS",
    "Category",
    "classify",
    "non_answer_text",
    "says_not_found",
]

Category = Literal["correct", "not-found", "wrong", "non-answer"]
CATEGORIES: tuple[Category, ...] = ("correct", "not-found", "wrong", "non-answer")

FAILED_STOPS = frozenset({"failed", "timeout", "error"})
"""Endings that are no ending of the run's own: it failed, the benchmark killed it after
its timeout, or the channel broke (no report, an HTTP error)."""

_NOT = r"(?:\s+not|n[’']t)"
_SAID = (
    r"(?:found|mentioned|listed|specified|stated|included|available|present|provided|given"
    r"|defined|documented|shown|known|recorded|exist|exists|say|says|mention|contain|include"
    r"|specify|list|state|have|hold|provide|give|show|find|determine|locate|tell|know)"
)
_NOT_FOUND = re.compile(
    rf"""
      \bnot\s+(?:\w+\s+){{0,2}}{_SAID}\b
    | \b(?:is|are|was|were|does|do|did|could|can|has|have){_NOT}\s+(?:\w+\s+){{0,2}}{_SAID}\b
    | \bcan[’']t\s+(?:\w+\s+){{0,1}}{_SAID}\b
    | \bno\s+(?:[\w-]+\s+){{0,3}}(?:information|mention|record|records|entry|entries|data
        |details?|such|file|match|matches|results?|value|section)\b
    | \bno\s+(?:[\w-]+\s+){{0,3}}(?:is|are|was|were)\s+{_SAID}\b
    | \bthere\s+(?:is|are)\s+no\b
    | \bcannot\s+(?:\w+\s+){{0,1}}{_SAID}\b
    | \bunable\s+to\s+(?:find|determine|locate|answer|tell)\b
    | \bnothing\s+(?:about|on|regarding|for)\b
    | \bI\s+(?:do\s+not|don[’']t)\s+know\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


def says_not_found(text: str) -> bool:
    """Whether ``text`` says the asked thing is not there ("not listed", "does not say", …)."""
    return _NOT_FOUND.search(text) is not None


_WORD = re.compile(r"[^\W_]+(?:[.'’-][^\W_]+)*", re.UNICODE)
_FENCE = re.compile(r"^\s*```[\w-]*\s*|\s*```\s*$")
_BARE_CALL = re.compile(r"^\s*(?:<tool_call>|[A-Za-z_]\w*\([^\n]*\)\s*$)")
_LOOP_ENDING = re.compile(r"^\W*I could not finish\b", re.IGNORECASE)
"""The wording of the loop's own endings ("I could not finish: …"), not an answer."""
_ECHO_RUN = 8
"""Words in a row shared with one of the loop's prompts that make an answer an echo."""


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _strings(getattr(value, f.name))
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


@cache
def loop_prompts() -> tuple[str, ...]:
    """The loop's own prompt texts, gathered from the installed leanloop.

    Every string constant of the modules that hold them, and every text of the prompt
    profiles; a module another version lacks is skipped.
    """
    texts: list[str] = []
    for name in ("leanloop.loop.prompts", "leanloop.loop.profiles", "leanloop.endings"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr in vars(module).values():
            texts.extend(t for t in _strings(attr) if len(t.split()) >= _ECHO_RUN)
    return tuple(dict.fromkeys(texts))


@cache
def _prompt_runs(extra: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    runs: set[tuple[str, ...]] = set()
    for text in (*loop_prompts(), *extra):
        for part in re.split(r"\{\w*\}", text):
            words = _words(part)
            runs.update(tuple(words[i : i + _ECHO_RUN]) for i in range(len(words) - _ECHO_RUN + 1))
    return frozenset(runs)


def _echoes_prompt(text: str, extra: Iterable[str]) -> bool:
    words = _words(text)
    runs = _prompt_runs(tuple(extra))
    return any(tuple(words[i : i + _ECHO_RUN]) in runs for i in range(len(words) - _ECHO_RUN + 1))


_GLUE = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "it",
        "its",
        "this",
        "that",
        "there",
        "here",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "and",
        "or",
        "as",
        "according",
        "file",
        "question",
    ]
)
"""Words an echo may add to the question's own without saying anything."""


def _echoes_question(text: str, question: str) -> bool:
    words = _words(text)
    if len(words) < 3:
        return False
    # Nothing but the question's own words, none of them more often than the question
    # has it ("the guest Wi-Fi is guest" says something: a password).
    said = Counter(w for w in words if w not in _GLUE)
    asked = Counter(_words(question))
    return all(asked[w] >= n for w, n in said.items())


def _is_json(text: str) -> bool:
    body = _FENCE.sub("", text).strip()
    if not body.startswith(("{", "[")):
        return False
    try:
        json.loads(body)
    except ValueError:
        # A cut-off object ({"found": "…) is still the request's shape, not prose.
        return body.startswith("{") and re.match(r'\{\s*"\w+"\s*:', body) is not None
    return True


def non_answer_text(text: str, question: str, *, prompts: Iterable[str] = ()) -> str:
    """Why ``text`` is not an answer to ``question`` ("" when it may be one).

    ``prompts``: more texts the run's model was given (the agent's system prompt).
    """
    if not text.strip():
        return "empty answer"
    if _is_json(text):
        return "JSON object"
    if _BARE_CALL.match(text):
        return "a tool call as text"
    if _LOOP_ENDING.match(text):
        return "the loop's ending text"
    if _echoes_prompt(text, prompts):
        return "the loop's prompt echoed"
    if _echoes_question(text, question):
        return "the question echoed"
    return ""


def _found(pattern: str | None, text: str) -> bool:
    return pattern is not None and re.search(pattern, text, re.IGNORECASE) is not None


def classify(
    case: Case, answer: str, stop_reason: str, *, prompts: Iterable[str] = ()
) -> tuple[Category, str]:
    """The run's outcome and a few words on why (see the module's docstring)."""
    if stop_reason in FAILED_STOPS:
        return "non-answer", f"stop {stop_reason}"
    if stop_reason != "answer":
        if case.shape == "c":
            return "not-found", f"ended by {stop_reason}"
        return "non-answer", f"stop {stop_reason}"
    why = non_answer_text(answer, case.question, prompts=prompts)
    if why:
        return "non-answer", why
    if case.shape == "c":
        if says_not_found(answer):
            return "not-found", "says it is not there"
        if _found(case.distractor, answer):
            return "wrong", "answered the distractor"
        return "wrong", "answered something"
    has_fact = _found(case.expect, answer)
    has_distractor = _found(case.distractor, answer)
    if has_fact and not has_distractor:
        return "correct", ""
    if says_not_found(answer) and not has_fact:
        return "not-found", "says it is not there"
    if has_fact:
        return "wrong", "the fact and the distractor"
    return "wrong", "the distractor" if has_distractor else "not the fact"
