"""The answer check alone, through its hooks (issue 37): no model, no budget, no run."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from leanloop.loop.policies.answer_check import AnswerCheckConfig, tool_results
from leanloop.loop.policies.hooks import AskAlone, Policies
from leanloop.loop.profiles import DEFAULT, SMALL
from leanloop.protocol import text_result_turn
from leanloop.report import RunReport

from .conftest import ViewMaker

QUESTION = "How many laptops are in inventory.json?"
INVENTORY = (
    '    1| {\n    2|   "items": [\n    3|     {"name": "laptop", "count": 42},\n'
    '    4|     {"name": "keyboard", "count": 120}\n    5|   ]\n    6| }\n'
    "[lines 1-6 of 6; end of file]"
)
HISTORY = [
    HumanMessage(QUESTION),
    AIMessage(
        "", tool_calls=[{"name": "read_file", "args": {"path": "inventory.json"}, "id": "c1"}]
    ),
    ToolMessage(INVENTORY, tool_call_id="c1", name="read_file"),
]


def test_results_are_named_by_the_file_a_reader_read_else_by_the_tool() -> None:
    other = [
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"key": "x"}, "id": "c2"}]),
        ToolMessage("x = 1", tool_call_id="c2", name="lookup"),
    ]
    assert tool_results([*HISTORY, *other]) == [("inventory.json", INVENTORY), ("lookup", "x = 1")]


def test_a_distractor_asks_once_more_and_a_settling_reply_replaces_the_answer(
    make_view: ViewMaker,
) -> None:
    report = RunReport()
    view = make_view(history=HISTORY, question=QUESTION, profile=SMALL, report=report)
    policy = AnswerCheckConfig().start()
    ask = policy.before_answer(view, "120")
    assert isinstance(ask, AskAlone)
    assert "inventory.json line 3:" in ask.prompt and "inventory.json line 4:" in ask.prompt
    assert policy.answer_asked(view, "120", " There are 42 laptops. ") == "There are 42 laptops."
    assert report.answer_check is not None
    assert report.answer_check["verdict"] == "asked_again"
    assert report.answer_check["first_answer"] == "120"


@pytest.mark.parametrize("reply", ["It is 120.", None])
def test_a_reply_that_does_not_settle_it_leaves_the_answer(
    make_view: ViewMaker, reply: str | None
) -> None:
    report = RunReport()
    view = make_view(history=HISTORY, question=QUESTION, profile=SMALL, report=report)
    policy = AnswerCheckConfig("ask_again").start()
    assert policy.before_answer(view, "120") is not None
    assert policy.answer_asked(view, "120", reply) == "120"
    assert report.answer_check is not None and report.answer_check["verdict"] == "kept"


@pytest.mark.parametrize(
    ("mode", "profile", "verdict"),
    [("auto", DEFAULT, "doubtful"), ("note", SMALL, "doubtful"), ("off", SMALL, None)],
)
def test_auto_outside_the_small_profile_note_and_off_ask_nothing(
    make_view: ViewMaker, mode: str, profile: object, verdict: str | None
) -> None:
    report = RunReport()
    view = make_view(history=HISTORY, question=QUESTION, profile=profile, report=report)
    policy = AnswerCheckConfig(mode).start()  # type: ignore[arg-type]
    assert policy.before_answer(view, "120") is None
    assert (report.answer_check or {}).get("verdict") == verdict


def test_a_grounded_answer_is_recorded_and_nothing_asked(make_view: ViewMaker) -> None:
    report = RunReport()
    view = make_view(history=HISTORY, question=QUESTION, profile=SMALL, report=report)
    assert AnswerCheckConfig().start().before_answer(view, "42 laptops.") is None
    assert report.answer_check == {"verdict": "grounded", "check": "'42' on inventory.json line 3"}


def test_nothing_read_nothing_checked(make_view: ViewMaker) -> None:
    report = RunReport()
    view = make_view(
        history=[HumanMessage(QUESTION)], question=QUESTION, profile=SMALL, report=report
    )
    assert AnswerCheckConfig().start().before_answer(view, "120") is None
    assert report.answer_check is None


def test_policies_hand_the_answer_to_the_check(make_view: ViewMaker) -> None:
    view = make_view(history=HISTORY, question=QUESTION, profile=SMALL)
    policy = AnswerCheckConfig().start()
    asked = Policies((policy,)).before_answer(view, "120")
    assert asked is not None and asked[0] is policy


def test_a_text_mode_turn_is_one_result_per_block_named_by_its_written_call() -> None:
    written = AIMessage(
        '```tool\n{"name": "read_file", "arguments": {"path": "orders.json"}}\n```\n'
        '```tool\n{"name": "read_file", "arguments": {"path": "inventory.json"}}\n```'
    )
    turn = text_result_turn(
        f'<tool_result name="read_file">\n    1| {{"laptop_orders": 7}}\n</tool_result>\n\n'
        f'<tool_result name="read_file">\n{INVENTORY}\n</tool_result>\n\n'
        f"Answer my question in plain text using these results: {QUESTION}"
    )
    assert tool_results([HumanMessage(QUESTION), written, turn]) == [
        ("orders.json", '    1| {"laptop_orders": 7}'),
        ("inventory.json", INVENTORY),
    ]
    # Calls written in a form the check cannot read without the tools' parameters: the
    # blocks keep their tool's name.
    unread = AIMessage('read_file("orders.json")\nread_file("inventory.json")')
    assert [source for source, _ in tool_results([unread, turn])] == ["read_file", "read_file"]


def test_a_resumed_turns_reads_are_read_once(make_view: ViewMaker) -> None:
    # The driver puts a resumed turn's stored steps into the history and keeps their
    # results in resumed_reads too: the same messages.
    report = RunReport()
    view = make_view(
        history=HISTORY,
        question=QUESTION,
        profile=SMALL,
        report=report,
        resumed_reads=HISTORY[-1:],
    )
    ask = AnswerCheckConfig().start().before_answer(view, "There are 35 laptops.")
    assert isinstance(ask, AskAlone)
    assert ask.prompt.count("inventory.json line 3:") == 1, ask.prompt
