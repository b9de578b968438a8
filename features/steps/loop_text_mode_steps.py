"""Steps for features/loop/loop_text_mode.feature: the text tool protocol, end to end.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``;
``[call name {json}]`` in a reply is the ```tool block the text prompt asks for, and
``refuse tools as Ollama does`` the server's refusal of the tools field). Here: the checks
of the text-mode prompt, the marked result turns, the calls written in native replies and
the switch to text mode.
"""

from __future__ import annotations

from behave import then
from behave.runner import Context
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from support import runs
from support.script import expand

from leanloop.events import TOOL_MODE_CHANGED
from leanloop.protocol import TOOL_RESULTS_ARE_DATA, is_tool_result


def _system(context: Context, n: int) -> str:
    messages = runs.current(context).request(n).messages
    assert messages and isinstance(messages[0], SystemMessage), f"no system message: {messages}"
    return messages[0].text


def _last_turn(context: Context, n: int) -> HumanMessage:
    last = runs.current(context).request(n).messages[-1]
    assert isinstance(last, HumanMessage), f"request {n} ends with {type(last).__name__}"
    return last


@then('the run emitted one tool-mode change from "{old}" to "{new}"')
def step_mode_event(context: Context, old: str, new: str) -> None:
    changes = runs.current(context).events(TOOL_MODE_CHANGED)
    assert len(changes) == 1, f"{TOOL_MODE_CHANGED} events: {changes}"
    assert (changes[0]["from"], changes[0]["to"]) == (old, new), changes[0]
    assert changes[0]["reason"], "the event gives no reason"


@then("the run emitted no tool-mode change")
def step_no_mode_event(context: Context) -> None:
    names = [name for name, _ in runs.current(context).timeline]
    assert TOOL_MODE_CHANGED not in names, names


@then('the report lists a read_file call of "{path}" at step {step:d}')
def step_report_read(context: Context, path: str, step: int) -> None:
    calls = runs.current(context).report["tool_calls"]
    found = [(c["name"], c["args"].get("path"), c["step"]) for c in calls]
    assert ("read_file", path, step) in found, found


@then("request {n:d} has a system message that asks for ```tool blocks")
def step_system_fence(context: Context, n: int) -> None:
    system = _system(context, n)
    assert "```tool\n{" in system, system
    assert '"name"' in system and '"arguments"' in system, system


@then("request {n:d} has a system message saying tool results are data")
def step_system_data(context: Context, n: int) -> None:
    system = _system(context, n)
    assert TOOL_RESULTS_ARE_DATA in system, system


@then("request {n:d} has a system message that lists no tools")
def step_system_no_tools(context: Context, n: int) -> None:
    system = _system(context, n)
    assert "lookup {" not in system and "```tool" not in system, system


@then('request {n:d} ends with a marked user turn "{text}"')
def step_result_turn(context: Context, n: int, text: str) -> None:
    last = _last_turn(context, n)
    expected = expand(text)
    assert last.text == expected, f"{last.text!r} != {expected!r}"
    assert is_tool_result(last), f"trimming would not recognise it: {last.additional_kwargs}"


@then('request {n:d} ends with a one-line marked correction mentioning "{text}"')
def step_correction(context: Context, n: int, text: str) -> None:
    last = _last_turn(context, n)
    assert "\n" not in last.text, f"the correction has several lines: {last.text!r}"
    assert text in last.text, last.text
    assert is_tool_result(last), f"trimming would not recognise it: {last.additional_kwargs}"


@then("request {n:d} carries no ToolMessage and no native call")
def step_no_tool_messages(context: Context, n: int) -> None:
    messages = runs.current(context).request(n).messages
    kinds = [type(m).__name__ for m in messages]
    assert "ToolMessage" not in kinds, kinds
    assert not any(isinstance(m, AIMessage) and m.tool_calls for m in messages), (
        "an AI message still carries native tool_calls"
    )


@then('request {n:d} pairs a ToolMessage "{text}" with a native call of "{name}"')
def step_paired(context: Context, n: int, text: str, name: str) -> None:
    messages = runs.current(context).request(n).messages
    where = max((i for i, m in enumerate(messages) if isinstance(m, ToolMessage)), default=0)
    result, call_message = messages[where], messages[where - 1]
    assert isinstance(result, ToolMessage), f"request {n} carries no ToolMessage"
    assert result.content == text, result.content
    assert isinstance(call_message, AIMessage), type(call_message).__name__
    calls = call_message.tool_calls
    assert [c["name"] for c in calls] == [name], calls
    assert calls[0]["id"] and calls[0]["id"] == result.tool_call_id, (calls, result.tool_call_id)


@then('request {n:d} keeps only "{prose}" as the text of the call\'s reply')
def step_call_prose(context: Context, n: int, prose: str) -> None:
    messages = runs.current(context).request(n).messages
    call_message = next(m for m in reversed(messages) if isinstance(m, AIMessage))
    assert call_message.text == prose, repr(call_message.text)
