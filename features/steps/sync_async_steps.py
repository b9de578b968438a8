"""Steps for features/agent/sync_async.feature: one agent called from several event loops."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from behave import given, then, when
from behave.runner import Context

from leanloop import LLMAgent
from leanloop.spec import load_specs_from_dict
from leanloop.testing.server import FakeModelServer, Reply, ServerRequest, echo


@given("an echo chat server")
def step_echo_server(context: Context) -> None:
    server = FakeModelServer(handler=echo()).start()
    context.cleanups.append(server.stop)
    context.echo_server = server


@given("the echo chat server waits {seconds:g} seconds before each answer")
def step_echo_delay(context: Context, seconds: float) -> None:
    answer = echo()

    def paced(request: ServerRequest) -> Reply:
        # Each answer waits, so that concurrent calls overlap on the server.
        reply = answer(request)
        reply.delay = seconds
        return reply

    context.echo_server.handler = paced


@given("an agent on the echo chat server")
def step_echo_agent(context: Context) -> None:
    model = {
        "provider": "openai-compatible",
        "model": "echo",
        "base_url": context.echo_server.base_url,
        "context_window": 8192,
        "kwargs": {"max_retries": 0},
    }
    specs = load_specs_from_dict({"version": 1, "agents": {"echo": {"model": model}}})
    context.echo_agent = LLMAgent.from_spec(specs["echo"])


def _call(agent: LLMAgent, how: str, question: str) -> str:
    if how == "invoke":
        return agent.invoke(question).text
    if how == "arun":
        return asyncio.run(agent.ainvoke(question)).text
    if how == "invoke inside a running loop":

        async def cell() -> str:
            return agent.invoke(question).text  # a sync call from a coroutine

        return asyncio.run(cell())
    raise AssertionError(f"unknown call {how!r}")


@when('the agent is called "{hows}" with questions "{questions}"')
def step_calls(context: Context, hows: str, questions: str) -> None:
    pairs = zip(hows.split(", "), questions.split(", "), strict=True)
    context.echo_answers = [_call(context.echo_agent, how, q) for how, q in pairs]


@then('the answers are "{answers}"')
def step_answers(context: Context, answers: str) -> None:
    assert context.echo_answers == answers.split(", "), context.echo_answers


def _in_threads(context: Context, count: int, call: Any, question: str) -> None:
    results: dict[int, Any] = {}
    barrier = threading.Barrier(count)

    def worker(n: int) -> None:
        barrier.wait()
        try:
            results[n] = call(question.replace("N", str(n)))
        except Exception as exc:  # recorded, then asserted in the Then step
            results[n] = exc

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(1, count + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    context.thread_results = results
    context.thread_count = count


@when('{count:d} threads call invoke on the agent at once, thread N asking "{question}"')
def step_threads_invoke(context: Context, count: int, question: str) -> None:
    _in_threads(context, count, lambda q: context.echo_agent.invoke(q).text, question)


@when(
    '{count:d} threads call asyncio.run(ainvoke) on the agent at once, thread N asking "{question}"'
)
def step_threads_arun(context: Context, count: int, question: str) -> None:
    agent = context.echo_agent
    _in_threads(context, count, lambda q: asyncio.run(agent.ainvoke(q)).text, question)


@then('thread N got "{answer}" for every thread')
def step_thread_answers(context: Context, answer: str) -> None:
    for n in range(1, context.thread_count + 1):
        got = context.thread_results.get(n)
        assert got == answer.replace("N", str(n)), f"thread {n}: {got!r}"


@then("the echo chat server answered {count:d} requests")
def step_echo_count(context: Context, count: int) -> None:
    answered = len(context.echo_server.exchanges)
    assert answered == count, answered


@when('{count:d} runs of the agent go at once with asyncio.gather, run N asking "{question}"')
def step_gather(context: Context, count: int, question: str) -> None:
    agent = context.echo_agent

    async def all_runs() -> list[str]:
        questions = [question.replace("N", str(n)) for n in range(1, count + 1)]
        replies = await asyncio.gather(*(agent.ainvoke(q) for q in questions))
        return [reply.text for reply in replies]

    context.gathered = asyncio.run(all_runs())


@then('run N got "{answer}" for every run')
def step_gathered(context: Context, answer: str) -> None:
    expected = [answer.replace("N", str(n)) for n in range(1, len(context.gathered) + 1)]
    assert context.gathered == expected, [
        (n, got) for n, got in enumerate(context.gathered, start=1) if got != expected[n - 1]
    ]
