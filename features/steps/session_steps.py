"""Steps for features/sessions/sessions.feature: turns of a conversation under a thread_id."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import StructuredTool

from leanloop import LLMAgent
from leanloop.budget import TRIM_NOTE
from leanloop.exceptions import RunFailed, SessionError
from leanloop.sessions import open_store
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

_names = itertools.count()
Reply = AIMessage | dict[str, Any] | str | Callable[[list[BaseMessage]], AIMessage]


@dataclass
class Harness:
    """One scenario's agent, its scripted model, its store, and what each call did."""

    spec: AgentSpec
    model: ScriptedChatModel
    agent: LLMAgent
    queue: list[Reply] = field(default_factory=list)
    """Replies used before the default one (``ok: <question>``)."""
    lookups: list[str] = field(default_factory=list)
    marks: list[int] = field(default_factory=list)
    """Index of the first request of each call, in ``model.requests``."""
    results: list[AIMessage] = field(default_factory=list)
    error: Exception | None = None

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        if self.queue:
            nxt = self.queue.pop(0)
            if callable(nxt):
                return nxt(messages)
            if isinstance(nxt, dict):
                calls = [{**c, "id": c.get("id") or f"c{next(_names)}"} for c in nxt["calls"]]
                return AIMessage(content="", tool_calls=calls)
            if isinstance(nxt, str):
                return AIMessage(content=nxt)
            return nxt
        question = [m for m in messages if type(m) is HumanMessage][-1].text
        return AIMessage(content=f"ok: {question}")

    def requests_of(self, call: int) -> list[list[BaseMessage]]:
        """The requests of the ``call``-th call (negative: from the end)."""
        index = range(len(self.marks))[call]
        start = self.marks[index]
        stop = self.marks[index + 1] if index + 1 < len(self.marks) else None
        return [r.messages for r in self.model.requests[start:stop]]

    @property
    def report(self) -> dict[str, Any]:
        return dict(self.results[-1].response_metadata["leanloop"])


def _build(context: Context, *, window: int | None, tools: list[str], notes: bool) -> Harness:
    store = getattr(context, "session_store_url", None) or f"sqlite:///{context.tmp}/s.db"
    context.session_store_url = store
    spec = AgentSpec(
        name="talker",
        model=ModelSpec(
            class_path="leanloop.testing:ScriptedChatModel",
            model=f"session-scripted-{next(_names)}",
            context_window=window,
        ),
        notes=notes,
        session_store=store,
        max_rounds=8,
    )
    holder: dict[str, Harness] = {}
    model = ScriptedChatModel(
        replies=[lambda messages: holder["h"].reply(messages)],  # noqa: PLW0108 - made later
        repeat_last=True,
        report_usage=True,
        chars_per_token=4.0,
    )
    built = []
    if "lookup" in tools:

        def lookup(key: str) -> str:
            holder["h"].lookups.append(key)
            body = "B" * 6000 if key == "big" else key.upper()
            return f"value of {key}: {body}"

        built.append(
            StructuredTool.from_function(func=lookup, name="lookup", description="Look up a key.")
        )
    agent = LLMAgent.from_spec(spec, model=model, tools=built)
    harness = Harness(spec, model, agent)
    holder["h"] = harness
    return harness


def _harness(context: Context) -> Harness:
    found: Harness = context.session
    return found


def _ask(context: Context, thread: str, question: Any, *, resume: bool = False) -> None:
    harness = _harness(context)
    harness.error = None
    harness.marks.append(len(harness.model.requests))
    config = {"configurable": {"thread_id": thread, "resume": resume}}
    try:
        harness.results.append(harness.agent.invoke(question, config))  # type: ignore[arg-type]
    except (RunFailed, SessionError) as exc:
        harness.error = exc


def _text(messages: list[BaseMessage]) -> str:
    return "\n".join(m.text for m in messages)


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "args": args, "type": "tool_call"}]}


def _filler(number: int, size: int) -> str:
    head = f"filler {number}: "
    return head + ("lorem ipsum dolor " * (size // 18 + 1))[: size - len(head)]


# --- Givens ---------------------------------------------------------------------------


@given("a session agent")
def step_agent(context: Context) -> None:
    context.session = _build(context, window=None, tools=[], notes=False)


@given("a session agent with a window of {window:d} tokens")
def step_agent_window(context: Context, window: int) -> None:
    context.session = _build(context, window=window, tools=[], notes=False)


@given('a session agent with a window of {window:d} tokens and the tool "{tool}"')
def step_agent_window_tool(context: Context, window: int, tool: str) -> None:
    context.session = _build(context, window=window, tools=[tool], notes=False)


@given("a session agent with a window of {window:d} tokens and notes")
def step_agent_notes(context: Context, window: int) -> None:
    context.session = _build(context, window=window, tools=[], notes=True)


@given('a session agent with the tool "{tool}"')
def step_agent_tool(context: Context, tool: str) -> None:
    context.session = _build(context, window=None, tools=[tool], notes=False)


# --- Whens ----------------------------------------------------------------------------


@when("a new session agent on the same store")
def step_new_agent(context: Context) -> None:
    old = _harness(context)
    context.session = _build(context, window=old.spec.model.context_window, tools=[], notes=False)


@when('thread "{thread}" is asked {count:d} filler questions of {size:d} characters')
def step_fillers(context: Context, thread: str, count: int, size: int) -> None:
    for number in range(count):
        _ask(context, thread, _filler(number, size))
        assert _harness(context).error is None, _harness(context).error


@when('thread "{thread}" is asked "{question}" and the model calls lookup first')
def step_ask_lookup(context: Context, thread: str, question: str) -> None:
    _harness(context).queue.extend([_call("lookup", key="big"), "looked it up"])
    _ask(context, thread, question)
    assert _harness(context).error is None, _harness(context).error


@when('thread "{thread}" is asked "{question}" and the model notes "{note}"')
def step_ask_note(context: Context, thread: str, question: str, note: str) -> None:
    _harness(context).queue.extend([_call("note", text=note), "noted"])
    _ask(context, thread, question)
    assert _harness(context).error is None, _harness(context).error


@when('thread "{thread}" is asked "{question}" and the model calls lookup a, lookup b, then fails')
def step_ask_fail(context: Context, thread: str, question: str) -> None:
    harness = _harness(context)
    # The model's third request fails, as a server that went away does.
    harness.queue.extend([_call("lookup", key="a"), _call("lookup", key="b"), _raise])
    _ask(context, thread, question)
    assert isinstance(harness.error, RunFailed), harness.error
    harness.error = None


def _raise(messages: list[BaseMessage]) -> AIMessage:
    msg = "the server went away"
    raise ConnectionError(msg)


@when('thread "{thread}" is resumed with the model calling lookup c, then answering "{answer}"')
def step_resume(context: Context, thread: str, answer: str) -> None:
    harness = _harness(context)
    harness.queue.extend([_call("lookup", key="c"), answer])
    _ask(context, thread, "", resume=True)
    assert harness.error is None, harness.error


@when('thread "{thread}" is resumed with the question "{question}" expecting an error')
def step_resume_other(context: Context, thread: str, question: str) -> None:
    _ask(context, thread, question, resume=True)


@when('thread "{thread}" is resumed expecting an error')
def step_resume_error(context: Context, thread: str) -> None:
    _ask(context, thread, "", resume=True)


@when('thread "{thread}" is given two human messages')
def step_two_messages(context: Context, thread: str) -> None:
    _ask(context, thread, {"messages": [HumanMessage("one"), HumanMessage("two")]})


@when('{count:d} threads and {shared:d} turns on thread "{thread}" run at once')
def step_concurrent(context: Context, count: int, shared: int, thread: str) -> None:
    harness = _harness(context)

    async def one(thread_id: str, question: str) -> AIMessage:
        config = {"configurable": {"thread_id": thread_id}}
        return await harness.agent.ainvoke(question, config)  # type: ignore[arg-type]

    async def everything() -> list[AIMessage]:
        calls = [one(f"th{i}", f"question of th{i}") for i in range(count)]
        calls += [one(thread, f"question {k} of {thread}") for k in range(shared)]
        return await asyncio.gather(*calls)

    context.concurrent = asyncio.run(everything())
    context.concurrent_shape = (count, shared, thread)


@when('thread "{thread}" is asked "{question}"')
def step_ask(context: Context, thread: str, question: str) -> None:
    if question == "What was the launch code?":
        _harness(context).queue.extend([_call("recall", query="launch code"), _answer_from_recall])
    _ask(context, thread, question)
    assert _harness(context).error is None, _harness(context).error


def _answer_from_recall(messages: list[BaseMessage]) -> AIMessage:
    results = [m.text for m in messages if isinstance(m, ToolMessage)]
    found = re.search(r"ZEBRA-\d+", results[-1]) if results else None
    return AIMessage(content=f"The launch code was {found.group(0)}." if found else "unknown")


# --- Thens ----------------------------------------------------------------------------


@then('the last request of the run holds "{first}" and "{second}"')
def step_last_holds(context: Context, first: str, second: str) -> None:
    text = _text(_harness(context).requests_of(-1)[-1])
    assert first in text and second in text, text[-2000:]


@then('the last request of the run does not hold "{text}"')
def step_last_lacks(context: Context, text: str) -> None:
    sent = _text(_harness(context).requests_of(-1)[-1])
    assert text not in sent, sent[-2000:]


@then('the last request ends with the question "{question}"')
def step_ends_with(context: Context, question: str) -> None:
    last = _harness(context).requests_of(-1)[-1]
    humans = [m for m in last if type(m) is HumanMessage]
    assert humans and humans[-1].text == question, humans[-1:] if humans else last


@then('the run\'s report says turn {turn:d} of thread "{thread}" with {earlier:d} earlier turns')
def step_report_turn(context: Context, turn: int, thread: str, earlier: int) -> None:
    session = _harness(context).report["session"]
    got = (session["thread_id"], session["turn"], session["earlier_turns"])
    assert got == (thread, turn, earlier), session


@then('no request of thread "{thread}" was over its ceiling by the server\'s count')
def step_under_ceiling(context: Context, thread: str) -> None:
    harness = _harness(context)
    checked = 0
    for result in harness.results:
        for request in result.response_metadata["leanloop"]["requests"]:
            checked += 1
            assert request["input_tokens"] <= request["ceiling"], request
    assert checked >= len(harness.results), checked


@then('the first request of the last turn does not hold "{text}"')
def step_first_lacks(context: Context, text: str) -> None:
    sent = _text(_harness(context).requests_of(-1)[0])
    assert text not in sent, sent[:2000]


@then("the first request of the last turn says earlier turns are omitted and names recall")
def step_omitted_note(context: Context) -> None:
    first = _harness(context).requests_of(-1)[0][0]
    assert isinstance(first, SystemMessage), first
    assert re.search(r"\d+ earlier turns of this conversation are omitted", first.text), first.text
    assert "recall(" in first.text, first.text


@then('the turn\'s answer is "{answer}"')
def step_answer(context: Context, answer: str) -> None:
    assert _harness(context).results[-1].text == answer, _harness(context).results[-1].text


@then("the run's report says some earlier turns were omitted")
def step_report_omitted(context: Context) -> None:
    session = _harness(context).report["session"]
    assert session["omitted_turns"] > 0, session
    assert session["earlier_turns"] == 29, session


@then('some request trims the lookup result while it still holds "{question}"')
def step_trim_first(context: Context, question: str) -> None:
    for request in _harness(context).model.requests:
        tools = [m for m in request.messages if isinstance(m, ToolMessage)]
        if any(TRIM_NOTE in m.text for m in tools):
            assert question in _text(request.messages), "the turn was left out before trimming"
            return
    msg = "no request trimmed the lookup result"
    raise AssertionError(msg)


@then('every request after the note holds "{note}" in its system message')
def step_note_sent(context: Context, note: str) -> None:
    harness = _harness(context)
    later = [r for call in range(1, len(harness.marks)) for r in harness.requests_of(call)]
    assert len(later) >= 29, len(later)
    for messages in later:
        assert isinstance(messages[0], SystemMessage) and note in messages[0].text, messages[0]


@then('the run\'s report lists the note "{note}"')
def step_report_note(context: Context, note: str) -> None:
    assert _harness(context).report["session"]["notes"] == [note]


@then('lookup ran exactly once for each of "{a}", "{b}", "{c}"')
def step_lookups(context: Context, a: str, b: str, c: str) -> None:
    assert _harness(context).lookups == [a, b, c], _harness(context).lookups


@then("the resumed run's report says it resumed after step {step:d}")
def step_resumed(context: Context, step: int) -> None:
    report = _harness(context).report
    assert report["session"]["resumed_from"] == step, report["session"]
    # After the stored steps: the step the failure cut short, run again, and the answer.
    assert report["steps"] == step + 2, report["steps"]


@then("the first request of the resumed run holds the results of steps 1 and 2")
def step_resumed_request(context: Context) -> None:
    first = _harness(context).requests_of(-1)[0]
    results = [m.text for m in first if isinstance(m, ToolMessage)]
    assert results == ["value of a: A", "value of b: B"], results


@then("every thread's stored turns are its own")
def step_own_turns(context: Context) -> None:
    count, _, _ = context.concurrent_shape
    sessions = asyncio.run(_load(context, [f"th{i}" for i in range(count)]))
    for index, session in enumerate(sessions):
        questions = [t.question.text for t in session.turns]
        assert questions == [f"question of th{index}"], (index, questions)
        answer = session.turns[0].answer
        assert answer is not None and answer.text == f"ok: question of th{index}", answer


@then('thread "{thread}" holds {turns:d} turns, each question once')
def step_shared(context: Context, thread: str, turns: int) -> None:
    (session,) = asyncio.run(_load(context, [thread]))
    questions = sorted(t.question.text for t in session.turns)
    assert questions == sorted(f"question {k} of {thread}" for k in range(turns)), questions
    assert [t.number for t in session.turns] == list(range(1, turns + 1))
    assert all(t.status == "done" for t in session.turns)


@then("no request carried a question of another thread")
def step_no_crosstalk(context: Context) -> None:
    owner = re.compile(r"of (th\d+|shared)\b")
    for request in _harness(context).model.requests:
        threads = {owner.search(m.text).group(1) for m in request.messages if owner.search(m.text)}
        assert len(threads) == 1, threads


async def _load(context: Context, threads: list[str]) -> list[Any]:
    store = open_store(context.session_store_url)
    try:
        return [await store.load(thread) for thread in threads]
    finally:
        await store.close()


@then('the session error says "{text}"')
def step_session_error(context: Context, text: str) -> None:
    error = _harness(context).error
    assert isinstance(error, SessionError), error
    assert text in str(error) and "\n" not in str(error), str(error)
