"""Steps for features/loop/memory.feature: nothing of a finished run stays behind; a step costs
what it added.

The reachability check holds only weak references: the scripted model takes one to every
tool result it is sent (originals and trimmed copies) and forgets its own record of the
request, so after the runs and a ``gc.collect()`` every reference must be dead.
"""

from __future__ import annotations

import gc
import random
import uuid
import weakref
from collections.abc import Coroutine, Sequence
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
from langchain_core.tools import BaseTool, StructuredTool

from leanloop.agent import LLMAgent
from leanloop.budget import (
    ContextPlan,
    FitResult,
    MessageCounter,
    TokenEstimator,
    Window,
    fit_messages,
    is_trimmed,
    trim_result,
)
from leanloop.budget.fit import RunFitter
from leanloop.budget.run import Prepared, RunBudget
from leanloop.protocol import TEXT_RESULT_MARK
from leanloop.pruning import format_pruned
from leanloop.report import RunReport
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

_MODEL_CLASS = "leanloop.testing:ScriptedChatModel"


# --- a finished run leaves nothing behind ----------------------------------------------------


@given(
    "a memory agent whose tool returns {size:d} characters {calls:d} times a run "
    "in a {window:d}-token window"
)
def step_memory_agent(context: Context, size: int, calls: int, window: int) -> None:
    # Its own model name: the process-wide estimator it counts with starts fresh at 3.3.
    model = ScriptedChatModel(repeat_last=True, model_name=f"memory-{uuid.uuid4().hex}")
    seen: list[weakref.ref[BaseMessage]] = []
    trimmed_sent = [0]
    pages = iter(range(10**9))

    async def fetch(page: int) -> str:
        """Return one page of the report."""
        number = next(pages)
        line = f"page {page} ({number}): " + "r" * 60 + "\n"
        return (f"page {page} ({number})\n" + line * (size // len(line) + 1))[:size]

    def reply(messages: list[BaseMessage]) -> dict[str, object]:
        model.requests.clear()  # the test double's record of requests would keep them
        results = [m for m in messages if isinstance(m, ToolMessage)]
        seen.extend(weakref.ref(m) for m in results)
        trimmed_sent[0] += sum(is_trimmed(m) for m in results)
        if len(results) >= calls:
            return {"content": f"Read {len(results)} pages."}
        return {"tool_calls": [{"name": "fetch", "args": {"page": len(results) + 1}}]}

    model.replies = [reply]
    tool: BaseTool = StructuredTool.from_function(coroutine=fetch, name="fetch")
    spec = AgentSpec(
        name="memory",
        model=ModelSpec(class_path=_MODEL_CLASS, context_window=window),
        max_rounds=calls + 5,
    )
    context.memory_agent = LLMAgent.from_spec(spec, model=model, tools=[tool])
    context.memory_seen = seen
    context.memory_trimmed_sent = trimmed_sent
    context.memory_calls = calls


@when("the memory agent runs {count:d} times")
def step_memory_runs(context: Context, count: int) -> None:
    context.memory_reports = []
    for _ in range(count):
        report = context.memory_agent.invoke("Read every page.").response_metadata["leanloop"]
        assert report["stop_reason"] == "answer", report["stop_reason"]
        assert report["steps"] >= context.memory_calls, report["steps"]
        context.memory_reports.append(
            {key: report[key] for key in ("trimmed_results", "tokens_saved_by_trimming")}
        )


@then("every memory run trimmed a tool result")
def step_memory_trimmed(context: Context) -> None:
    for report in context.memory_reports:
        assert report["trimmed_results"] > 0, report
    assert context.memory_trimmed_sent[0] > 0, "no trimmed copy was sent"


@then("no tool result of the memory runs is still reachable after a garbage collection")
def step_memory_unreachable(context: Context) -> None:
    gc.collect()
    alive = [m for m in (r() for r in context.memory_seen) if m is not None]
    described = [f"{'trimmed ' if is_trimmed(m) else ''}{m.text[:30]!r}" for m in alive[:5]]
    assert not alive, f"{len(alive)} of {len(context.memory_seen)} results alive: {described}"


# --- a step measures only what it added -----------------------------------------------------


def _long_history(count: int) -> list[BaseMessage]:
    history: list[BaseMessage] = [SystemMessage("You read files."), HumanMessage("Read them.")]
    step = 0
    while len(history) < count:
        history.extend(_memory_step(step))
        step += 1
    return history[:count]


def _memory_step(step: int) -> list[BaseMessage]:
    call = {"name": "read_file", "args": {"path": f"f{step}.py"}, "id": f"c{step}"}
    body = f"f{step}.py\n" + f"{step:6d}| def handler(): return respond()\n" * 12
    return [
        AIMessage("", tool_calls=[{**call, "type": "tool_call"}]),
        ToolMessage(body, tool_call_id=f"c{step}", name="read_file"),
    ]


def _memory_budget() -> RunBudget:
    spec = AgentSpec(
        name="memory", model=ModelSpec(class_path=_MODEL_CLASS, context_window=1_000_000)
    )
    model = ScriptedChatModel(model_name=f"memory-{uuid.uuid4().hex}")
    return RunBudget(
        spec=spec,
        window=Window(1_000_000, "config"),
        model=model,
        report=RunReport(),
        config={},
    )


def _drive(check: Coroutine[Any, Any, Prepared]) -> Prepared:
    """Run ``RunBudget.prepare`` to its end: with no run listening it never suspends.

    Not ``asyncio.run``: a task's result can end up in a repr, and this one holds 9,000
    messages.
    """
    try:
        check.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    check.close()
    msg = "RunBudget.prepare suspended"
    raise AssertionError(msg)


@given("a memory run budget that has checked a history of {count:d} messages past its ceiling")
def step_memory_budget(context: Context, count: int) -> None:
    history = _long_history(count)
    budget = _memory_budget()
    tokens = MessageCounter(budget.counter.estimator).estimate(history).tokens
    ceiling = tokens * 3 // 4
    target = ceiling * 65 // 100
    plan = ContextPlan(
        window=ceiling * 2,
        budget_percent=0.85,
        reply_reserve=0,
        ceiling=ceiling,
        trim_target=target,
        warn_at=target,
    )
    first = _drive(budget.prepare(history, step=1, plan=plan))
    assert any(is_trimmed(m) for m in first.messages)
    context.memory_history, context.memory_budget, context.memory_plan = history, budget, plan
    context.memory_first = first.messages


@when("one more memory step is appended and the run budget checks the history again")
def step_memory_check_again(context: Context) -> None:
    budget: RunBudget = context.memory_budget
    history: list[BaseMessage] = context.memory_history
    context.memory_added = _memory_step(10**6)
    history.extend(context.memory_added)
    measured, trimmed = budget.counter.computations, budget.report.trimmed_results
    prepared = _drive(budget.prepare(history, step=2, plan=context.memory_plan))
    context.memory_measured = budget.counter.computations - measured
    context.memory_new_trims = budget.report.trimmed_results - trimmed
    context.memory_second = prepared.messages


@then("the memory check measured only the new messages and the copies it trimmed")
def step_memory_measured(context: Context) -> None:
    most = len(context.memory_added) + context.memory_new_trims
    assert context.memory_measured <= most, (
        f"measured {context.memory_measured} messages for {len(context.memory_added)} new "
        f"ones and {context.memory_new_trims} new trimmed copies"
    )


@then("the memory check kept every result trimmed before")
def step_memory_kept(context: Context) -> None:
    first, second = context.memory_first, context.memory_second
    assert len(second) == len(first) + len(context.memory_added)
    for before, now in zip(first, second, strict=False):
        if is_trimmed(before):
            assert now is before


# --- the incremental view is exactly fit_messages' view --------------------------------------


def _random_result(rng: random.Random, n: int) -> BaseMessage:
    kind = rng.random()
    if kind < 0.15:  # shorter than its trimmed form: never worth trimming
        body = "x" * rng.randint(0, 30)
    elif kind < 0.3:  # about as long as its trimmed form: saves a token or none
        body = "first line " * rng.randint(1, 3) + "\n" + "y" * rng.randint(55, 75)
    elif kind < 0.45:
        lines = "\n".join(f"{i:>6}| line {i}" for i in range(rng.randint(1, 30)))
        body = format_pruned("kept the lines asked for", lines)
    elif kind < 0.5:  # a history that already holds a trimmed copy
        return trim_result(ToolMessage("big\n" + "z" * 500, tool_call_id=f"c{n}"))
    else:
        body = f"head {n}\n" + "w" * rng.choice([50, 200, 1_000, 4_000, 20_000])
    if rng.random() < 0.2:
        return HumanMessage(body, additional_kwargs={TEXT_RESULT_MARK: True})
    return ToolMessage(body, tool_call_id=f"c{n}", name="read_file")


def _random_plan(rng: random.Random, tokens: int) -> ContextPlan:
    ceiling = max(1, int(tokens * rng.uniform(0.2, 1.3)))
    target = max(1, int(ceiling * rng.choice([rng.uniform(0.3, 1.0), 1.0])))
    return ContextPlan(
        window=ceiling * 2,
        budget_percent=0.85,
        reply_reserve=0,
        ceiling=ceiling,
        trim_target=target,
        warn_at=rng.randint(target, ceiling),
    )


def _passed(rng: random.Random, history: list[BaseMessage]) -> Sequence[BaseMessage]:
    """The history as the loop passes it: mostly itself, sometimes changed or rebuilt."""
    variant = rng.random()
    if variant < 0.05 and len(history) > 2:
        changed = list(history)
        at = rng.randrange(len(changed))
        changed[at] = changed[at].model_copy(update={"content": "changed " + changed[at].text})
        return changed
    if variant < 0.08:
        return [SystemMessage("another system prompt"), *history[1:]]
    if variant < 0.1:
        return tuple(history)
    if variant < 0.12 and len(history) > 3:
        return history[:-1]
    return history


def _compare_run(seed: int) -> list[str]:
    """Fit one random run both ways; return what differed."""
    rng = random.Random(seed)
    estimator = TokenEstimator(rng.uniform(2.0, 6.0))
    estimator.drops_tools_on_answer_turns = rng.random() < 0.3
    keep, enabled = rng.randint(0, 3), rng.random() < 0.9
    counter = MessageCounter(estimator)
    fitter = RunFitter(MessageCounter(estimator), keep_steps=keep, enabled=enabled)
    schema = {"type": "function", "function": {"name": "read_file", "parameters": {}}}
    tool_lists: list[list[dict[str, Any]]] = [[], [schema]]
    history: list[BaseMessage] = [SystemMessage("sys " * rng.randint(1, 50))]
    if rng.random() < 0.3:
        history.append(_random_result(rng, -1))
    history.append(HumanMessage("question"))
    last: tuple[list[BaseMessage], list[BaseMessage]] | None = None
    problems: list[str] = []
    results = 0
    for step in range(rng.randint(1, 40)):
        if rng.random() < 0.85:
            history.append(AIMessage(f"step {step}"))
            for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
                results += 1
                history.append(_random_result(rng, results))
        else:
            history.append(HumanMessage("more " * rng.randint(1, 20)))
        passed = _passed(rng, history)
        if rng.random() < 0.1:
            estimator.observe(estimated_chars=1_000, input_tokens=rng.randint(170, 480))
        if rng.random() < 0.05:
            estimator.drops_tools_on_answer_turns = not estimator.drops_tools_on_answer_turns
        tools = rng.choice(tool_lists)
        tokens = counter.count_fn(tools=tools)(list(passed))
        for attempt in range(rng.choice([1, 1, 1, 2])):  # a retry under a smaller plan
            plan = _random_plan(rng, tokens)
            start = None  # the loop's check before RunFitter: the previous view, extended
            if last is not None and list(passed[: len(last[0])]) == last[0]:
                start = [*last[1], *passed[len(last[0]) :]]
            want = fit_messages(
                passed,
                plan=plan,
                count=counter.count_fn(tools=tools),
                keep_steps=keep,
                enabled=enabled,
                start=start,
            )
            last = (list(passed), want.messages)
            got = fitter.fit(passed, plan=plan, tools=tools)
            where = f"seed {seed}, step {step}, attempt {attempt}"
            problems.extend(f"{where}: {p}" for p in _differences(got, want, passed))
            if fitter.chars != counter.total_chars(want.messages):
                problems.append(f"{where}: view chars {fitter.chars}")
            made = {id(copy) for _, copy in fitter.fresh}
            if not made <= {id(m) for m in want.messages if is_trimmed(m)}:
                problems.append(f"{where}: a fresh copy is not in the view")
    return problems


def _differences(got: FitResult, want: FitResult, passed: Sequence[BaseMessage]) -> list[str]:
    problems = []
    if len(got.messages) != len(want.messages):
        return [f"{len(got.messages)} messages, expected {len(want.messages)}"]
    for index, (a, b) in enumerate(zip(got.messages, want.messages, strict=True)):
        if a is not b and not (a == b and type(a) is type(b)):
            problems.append(f"message {index} differs")
    figures = ("tokens_before", "tokens_after", "trimmed", "passes", "over")
    for name in figures:
        if getattr(got, name) != getattr(want, name):
            problems.append(f"{name} {getattr(got, name)!r}, expected {getattr(want, name)!r}")
    return problems


@when("{count:d} random memory runs are fitted step by step by the run fitter and by fit_messages")
def step_memory_random(context: Context, count: int) -> None:
    context.memory_problems = [p for seed in range(count) for p in _compare_run(seed)]


@then("every memory view, figure and trimmed copy matched")
def step_memory_matched(context: Context) -> None:
    problems = context.memory_problems
    assert not problems, f"{len(problems)} differences, first: {problems[:5]}"
