"""Steps for features/agent/structured_output.feature: typed answers (``output_schema``).

The scripted-model scenarios use the shared run steps (:mod:`support.runs`); the ones
against a real HTTP server reuse the Robot suites' scripted OpenAI-compatible server
(``robot/resources/scripted_server.py``), and the test models live next to it in
``robot/resources/answer_models.py`` (importable as ``answer_models``), so both test
trees name the same ``output_schema``.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel
from support import runs
from support.aio import run as run_async
from support.cli_inprocess import run_cli

from leanloop.agent import LLMAgent
from leanloop.agent.structured import read_json
from leanloop.exceptions import StructuredOutputError

RESOURCES = Path(__file__).resolve().parents[2] / "robot" / "resources"
# Appended, not inserted: a test module there must never shadow an installed package.
if str(RESOURCES) not in sys.path:
    sys.path.append(str(RESOURCES))

from agents_file import agent_entry, model_entry, write_agents_file  # noqa: E402
from answer_models import City  # noqa: E402
from scripted_server import ScriptedOpenAIServer, ScriptedResponse  # noqa: E402

_SCHEMAS: dict[str, type[BaseModel]] = {"City": City}
_REFUSE = re.compile(r'^refuse (?P<status>\d{3}) "(?P<message>.*)"$')


def _typed(context: Context) -> AIMessage:
    """The scenario's answer: from a file's agent, else from the scripted-model run."""
    found = getattr(context, "typed_message", None)
    if found is None:
        found = runs.current(context).answer
    assert isinstance(found, AIMessage), f"the agent gave no AIMessage: {found!r}"
    return found


def _report(context: Context) -> dict[str, Any]:
    report = _typed(context).response_metadata.get("leanloop")
    assert isinstance(report, dict), _typed(context).response_metadata
    return report


def _is_city(value: object, name: str, country: str) -> None:
    assert isinstance(value, City), f"not a City: {value!r}"
    assert (value.name, value.country) == (name, country), value


# --- Given ---------------------------------------------------------------------------


@given("the scripted HTTP server answers:")
def step_http_server(context: Context) -> None:
    server = ScriptedOpenAIServer()
    server.start()
    context.cleanups.append(server.stop)
    for row in context.table:
        cell = row["reply"]
        refusal = _REFUSE.match(cell)
        if refusal:
            status = int(refusal["status"])
            body = {"error": {"code": status, "message": refusal["message"], "type": "x"}}
            server.queue(ScriptedResponse(status=status, error=body))
        else:
            server.queue(ScriptedResponse(content=cell))
    context.http_server = server


@given('an agents file for the scripted HTTP server whose agent "{name}" has output_schema "{ref}"')
def step_served_file(context: Context, name: str, ref: str) -> None:
    server: ScriptedOpenAIServer = context.http_server
    agent = agent_entry("You answer questions.", tools=(), output_schema=ref)
    write_agents_file(context.tmp, model_entry(server.base_url, server.model), name, agent)


# --- When ----------------------------------------------------------------------------


@when('the agent "{name}" of "{file}" is asked "{question}"')
def step_file_agent(context: Context, name: str, file: str, question: str) -> None:
    agent = LLMAgent.from_file(context.tmp / file, name)
    context.typed_message = run_async(agent.ainvoke(question))


@when(
    'the agent is asked "{question}" through with_structured_output({schema:w}, include_raw=True)'
)
def step_ask_raw(context: Context, question: str, schema: str) -> None:
    typed = runs.current(context).agent.with_structured_output(_SCHEMAS[schema], include_raw=True)
    context.typed_result = run_async(typed.ainvoke(question))


@when('the agent is asked "{question}" through with_structured_output({schema:w})')
def step_ask_typed(context: Context, question: str, schema: str) -> None:
    typed = runs.current(context).agent.with_structured_output(_SCHEMAS[schema])
    context.typed_result = run_async(typed.ainvoke(question))


@when('the agent is asked "{question}" and the structuring fails')
def step_ask_fails(context: Context, question: str) -> None:
    runs.ask_failing(runs.current(context), question)


@when("the reply {literal} is read as a City")
def step_read(context: Context, literal: str) -> None:
    text = ast.literal_eval(literal)
    assert isinstance(text, str), literal
    context.read_result = read_json(text, City)


@when('the CLI runs "{command}" with the answer models importable')
def step_cli(context: Context, command: str) -> None:
    context.cli = run_cli(shlex.split(command), context.tmp, path=[RESOURCES])


# --- Then: the typed answer ----------------------------------------------------------


@then('the parsed answer is a City with name "{name}" and country "{country}"')
@then('the answer\'s additional_kwargs hold a City with name "{name}" and country "{country}"')
def step_parsed(context: Context, name: str, country: str) -> None:
    _is_city(_typed(context).additional_kwargs.get("parsed"), name, country)


@then("the answer's text is the parsed answer as JSON")
def step_content(context: Context) -> None:
    answer = _typed(context)
    parsed = answer.additional_kwargs["parsed"]
    assert answer.content == parsed.model_dump_json(), answer.content


@then(
    'the report says the answer was structured as "{schema}" by the "{method}" method '
    "with {repairs:d} repairs"
)
def step_structured(context: Context, schema: str, method: str, repairs: int) -> None:
    got = _report(context).get("structured")
    assert got == {"schema": schema, "method": method, "repairs": repairs}, got


@then("the report's last {count:d} requests are structuring requests without tools")
def step_structuring_records(context: Context, count: int) -> None:
    requests = _report(context)["requests"]
    kinds = [(r["kind"], r["tools"]) for r in requests]
    assert kinds[-count:] == [("structured", False)] * count, kinds
    assert all(kind != "structured" for kind, _ in kinds[:-count]), kinds
    loop_keys = set(requests[0])
    for record in requests[-count:]:
        assert set(record) == loop_keys, (sorted(record), sorted(loop_keys))


@then("the answer's usage adds up the usage of every request")
def step_usage(context: Context) -> None:
    answer = _typed(context)
    requests = _report(context)["requests"]
    usage = answer.usage_metadata
    assert usage is not None, "the answer carries no usage"
    sent = sum(r["input_tokens"] for r in requests)
    written = sum(r["output_tokens"] for r in requests)
    assert (usage["input_tokens"], usage["output_tokens"]) == (sent, written), (usage, requests)


@then("the structuring request {n:d} carries the question, the run's answer and the schema of City")
def step_request_carries(context: Context, n: int) -> None:
    run = runs.current(context)
    request = run.request(n)
    assert request.tools == [], "the structuring request offered tools"
    asked = request.messages[-1]
    assert isinstance(asked, HumanMessage), type(asked).__name__
    question = runs.current(context).report["question"]
    # The run's answer is the reply just before the structuring request.
    answer = run.script[n - 2]
    schema = json.dumps(City.model_json_schema(), ensure_ascii=False)
    for part in (question, answer, schema):
        assert part in asked.text, f"{part!r} is not in the request:\n{asked.text}"


@then("the structuring request {n:d} holds only those {count:d} messages")
def step_request_small(context: Context, n: int, count: int) -> None:
    messages = runs.current(context).request(n).messages
    assert len(messages) == count, [type(m).__name__ for m in messages]


@then('the structuring request {n:d} shows the reply {reply} and the problem "{problem}"')
def step_repair_request(context: Context, n: int, reply: str, problem: str) -> None:
    messages = runs.current(context).request(n).messages
    shown, asked = messages[-2], messages[-1]
    assert isinstance(shown, AIMessage) and shown.text == reply, shown
    assert isinstance(asked, HumanMessage) and problem in asked.text, asked.text


# --- Then: reading replies -----------------------------------------------------------


@then('the reply was read as a City with name "{name}" and country "{country}"')
def step_read_ok(context: Context, name: str, country: str) -> None:
    instance, problem = context.read_result
    assert problem == "", problem
    _is_city(instance, name, country)


@then('reading it failed with the problem "{problem}"')
def step_read_failed(context: Context, problem: str) -> None:
    instance, got = context.read_result
    assert instance is None, instance
    assert got == problem, got


# --- Then: failures ------------------------------------------------------------------


@then('the failure is a StructuredOutputError with the problem "{problem}"')
def step_failure(context: Context, problem: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, StructuredOutputError), repr(failure)
    assert failure.problem == problem, failure.problem
    assert problem in str(failure) and "\n" not in str(failure), str(failure)


@then('the failure carries the run\'s answer "{text}" with its report')
def step_failure_answer(context: Context, text: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, StructuredOutputError), repr(failure)
    answer = failure.answer
    assert isinstance(answer, AIMessage) and answer.content == text, answer
    assert answer.response_metadata["leanloop"]["stop_reason"] == "answer", answer


@then('with_structured_output without a schema raises a ValueError mentioning "{text}"')
def step_no_schema(context: Context, text: str) -> None:
    agent = runs.current(context).agent
    try:
        agent.with_structured_output()
    except ValueError as exc:
        assert text in str(exc), str(exc)
    else:
        raise AssertionError("with_structured_output() without a schema was accepted")


# --- Then: with_structured_output ----------------------------------------------------


@then('the result is a City with name "{name}" and country "{country}"')
def step_result(context: Context, name: str, country: str) -> None:
    _is_city(context.typed_result, name, country)


@then('the result has the raw message and a City with name "{name}" and country "{country}"')
def step_result_raw(context: Context, name: str, country: str) -> None:
    result = context.typed_result
    assert isinstance(result, dict) and set(result) == {"raw", "parsed"}, result
    _is_city(result["parsed"], name, country)
    assert isinstance(result["raw"], AIMessage), result["raw"]
    assert result["raw"].additional_kwargs["parsed"] is result["parsed"]
    context.typed_message = result["raw"]


@then('the raw message carries the report, structured as "{schema}"')
def step_raw_report(context: Context, schema: str) -> None:
    report = _report(context)
    assert report["stop_reason"] == "answer", report
    assert report["structured"]["schema"] == schema, report["structured"]


@then('the report\'s events mention "{text}"')
def step_events(context: Context, text: str) -> None:
    events = _report(context)["events"]
    assert any(text in line for line in events), events


# --- Then: the CLI and the HTTP server -----------------------------------------------


@then('the CLI stderr is one line that starts "{prefix}"')
def step_stderr_line(context: Context, prefix: str) -> None:
    lines = context.cli.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), context.cli.stderr


@then(
    'the scripted HTTP server\'s request {n:d} asks for the json_schema "{name}" '
    "with the properties {names}"
)
def step_http_format(context: Context, n: int, name: str, names: str) -> None:
    body = _http_request(context, n)
    fmt = body.get("response_format")
    assert isinstance(fmt, dict) and fmt.get("type") == "json_schema", fmt
    spec = fmt["json_schema"]
    assert spec["name"] == name, spec
    assert list(spec["schema"]["properties"]) == [p.strip() for p in names.split(",")], spec
    assert "tools" not in body, body["tools"]


@then("the scripted HTTP server's request {n:d} has no response_format")
def step_http_no_format(context: Context, n: int) -> None:
    body = _http_request(context, n)
    assert "response_format" not in body, body["response_format"]


def _http_request(context: Context, n: int) -> dict[str, Any]:
    server: ScriptedOpenAIServer = context.http_server
    assert len(server.requests) >= n, f"the server received {len(server.requests)} requests"
    assert server.remaining() == 0, f"{server.remaining()} scripted replies were not used"
    return server.requests[n - 1]
