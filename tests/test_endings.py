"""The judge of a reply meant to be a run's answer, and the words of each ending (issue 37)."""

from __future__ import annotations

import pytest

from leanloop.endings import describe_ending, ending_text, judge_reply, read_clause

QUESTION = "Who is described in bio.txt and what did she do?"
SAID = [
    "Stop calling tools: you already have their results above. Using only those results, "
    f"answer in one or two sentences: {QUESTION}\nIf they do not hold the answer, say so."
]


def _judge(text: str, *, read: bool = True) -> str:
    return judge_reply(text, question=QUESTION, instructions=SAID, read_something=read).why


@pytest.mark.parametrize(
    "reply",
    [
        "Ada Lovelace.",
        "Ada Lovelace published the first algorithm.",
        "It does not say.",
        "Ada Lovelace published the first algorithm. If they do not hold the answer, say so.",
        '{"name": "Ada"}',  # JSON the user may have asked for: not the request's shape
    ],
)
def test_answers_stay_answers(reply: str) -> None:
    assert _judge(reply) == ""


def test_a_short_exchange_is_no_echo() -> None:
    judged = judge_reply("Hello.", question="Hello?", instructions=SAID, read_something=False)
    assert judged.is_answer


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("If they do not hold the answer, say so.", "it repeats the loop's own instruction"),
        ("Using only those results, answer in one or two sentences.", "it repeats the loop's"),
        (QUESTION, "it repeats the question"),
        ("who is described in bio.txt", "it repeats the"),
        ("   ", "it holds no words"),
        ('{"found": "", "left_to_do": "read it"}', "the request's JSON shape with nothing"),
    ],
)
def test_non_answers_say_what_they_are(reply: str, why: str) -> None:
    assert why in _judge(reply)


def test_a_finding_in_the_request_shape_is_the_answer_only_when_something_was_read() -> None:
    shaped = '```json\n{"Found": "Ada Lovelace.", "Remaining": "none"}\n```'

    assert judge_reply(shaped, question=QUESTION, instructions=SAID, read_something=True).text == (
        "Ada Lovelace."
    )
    assert "JSON shape" in _judge(shaped, read=False)


def test_each_ending_names_what_stopped_it_and_what_was_read() -> None:
    assert ending_text("max_rounds", read=["read_file(path=a.txt)"]) == (
        "I could not finish: it used all its rounds before the model answered. "
        "What was read: read_file(path=a.txt)."
    )
    assert read_clause([]) == "No tool call returned data, so there is nothing to answer from."


def test_the_ending_line_never_claims_a_finding_that_is_not_there() -> None:
    nothing = {"stop_reason": "repeated_calls", "rests_on": [], "tool_calls": [{"ok": False}]}
    found = {"stop_reason": "max_rounds", "rests_on": ["read_file(path=a)"], "tool_calls": [{}]}

    assert "no tool call returned data" in describe_ending(nothing)
    assert "from what 1 tool call returned" in describe_ending(found)
    assert describe_ending({"stop_reason": "answer"}) == ""
