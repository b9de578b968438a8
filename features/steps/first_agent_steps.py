"""Steps for features/loop/first_agent.feature: the answer from what was read after repeats.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``,
:mod:`support.runs`); the session turns are those of ``pruning_reading_steps.py`` (a store
in the scenario's folder), the sub-agent file and its run those of ``subagents_steps.py``.
Here are the checks of the requests and the report that the rule adds.

The scenarios of a model served over HTTP use the scripted server, its agents file and its
script from ``session_subagents_steps.py``; here the server also says which model it
serves, as llama-server does, and the agent is asked without a session.
"""

from __future__ import annotations

from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from support import runs

from leanloop.agent import LLMAgent
from leanloop.loop.profiles import SMALL
from leanloop.testing.server import FakeModelServer

_ANSWER_REQUEST = SMALL.answer_after_repeats.split("{question}", 1)[0]
"""How the small profile's answer request after repeats begins."""
_TOOL_LIST = "To call a tool, write exactly one fenced block per call"
"""A line of the text protocol's tool list (``leanloop.protocol.text``)."""


# --- Given ---------------------------------------------------------------------------


@given('the workspace holds only "{name}"')
def step_only_file(context: Context, name: str) -> None:
    workspace = runs.setup(context).workspace
    for path in [p for p in workspace.rglob("*") if p.is_file()]:
        if path.relative_to(workspace).as_posix() != name:
            path.unlink()
    assert (workspace / name).is_file(), f"the workspace has no {name}"


@given('the scripted server serves "{file}" as "{alias}", a model of {count:d} parameters')
def step_served_model(context: Context, file: str, alias: str, count: int) -> None:
    server: FakeModelServer = context.http_server
    # What llama-server started with `-m FILE --alias ALIAS` says of itself: the file in
    # /props, the alias and the parameter count (meta.n_params) in /v1/models.
    props = {"default_generation_settings": {"n_ctx": server.n_ctx}, "model_path": f"/m/{file}"}
    server.route("GET", "/props", props)
    meta = {"n_ctx": server.n_ctx, "n_params": count}
    server.route("GET", "/v1/models", {"data": [{"id": alias, "object": "model", "meta": meta}]})


# --- When ----------------------------------------------------------------------------


@when('the agent "{name}" is asked "{question}" in Python')
def step_python_ask(context: Context, name: str, question: str) -> None:
    # A new agent, as a script builds it: what the server serves is learnt in the run.
    agent = LLMAgent.from_file(context.tmp / "agents.yaml", name)
    context.py_error = None
    context.py_answer = agent.invoke(question)


# --- Then ----------------------------------------------------------------------------


@then('the report has no event mentioning "{text}"')
def step_no_event(context: Context, text: str) -> None:
    events = runs.current(context).report["events"]
    assert not any(text in line for line in events), events


@then("request {n:d} has a system message without the tool list")
def step_system_without_list(context: Context, n: int) -> None:
    messages = runs.current(context).request(n).messages
    assert messages and isinstance(messages[0], SystemMessage), messages[:1]
    assert _TOOL_LIST not in messages[0].text, messages[0].text


@then('the last request ends with the profile\'s final-answer prompt for "{question}"')
def step_last_final_prompt(context: Context, question: str) -> None:
    last = runs.current(context).requests[-1].messages[-1]
    assert isinstance(last, HumanMessage), type(last).__name__
    assert last.text == SMALL.with_question(SMALL.final_answer, question), last.text


@then("report call {n:d} was not pruned and the model read it")
def step_read_unpruned(context: Context, n: int) -> None:
    calls = runs.current(context).report["tool_calls"]
    call = calls[n - 1]
    assert not call["pruned"] and call["fate"] in {"kept", "cut"}, call


@then('the last request holds the earlier answer "{text}"')
def step_last_holds_answer(context: Context, text: str) -> None:
    messages = runs.current(context).requests[-1].messages
    replies = [m.text for m in messages if isinstance(m, AIMessage)]
    assert text in replies, replies


@then("the last request holds no answer request of the earlier turn")
def step_no_answer_request(context: Context) -> None:
    messages = runs.current(context).requests[-1].messages
    asked = [m.text for m in messages if isinstance(m, HumanMessage)]
    assert not any(t.startswith(_ANSWER_REQUEST) for t in asked), asked


@then('the report\'s tool calls hold no read of "{path}"')
def step_no_read_of(context: Context, path: str) -> None:
    calls = runs.current(context).report["tool_calls"]
    reads = [c for c in calls if c["args"].get("path") == path and not c["repeated"]]
    assert reads == [], reads


@then('the lead\'s tool result of call {n:d} is "{text}"')
def step_lead_result(context: Context, n: int, text: str) -> None:
    requests = context.sub_agent.model.requests
    results = [m for r in requests for m in r.messages if isinstance(m, ToolMessage)]
    assert len(results) >= n, results
    assert results[n - 1].text == text, results[n - 1].text


def _server_results(context: Context, n: int) -> list[str]:
    """The tool results of the scripted server's chat request ``n``, as it received them."""
    server: FakeModelServer = context.http_server
    bodies = server.chat_bodies()
    assert len(bodies) >= n, f"the server received only {len(bodies)} chat requests"
    messages: list[dict[str, Any]] = bodies[n - 1]["messages"]
    return [str(m.get("content")) for m in messages if m.get("role") == "tool"]


@then('the scripted server\'s request {n:d} has a tool result containing "{text}"')
def step_server_result(context: Context, n: int, text: str) -> None:
    results = _server_results(context, n)
    assert any(text in result for result in results), results


@then('the scripted server\'s request {n:d} has no tool result containing "{text}"')
def step_server_no_result(context: Context, n: int, text: str) -> None:
    results = _server_results(context, n)
    assert results and not any(text in result for result in results), results


@then('the Python run\'s report says prompt_profile "{name}" and {count:d} repaired calls')
def step_python_profile(context: Context, name: str, count: int) -> None:
    report = context.py_answer.response_metadata["leanloop"]
    assert report["prompt_profile"] == name, report["prompt_profile"]
    assert report["repaired_calls"] == count, report["tool_calls"]
