"""SharedState: the budget's caches and their clock in one object (issue 40, ADR 0038).

What the object holds, apart from the agents that hold it (tests/agent/test_shared_state.py
shows two agents with states of their own, the process's state, and a run's clock): the
trimmed copies of each state are its own, weak on their originals; a state made for a
batch task learns apart and shares the rest; ``clear`` forgets everything; the state's
clock decides when a server without ``/tokenize`` is asked again.
"""

from __future__ import annotations

import asyncio
import gc

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from leanloop.budget import (
    PROCESS_STATE,
    ContextPlan,
    MessageCounter,
    SharedState,
    TokenEstimator,
    fit_messages,
    is_trimmed,
    trim_result,
)
from leanloop.budget.fit import RunFitter
from leanloop.testing.server import FakeModelServer


def _result(text: str = "first line\n" + "x" * 2_000) -> ToolMessage:
    return ToolMessage(text, tool_call_id="c1", name="read_file")


def _history(count: int) -> list[BaseMessage]:
    history: list[BaseMessage] = [HumanMessage("Read the files.")]
    for step in range(count):
        call = {"name": "read_file", "args": {"path": f"f{step}"}, "id": f"c{step}"}
        history.append(AIMessage("", tool_calls=[{**call, "type": "tool_call"}]))
        history.append(ToolMessage(f"f{step}\n" + "y" * 3_000, tool_call_id=f"c{step}"))
    return history


def test_a_state_keeps_one_trimmed_copy_of_a_result_and_another_state_its_own() -> None:
    first, second = SharedState(), SharedState()
    original = _result()

    copy = trim_result(original, first.trimmed)

    assert is_trimmed(copy) and copy.text.startswith("first line\n"), copy.text
    assert trim_result(original, first.trimmed) is copy
    assert trim_result(original, second.trimmed) is not copy
    assert (len(first.trimmed), len(second.trimmed)) == (1, 1)


def test_without_a_state_the_copies_are_the_process_s() -> None:
    original = _result()

    assert trim_result(original) is trim_result(original, PROCESS_STATE.trimmed)


def test_a_copy_goes_when_its_original_is_collected() -> None:
    state = SharedState()
    original = _result()
    trim_result(original, state.trimmed)

    del original
    gc.collect()

    assert len(state.trimmed) == 0


def test_fitting_keeps_its_copies_in_the_state_it_is_given() -> None:
    state = SharedState()
    counter = MessageCounter(TokenEstimator())
    plan = ContextPlan.for_window(4_000, budget_percent=0.85, max_tokens=None)
    history = _history(6)

    fitted = fit_messages(history, plan=plan, count=counter.count_fn(), copies=state.trimmed)
    fitter = RunFitter(counter, copies=state.trimmed)
    again = fitter.fit(history, plan=plan)

    assert fitted.trimmed > 0 and len(state.trimmed) == fitted.trimmed
    trimmed = [m for m in fitted.messages if is_trimmed(m)]
    # The run's fitter finds the copies the first fitting made: the same objects.
    assert [id(m) for m in again.messages if is_trimmed(m)] == [id(m) for m in trimmed]


def test_a_state_of_its_own_estimators_shares_the_rest() -> None:
    state = SharedState()

    own = state.with_own_estimators()

    assert own.estimators is not state.estimators
    assert own.windows is state.windows
    assert own.server_tokens is state.server_tokens
    assert own.trimmed is state.trimmed
    assert own.clock is state.clock


def test_clear_forgets_what_was_learned_and_kept() -> None:
    state = SharedState()
    original = _result()
    trim_result(original, state.trimmed)
    learned = state.estimators.for_endpoint("http://127.0.0.1:1/v1", "m")
    learned.observe(estimated_chars=1_000, input_tokens=500)

    state.clear()

    assert len(state.trimmed) == 0
    fresh = state.estimators.for_endpoint("http://127.0.0.1:1/v1", "m")
    assert fresh is not learned and fresh.observations == 0


def test_the_state_s_clock_decides_when_a_server_without_tokenize_is_asked_again() -> None:
    now = [1_000.0]
    state = SharedState(clock=lambda: now[0])

    with FakeModelServer(tokenizer=None) as server:

        def count() -> int | None:
            return asyncio.run(state.server_tokens.count(server.base_url, "some text"))

        asked = [count(), count()]
        now[0] += 59.0  # a server without the endpoint is not asked for a minute
        asked.append(count())
        before = server.paths.count("/tokenize")
        now[0] += 2.0
        asked.append(count())

        assert asked == [None] * 4
        assert (before, server.paths.count("/tokenize")) == (1, 2), server.paths
