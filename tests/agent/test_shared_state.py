"""One object owns what outlives a run (issue 40, ADR 0038).

An agent's runs keep the windows the servers said, the token estimates learned from their
counts and the trimmed copies in the agent's :class:`~leanloop.budget.SharedState`: the
process's (:data:`~leanloop.budget.PROCESS_STATE`) unless the agent is given its own.
Two agents with states of their own learn nothing from each other; two agents given
none share what they learn. The state's ``clock`` ages its caches (a fake one here: no
test waits for an answer to expire); a run's own time, ``elapsed_s``, is on the event
loop's clock, the one its time limits fire on, so on virtual time it is exactly what the
scripted delays and the limit add up to.
"""

# No ``from __future__ import annotations``: pydantic resolves the tools' annotations.

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from leanloop.agent import LLMAgent
from leanloop.budget import PROCESS_STATE, SharedState, TokenEstimator
from leanloop.events import EventRecorder
from leanloop.spec import load_specs
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.testing.server import FakeModelServer

_USAGE = {"input_tokens": 400, "output_tokens": 5}
"""The prompt size every scripted reply reports: far above the estimate, so a run learns."""


class FakeClock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    """A llama.cpp stand-in that says its window (8,192); the chat goes to scripted models."""
    with FakeModelServer(model="qwen", n_ctx=8192, tokenizer=None, template=None) as fake:
        yield fake


def _served(server: FakeModelServer, state: SharedState | None = None) -> LLMAgent:
    spec = AgentSpec(
        name="served",
        model=ModelSpec(
            provider="openai-compatible", model="qwen", base_url=server.base_url, api_key="x"
        ),
    )
    model = ScriptedChatModel(replies=["Hello."], repeat_last=True)
    if state is None:
        return LLMAgent.from_spec(spec, model=model)
    return LLMAgent.from_spec(spec, model=model, shared_state=state)


def _scripted(state: SharedState | None = None) -> LLMAgent:
    """An agent on a scripted model whose every reply reports :data:`_USAGE`."""
    model = ScriptedChatModel(replies=[{"content": "Hello.", "usage": _USAGE}], repeat_last=True)
    options: dict[str, Any] = {} if state is None else {"shared_state": state}
    return LLMAgent(model=model, name="scripted", context_window=200_000, **options)


def _report(agent: LLMAgent, question: str = "Say hello.") -> dict[str, Any]:
    answer = asyncio.run(agent.ainvoke(question))
    assert isinstance(answer, AIMessage)
    report: dict[str, Any] = answer.response_metadata["leanloop"]
    return report


def _probes(server: FakeModelServer) -> int:
    """How many times the server was asked its window (llama.cpp's ``/props``)."""
    return server.paths.count("/props")


def _first_estimate(report: dict[str, Any]) -> int:
    estimate: int = report["requests"][0]["estimated_tokens"]
    return estimate


# --- the window --------------------------------------------------------------------------


def test_agents_with_states_of_their_own_each_ask_the_server_its_window(
    server: FakeModelServer,
) -> None:
    clock = FakeClock()
    first, second = SharedState(clock=clock), SharedState(clock=clock)

    one = _report(_served(server, first))
    again = _report(_served(server, first))  # the first state's answer, still fresh
    other = _report(_served(server, second))

    for report in (one, again, other):
        assert (report["window"], report["window_source"]) == (8192, "server:llama.cpp")
    assert _probes(server) == 2, server.paths


def test_agents_given_no_state_share_the_process_s_window(server: FakeModelServer) -> None:
    first, second = _served(server), _served(server)

    assert first.shared_state is second.shared_state is PROCESS_STATE
    _report(first)
    _report(second)

    assert _probes(server) == 1, server.paths


def test_the_state_s_clock_decides_when_the_server_is_asked_again(
    server: FakeModelServer,
) -> None:
    clock = FakeClock()
    agent = _served(server, SharedState(clock=clock))

    _report(agent)
    clock.now += 29.0  # a server's answer holds for 30 s
    _report(agent)
    assert _probes(server) == 1, server.paths

    clock.now += 2.0
    _report(agent)
    assert _probes(server) == 2, server.paths


# --- the token estimate ------------------------------------------------------------------


def test_agents_with_states_of_their_own_learn_no_token_ratio_from_each_other() -> None:
    first, second = SharedState(), SharedState()
    agent = _scripted(first)

    before = _first_estimate(_report(agent))
    learned = _first_estimate(_report(agent))
    other = _first_estimate(_report(_scripted(second)))

    assert learned > before  # the server counted more than the estimate: the agent learned
    assert other == before  # ... and an agent with a state of its own did not
    assert [_estimator(agent, state).observations for state in (first, second)] == [2, 1]


def test_agents_given_no_state_learn_into_the_process_s_estimator() -> None:
    first, second = _scripted(), _scripted()
    estimator = _estimator(first, PROCESS_STATE)
    seen = estimator.observations

    _report(first)
    _report(second)

    assert estimator is _estimator(second, PROCESS_STATE)
    assert estimator.observations == seen + 2


def _estimator(agent: LLMAgent, state: SharedState) -> TokenEstimator:
    """The estimator ``agent``'s runs learn into in ``state``: one per endpoint and model
    (a model built in Python: its class and its name)."""
    model = agent.spec.model
    assert model.class_path is not None and model.model is not None, model
    return state.estimators.for_endpoint(model.class_path, model.model)


# --- the clock of a run ------------------------------------------------------------------

_HELD = 3_600.0
"""Seconds the slow lookup would take: far past the agent's time limit."""
_LIMIT = 5.0


@tool
async def slow_lookup(topic: str) -> str:
    """Look a topic up (slowly)."""
    await asyncio.sleep(_HELD)
    return f"{topic}: nothing"


@pytest.mark.looptime  # the event loop's clock is virtual: the fake clock of a run's time
async def test_elapsed_s_is_on_the_clock_the_time_limits_fire_on() -> None:
    model = ScriptedChatModel(
        replies=[
            {
                "tool_calls": [{"name": "slow_lookup", "args": {"topic": "x"}, "id": "c1"}],
                "delay": 2.0,
            },
            {"content": "The lookup timed out.", "delay": 1.0},
        ]
    )
    agent = LLMAgent(
        model=model,
        tools=[slow_lookup],
        name="slow",
        context_window=200_000,
        tool_timeout=_LIMIT,
    )
    events = EventRecorder()

    answer = await agent.ainvoke("Look x up.", {"callbacks": [events]})

    report = answer.response_metadata["leanloop"]
    (call,) = report["tool_calls"]
    assert call["ok"] is False and "timed out" in report["events"][0], report["events"]
    # 2 s for the first reply, the limit, 1 s for the answer: not a moment of real time.
    assert call["seconds"] == pytest.approx(_LIMIT, abs=0.01), call
    assert report["elapsed_s"] == pytest.approx(2.0 + _LIMIT + 1.0, abs=0.01), report
    (step,) = events.named("leanloop.step")
    assert step["elapsed_s"] == pytest.approx(2.0 + _LIMIT, abs=0.01), step


def test_sub_agents_keep_to_their_parent_s_state(
    subagent_chain: Callable[..., LLMAgent], tmp_path: Path
) -> None:
    subagent_chain()  # writes lead -> agent:researcher -> agent:reader into tmp_path
    state = SharedState()
    specs = load_specs(tmp_path / "agents.yaml", only="lead")

    lead = LLMAgent.from_spec(specs["lead"], shared_state=state)

    researcher = _sub_agent(lead)
    reader = _sub_agent(researcher)
    assert [a.shared_state for a in (lead, researcher, reader)] == [state, state, state]
    answer = asyncio.run(lead.ainvoke("What port?"))
    assert answer.response_metadata["leanloop"]["stop_reason"] == "answer"


def _sub_agent(parent: LLMAgent) -> LLMAgent:
    """The agent behind ``parent``'s one ``agent:NAME`` tool (held by its coroutine)."""
    [held] = [
        cell.cell_contents
        for tool in parent.tools
        for cell in getattr(getattr(tool, "coroutine", None), "__closure__", None) or ()
        if isinstance(cell.cell_contents, LLMAgent)
    ]
    return held
