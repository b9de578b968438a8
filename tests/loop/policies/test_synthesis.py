"""The synthesis flow, alone through its hooks: one more round once the budget is spent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage

from leanloop import events
from leanloop.budget.run import Prepared
from leanloop.loop.policies.hooks import AddTurn, FinalRequest, RequestShape, Round, StepView
from leanloop.loop.policies.synthesis import SynthesisConfig
from leanloop.loop.profiles import DEFAULT, SMALL

ViewMaker = Callable[..., StepView]

ROUND = Round([], exhausted=False)


def _prepared(*, over_budget: bool, tokens: int = 9_000) -> Prepared:
    return Prepared(
        messages=[], tools=[], chars=0, tokens=tokens, over_budget=over_budget, fits_window=True
    )


async def test_a_request_under_the_budget_is_sent_as_it_is(make_view: ViewMaker) -> None:
    policy = SynthesisConfig().start()

    assert await policy.before_request(make_view(), _prepared(over_budget=False)) is None
    assert policy.after_round(make_view(), ROUND) is None
    assert policy.at_end(make_view(), "answer") == "answer"


async def test_the_first_request_over_the_budget_adds_the_instruction(
    make_view: ViewMaker, emitted: list[tuple[str, dict[str, Any]]]
) -> None:
    view = make_view(step=3)
    policy = SynthesisConfig().start()

    decision = await policy.before_request(view, _prepared(over_budget=True))

    assert decision == AddTurn(HumanMessage(content=DEFAULT.synthesis), "budget_exhausted")
    assert policy.started
    assert view.report.events == ["step 4: budget spent, synthesis flow started"]
    ceiling = view.plan.ceiling
    expected = {"reason": "budget_exhausted", "estimate": 9_000, "ceiling": ceiling}
    assert emitted == [(events.SYNTHESIS, expected)]


async def test_once_started_the_next_request_over_the_budget_ends_the_run(
    make_view: ViewMaker,
) -> None:
    policy = SynthesisConfig(prompt="answer now").start()
    first = await policy.before_request(make_view(), _prepared(over_budget=True))

    assert isinstance(first, AddTurn) and first.message.content == "answer now"
    again = await policy.before_request(make_view(), _prepared(over_budget=True))
    assert again == FinalRequest("budget_exhausted")


async def test_after_the_flow_started_a_round_ends_and_an_answer_counts_as_budget(
    make_view: ViewMaker,
) -> None:
    policy = SynthesisConfig().start()
    await policy.before_request(make_view(), _prepared(over_budget=True))

    assert policy.after_round(make_view(), ROUND) == FinalRequest("budget_exhausted")
    assert policy.at_end(make_view(), "answer") == "budget_exhausted"
    assert policy.at_end(make_view(), "no_answer") == "no_answer"


async def test_with_an_answer_turn_the_flow_keeps_the_tool_list_out(make_view: ViewMaker) -> None:
    shape = RequestShape(tools=True, tool_list=True)
    policy = SynthesisConfig().start()
    small, plain = make_view(profile=SMALL), make_view(profile=DEFAULT)

    assert policy.shape_request(small, shape) == shape  # not started yet
    await policy.before_request(small, _prepared(over_budget=True))
    assert policy.shape_request(small, shape) == RequestShape(tools=True, tool_list=False)
    assert policy.shape_request(plain, shape) == shape  # no answer turn: the list stays


def test_each_run_starts_its_own_flow() -> None:
    config = SynthesisConfig()
    first, second = config.start(), config.start()
    first.started = True

    assert not second.started
