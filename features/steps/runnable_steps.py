"""Steps for features/runnable.feature."""

from __future__ import annotations

from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from support.agents import ToolLog, scripted_agent
from support.aio import run


def _echo(messages: list[BaseMessage]) -> str:
    question = [m for m in messages if isinstance(m, HumanMessage)][-1]
    return f"echo: {question.text}"


@given("a runnable agent whose model echoes the last question")
def step_echo_agent(context: Context) -> None:
    context.agent, context.model = scripted_agent([_echo], system_prompt="You are a test agent.")
    context.model.repeat_last = True


@given("a runnable agent with a lookup tool that is called once")
def step_tool_agent(context: Context) -> None:
    log = ToolLog()
    replies: list[Any] = [{"tool_calls": [{"name": "lookup", "args": {"key": "k"}}]}, "found it"]
    context.agent, context.model = scripted_agent(replies, tools=[log.lookup_tool()])


@when('the runnable agent is invoked with "{question}"')
def step_invoke(context: Context, question: str) -> None:
    context.output = context.agent.invoke(question)


@when('the runnable agent is ainvoked with input "{question}" after the history "{earlier}"')
def step_ainvoke_dict(context: Context, question: str, earlier: str) -> None:
    value = {"input": question, "messages": [("human", earlier), ("ai", "noted")]}
    context.output = run(context.agent.ainvoke(value))


@when('the runnable agent is batched with "{questions}"')
def step_batch(context: Context, questions: str) -> None:
    context.outputs = context.agent.batch([q.strip() for q in questions.split(",")])


@when('the runnable agent is abatched with "{questions}"')
def step_abatch(context: Context, questions: str) -> None:
    context.outputs = run(context.agent.abatch([q.strip() for q in questions.split(",")]))


@when('the runnable agent is streamed with "{question}"')
def step_stream(context: Context, question: str) -> None:
    context.chunks = list(context.agent.stream(question))


@when('the runnable agent is astreamed with "{question}"')
def step_astream(context: Context, question: str) -> None:
    async def collect() -> list[Any]:
        return [chunk async for chunk in context.agent.astream(question)]

    context.chunks = run(collect())


@when('the runnable chain "prompt | agent | StrOutputParser" runs with topic "{topic}"')
def step_chain(context: Context, topic: str) -> None:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be brief."), ("human", "Tell me about {topic}.")]
    )
    chain = prompt | context.agent | StrOutputParser()
    context.chain_output = chain.invoke({"topic": topic})


@when('the runnable agent\'s events are collected for "{question}"')
def step_events(context: Context, question: str) -> None:
    async def collect() -> list[dict[str, Any]]:
        return [e async for e in context.agent.astream_events(question, version="v2")]

    context.events = run(collect())


@when("the runnable agent is invoked with the bad input {kind}")
def step_bad_input(context: Context, kind: str) -> None:
    values: dict[str, Any] = {
        "number": 42,
        "dict-without-input": {"question": "hi"},
        "no-human": [SystemMessage(content="only a system message")],
    }
    try:
        context.agent.invoke(values[kind])
    except TypeError as exc:
        context.refusal = exc
    else:
        raise AssertionError("the bad input was accepted")


@then('the runnable output is an AIMessage saying "{text}"')
def step_output(context: Context, text: str) -> None:
    assert isinstance(context.output, AIMessage), type(context.output)
    assert context.output.content == text, context.output.content


@then('the runnable output carries a run report with stop_reason "{reason}"')
def step_output_report(context: Context, reason: str) -> None:
    report = context.output.response_metadata["leanloop"]
    assert report["stop_reason"] == reason and report["steps"] == 0, report
    assert len(report["requests"]) == 1, report["requests"]


@then('the runnable model saw 3 messages: system, human "{first}", human "{second}"')
def step_model_saw(context: Context, first: str, second: str) -> None:
    messages = context.model.requests[-1].messages
    kinds = [m.type for m in messages]
    assert kinds == ["system", "human", "ai", "human"], kinds
    assert messages[1].content == first and messages[3].content == second


@then('the runnable batch answers are "{answers}"')
def step_batch_answers(context: Context, answers: str) -> None:
    got = [o.content for o in context.outputs]
    assert got == [a.strip() for a in answers.split(",")], got


@then('the runnable streamed text is "{text}"')
def step_streamed(context: Context, text: str) -> None:
    assert context.chunks, "nothing was streamed"
    assert "".join(str(c.content) for c in context.chunks) == text


@then('the runnable chain returns the string "{text}"')
def step_chain_output(context: Context, text: str) -> None:
    assert context.chain_output == text, context.chain_output


@then("the runnable model's first message is the system prompt merged with the template's")
def step_merged_system(context: Context) -> None:
    first = context.model.requests[-1].messages[0]
    assert isinstance(first, SystemMessage), first
    assert first.content == "You are a test agent.\n\nBe brief.", first.content


@then('the runnable events include the custom event "{name}" with step {step:d}')
def step_event(context: Context, name: str, step: int) -> None:
    custom = [e for e in context.events if e["event"] == "on_custom_event" and e["name"] == name]
    assert custom, [e["event"] for e in context.events]
    assert custom[0]["data"]["step"] == step, custom[0]["data"]


@then('the runnable agent refuses it with a TypeError mentioning "{message}"')
def step_refused(context: Context, message: str) -> None:
    assert message in str(context.refusal), str(context.refusal)
