"""Steps for features/agent/runnable.feature: the agent used as a LangChain Runnable.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``);
here are the Runnable ways to call it that only this feature uses (batch, LCEL chains,
input the agent refuses) and their checks.
"""

from __future__ import annotations

from typing import Any

from behave import then, when
from behave.runner import Context
from langchain_core.messages import SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from support import runs
from support.aio import run as run_async


def _questions(text: str) -> list[str]:
    return [q.strip() for q in text.split(",")]


@when('the agent is batched with "{questions}"')
def step_batch(context: Context, questions: str) -> None:
    run = runs.current(context)
    run.answers = run.agent.batch(_questions(questions), run.config)


@when('the agent is abatched with "{questions}"')
def step_abatch(context: Context, questions: str) -> None:
    run = runs.current(context)
    run.answers = run_async(run.agent.abatch(_questions(questions), run.config))


@when('the chain "prompt | agent | StrOutputParser" runs with topic "{topic}"')
def step_chain(context: Context, topic: str) -> None:
    run = runs.current(context)
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be brief."), ("human", "Tell me about {topic}.")]
    )
    chain = prompt | run.agent | StrOutputParser()
    run.answers = [chain.invoke({"topic": topic}, run.config)]


@when("the agent is given the bad input {kind}")
def step_bad_input(context: Context, kind: str) -> None:
    run = runs.current(context)
    values: dict[str, Any] = {
        "number": 42,
        "dict-without-input": {"question": "hi"},
        "no-human": [SystemMessage(content="only a system message")],
    }
    try:
        run.agent.invoke(values[kind])
    except TypeError as exc:
        run.failure = exc
    else:
        raise AssertionError("the bad input was accepted")


@then('the batch answers are "{answers}"')
def step_batch_answers(context: Context, answers: str) -> None:
    got = [answer.content for answer in runs.current(context).answers]
    assert got == _questions(answers), got


@then('the chain returns the string "{text}"')
def step_chain_output(context: Context, text: str) -> None:
    answers = runs.current(context).answers
    assert answers == [text], answers


@then('request {n:d} holds the turns system, human "{first}", ai "{reply}", human "{second}"')
def step_turns(context: Context, n: int, first: str, reply: str, second: str) -> None:
    messages = runs.current(context).request(n).messages
    kinds = [m.type for m in messages]
    assert kinds == ["system", "human", "ai", "human"], kinds
    texts = [m.content for m in messages[1:]]
    assert texts == [first, reply, second], texts


@then('the astream_events stream carried the custom event "{name}" with step {step:d}')
def step_event(context: Context, name: str, step: int) -> None:
    events = runs.current(context).stream_events
    custom = [e for e in events if e["event"] == "on_custom_event" and e["name"] == name]
    assert custom, [e["event"] for e in events]
    assert custom[0]["data"]["step"] == step, custom[0]["data"]


@then('the agent refuses it with a TypeError mentioning "{message}"')
def step_refused(context: Context, message: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, TypeError), failure
    assert message in str(failure), str(failure)
