"""Steps for features/budget/budget_trimming.feature: the request view's trimming passes."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from leanloop.budget import (
    TRIM_NOTE,
    ContextPlan,
    FitResult,
    MessageCounter,
    TokenEstimator,
    fit_messages,
    is_trimmed,
    trim_result,
)
from leanloop.protocol import TEXT_RESULT_MARK, is_tool_result
from leanloop.pruning import format_pruned, is_pruned


def _plan(ceiling: int, target: int) -> ContextPlan:
    return ContextPlan(
        window=ceiling * 2,
        budget_percent=0.85,
        reply_reserve=0,
        ceiling=ceiling,
        trim_target=target,
        warn_at=target,
    )


def _body(step: int, call: int, size: int) -> str:
    head = f"f{step}-{call}.txt: line 1 of the file\n"
    filler = "".join(f"line {n}: some text of the file\n" for n in range(2, size // 20 + 2))
    return (head + filler)[:size]


def _pruned_body(step: int, size: int) -> str:
    """A pruning pass's extract of about ``size`` characters, in the marker format."""
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < size:
        number = 7 * (len(lines) + 1)
        lines.append(f"{number:>6}| f{step}.txt release_code=RC-{step}{number:04d}")
    return format_pruned(f"kept the lines of f{step}.txt with release_code", "\n".join(lines))


def _snapshot(messages: list[BaseMessage]) -> list[str]:
    return [json.dumps(m.model_dump(), sort_keys=True, default=str) for m in messages]


def _fit(context: Context, **options: object) -> FitResult:
    count = context.budget_trim_counter.count_fn()
    result = fit_messages(
        context.budget_trim_history, plan=context.budget_trim_plan, count=count, **options
    )
    context.budget_trim_fits.append(result)
    return result


def _trimmed_steps(context: Context, result: FitResult) -> list[int]:
    return [
        context.budget_trim_step_of[i]
        for i, message in enumerate(result.messages)
        if is_trimmed(message)
    ]


# --- Given -------------------------------------------------------------------------------


@given("a trimming counter at {ratio:f} characters a token")
def step_counter(context: Context, ratio: float) -> None:
    context.budget_trim_counter = MessageCounter(TokenEstimator(ratio))
    context.budget_trim_fits = []
    assert context.budget_trim_counter.estimator.chars_per_token == ratio


def _conversation(context: Context, steps: int, calls: int, size: int, *, text: bool) -> None:
    history: list[BaseMessage] = [
        SystemMessage("You are a careful reader."),
        HumanMessage("Read the files and summarise them."),
    ]
    step_of: dict[int, int] = {}
    for step in range(1, steps + 1):
        if text:
            history.append(AIMessage(f'```tool\n{{"name": "read_file", "arguments": {step}}}\n```'))
            step_of[len(history)] = step
            body = f'<tool_result name="read_file">\n{_body(step, 1, size)}'
            history.append(HumanMessage(body, additional_kwargs={TEXT_RESULT_MARK: True}))
            continue
        ids = [f"call_{step}_{n}" for n in range(1, calls + 1)]
        history.append(
            AIMessage(
                "",
                tool_calls=[
                    {"name": "read_file", "args": {"path": f"f{step}.txt"}, "id": i} for i in ids
                ],
            )
        )
        for n, call_id in enumerate(ids, start=1):
            step_of[len(history)] = step
            history.append(
                ToolMessage(_body(step, n, size), tool_call_id=call_id, name="read_file")
            )
    context.budget_trim_history = history
    context.budget_trim_step_of = step_of
    context.budget_trim_before = _snapshot(history)


@given("a trimming conversation of {steps:d} tool steps with results of {size:d} characters")
def step_conversation(context: Context, steps: int, size: int) -> None:
    _conversation(context, steps, 1, size, text=False)
    assert len(context.budget_trim_history) == 2 + 2 * steps


@given(
    "a trimming conversation of {steps:d} tool steps with {calls:d} calls each and results of "
    "{size:d} characters"
)
def step_conversation_calls(context: Context, steps: int, calls: int, size: int) -> None:
    _conversation(context, steps, calls, size, text=False)
    assert len(context.budget_trim_history) == 2 + steps * (1 + calls)


@given("a trimming conversation of {steps:d} text-mode steps with results of {size:d} characters")
def step_conversation_text(context: Context, steps: int, size: int) -> None:
    _conversation(context, steps, 1, size, text=True)
    assert sum(is_tool_result(m) for m in context.budget_trim_history) == steps


@given("the trimming conversation ends with a question of {size:d} characters")
def step_question(context: Context, size: int) -> None:
    context.budget_trim_question = HumanMessage("q" * size)
    context.budget_trim_history.append(context.budget_trim_question)
    context.budget_trim_before = _snapshot(context.budget_trim_history)
    assert not is_tool_result(context.budget_trim_question)


@given("the first trimming result starts with a line of {size:d} characters")
def step_long_line(context: Context, size: int) -> None:
    index = min(context.budget_trim_step_of)
    old = context.budget_trim_history[index]
    context.budget_trim_history[index] = ToolMessage(
        "L" * size + "\n" + old.text, tool_call_id=old.tool_call_id, name=old.name
    )
    context.budget_trim_before = _snapshot(context.budget_trim_history)
    assert context.budget_trim_history[index].text.startswith("L" * size)


@given("the trimming results of steps {steps} are pruned extracts of {size:d} characters")
def step_pruned(context: Context, steps: str, size: int) -> None:
    wanted = {int(s) for s in steps.split(", ")}
    history = context.budget_trim_history
    for index, step in context.budget_trim_step_of.items():
        if step not in wanted:
            continue
        old = history[index]
        body = _pruned_body(step, size)
        if isinstance(old, ToolMessage):
            history[index] = ToolMessage(body, tool_call_id=old.tool_call_id, name=old.name)
        else:
            text = f'<tool_result name="read_file">\n{body}\n</tool_result>'
            history[index] = HumanMessage(text, additional_kwargs={TEXT_RESULT_MARK: True})
    context.budget_trim_before = _snapshot(history)
    marked = {step for i, step in context.budget_trim_step_of.items() if is_pruned(history[i])}
    assert marked == wanted, marked


@given(
    "a trimming plan with a ceiling of {ceiling:d} tokens and a trim target of {target:d} tokens"
)
def step_plan(context: Context, ceiling: int, target: int) -> None:
    context.budget_trim_plan = _plan(ceiling, target)
    assert context.budget_trim_plan.ceiling == ceiling


# --- When --------------------------------------------------------------------------------


@when("the conversation is fitted for trimming")
def step_fit(context: Context) -> None:
    result = _fit(context)
    assert len(result.messages) == len(context.budget_trim_history)


@when("the conversation is fitted for trimming keeping {keep:d} steps")
def step_fit_keep(context: Context, keep: int) -> None:
    result = _fit(context, keep_steps=keep)
    assert len(result.messages) == len(context.budget_trim_history)


@when("the conversation is fitted with trimming turned off")
def step_fit_off(context: Context) -> None:
    result = _fit(context, enabled=False)
    assert result.tokens_after == result.tokens_before


def _fit_again(context: Context, ceiling: int, target: int, *, sticky: bool) -> None:
    """Fit once more: the previous view as the messages, or the history from that view."""
    first = context.budget_trim_fits[-1]
    count = context.budget_trim_counter.count_fn()
    plan = _plan(ceiling, target)
    if sticky:
        again = fit_messages(
            context.budget_trim_history, plan=plan, count=count, start=first.messages
        )
    else:
        again = fit_messages(first.messages, plan=plan, count=count)
    context.budget_trim_fits.append(again)
    assert len(again.messages) == len(first.messages)


@when(
    "the trimming view is fitted again under a ceiling of {ceiling:d} tokens and a trim target "
    "of {target:d} tokens"
)
def step_fit_again(context: Context, ceiling: int, target: int) -> None:
    _fit_again(context, ceiling, target, sticky=False)


@when(
    "the conversation is fitted again from that view under a ceiling of {ceiling:d} tokens "
    "and a trim target of {target:d} tokens"
)
def step_fit_from_view(context: Context, ceiling: int, target: int) -> None:
    _fit_again(context, ceiling, target, sticky=True)


# --- Then --------------------------------------------------------------------------------


@then("no tool result is trimmed")
def step_none_trimmed(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    assert result.trimmed == 0
    assert not any(is_trimmed(m) for m in result.messages)


@then("the trimming view holds the very same messages")
def step_same_messages(context: Context) -> None:
    view = context.budget_trim_fits[-1].messages
    assert all(a is b for a, b in zip(view, context.budget_trim_history, strict=True))


@then('the trimming passes that ran are "{passes}"')
def step_passes(context: Context, passes: str) -> None:
    expected = tuple(int(p) for p in passes.split(", "))
    assert context.budget_trim_fits[-1].passes == expected, context.budget_trim_fits[-1].passes


@then("no trimming passes ran")
def step_no_passes(context: Context) -> None:
    assert context.budget_trim_fits[-1].passes == (), context.budget_trim_fits[-1].passes


@then("the trimmed results are those of steps {steps}")
def step_trimmed_steps(context: Context, steps: str) -> None:
    result = context.budget_trim_fits[-1]
    expected = [int(s) for s in steps.split(", ")]
    assert _trimmed_steps(context, result) == expected, _trimmed_steps(context, result)
    assert result.trimmed == len(expected)


@then("the trimming estimate is at or under the trim target")
def step_under_target(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    assert result.tokens_after <= context.budget_trim_plan.trim_target, result.tokens_after


@then("the trimming estimate is over the trim target")
def step_over_target(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    assert result.tokens_after > context.budget_trim_plan.trim_target, result.tokens_after


@then("the trimming results of steps {steps} count as pruned and the others as raw")
def step_told_apart(context: Context, steps: str) -> None:
    wanted = [int(s) for s in steps.split(", ")]
    history, step_of = context.budget_trim_history, context.budget_trim_step_of
    pruned = [step for i, step in sorted(step_of.items()) if is_pruned(history[i])]
    assert pruned == wanted, pruned


@then("the trimming figures add up")
def step_figures(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    count = context.budget_trim_counter.count_fn()
    assert result.tokens_before == count(context.budget_trim_history)
    assert result.tokens_after == count(result.messages)
    assert result.tokens_saved == result.tokens_before - result.tokens_after > 0


@then("the trimming view is not over the ceiling")
def step_not_over(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    assert not result.over and result.tokens_after <= context.budget_trim_plan.ceiling


@then("the trimming view is over the ceiling")
def step_over(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    assert result.over and result.tokens_after > context.budget_trim_plan.ceiling


@then("the trimming question is untouched")
def step_question_untouched(context: Context) -> None:
    view = context.budget_trim_fits[-1].messages
    assert view[-1] is context.budget_trim_question


@then("every trimming tool call is still followed by exactly its results")
def step_pairs(context: Context) -> None:
    assert _pairs_ok(context.budget_trim_fits[-1].messages)


@then("every trimmed result is its first line and the trimming note")
def step_trimmed_form(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    for original, message in zip(context.budget_trim_history, result.messages, strict=True):
        if is_trimmed(message):
            first = original.text.splitlines()[0]
            assert message.content == f"{first}\n{TRIM_NOTE}", message.content


@then("every trimmed result is marked trimmed and keeps its call id and tool name")
def step_trimmed_meta(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    pairs = zip(context.budget_trim_history, result.messages, strict=True)
    trimmed = [(o, m) for o, m in pairs if is_trimmed(m)]
    assert trimmed
    for original, message in trimmed:
        assert isinstance(message, ToolMessage) and isinstance(original, ToolMessage)
        assert message.response_metadata["leanloop_trimmed"] is True
        assert (message.tool_call_id, message.name) == (original.tool_call_id, original.name)


@then("the first trimmed result's first line has {size:d} characters")
def step_first_line(context: Context, size: int) -> None:
    result = context.budget_trim_fits[-1]
    first = next(m for m in result.messages if is_trimmed(m))
    line = first.text.splitlines()[0]
    assert len(line) == size, len(line)


@then("the second trimming fit trimmed {count:d} more result")
def step_second_fit(context: Context, count: int) -> None:
    assert context.budget_trim_fits[-1].trimmed == count, context.budget_trim_fits[-1]


@then("no trimming result was trimmed twice")
def step_not_twice(context: Context) -> None:
    first, second = context.budget_trim_fits[-2:]
    for before, after in zip(first.messages, second.messages, strict=True):
        if is_trimmed(before):
            assert after is before
        assert TRIM_NOTE not in after.text.replace(TRIM_NOTE, "", 1)


@then("trimming a trimmed result returns it unchanged")
def step_trim_trimmed(context: Context) -> None:
    trimmed = next(m for m in context.budget_trim_fits[-1].messages if is_trimmed(m))
    assert trim_result(trimmed) is trimmed


@then("the trimmed copies are the same objects as in the first trimming view")
def step_same_copies(context: Context) -> None:
    first, latest = context.budget_trim_fits[0], context.budget_trim_fits[-1]
    assert latest.trimmed == first.trimmed > 0
    for a, b in zip(first.messages, latest.messages, strict=True):
        assert a is b


@then("the trimming history is exactly as it was")
def step_history_kept(context: Context) -> None:
    assert _snapshot(context.budget_trim_history) == context.budget_trim_before
    assert not any(is_trimmed(m) for m in context.budget_trim_history)


@then("the trimming view is a different list from the history")
def step_view_list(context: Context) -> None:
    view = context.budget_trim_fits[-1].messages
    assert view is not context.budget_trim_history
    assert context.budget_trim_fits[-1].trimmed > 0


@then("the trimming counter measured each message and each trimmed copy once")
def step_measured_once(context: Context) -> None:
    result = context.budget_trim_fits[-1]
    expected = len(context.budget_trim_history) + result.trimmed
    assert result.trimmed > 10
    assert context.budget_trim_counter.computations == expected, (
        context.budget_trim_counter.computations,
        expected,
    )


@then('fitting for trimming keeping {keep:d} steps fails with "{text}"')
def step_keep_fails(context: Context, keep: int, text: str) -> None:
    try:
        _fit(context, keep_steps=keep)
    except ValueError as exc:
        assert text in str(exc), str(exc)
    else:
        raise AssertionError("a negative trim_keep_steps was accepted")


# --- property-style check over random conversations --------------------------------------


@dataclass
class Trial:
    """One random conversation, its snapshot before fitting, and the fit."""

    history: list[BaseMessage]
    before: list[str]
    plan: ContextPlan
    result: FitResult
    count: Callable[[Sequence[BaseMessage]], int]
    keep_steps: int = 2


def _random_conversation(rng: random.Random, *, pruned: float = 0.0) -> list[BaseMessage]:
    """A random conversation; ``pruned`` is the share of results that are pruned extracts."""

    def result(raw: str, step: int) -> str:
        if pruned and rng.random() < pruned:
            return _pruned_body(step, rng.randint(0, 1200))
        return raw

    history: list[BaseMessage] = [SystemMessage("system " * rng.randint(1, 50))]
    history.append(HumanMessage("question " * rng.randint(1, 80)))
    for step in range(rng.randint(0, 12)):
        roll = rng.random()
        if roll < 0.15:
            history.append(AIMessage("thinking " * rng.randint(0, 40)))
            history.append(HumanMessage("follow-up " * rng.randint(1, 40)))
        elif roll < 0.3:
            history.append(AIMessage(f'```tool\n{{"name": "grep", "step": {step}}}\n```'))
            body = "\n".join("r" * rng.randint(0, 120) for _ in range(rng.randint(0, 60)))
            body = result(body, step)
            history.append(HumanMessage(body, additional_kwargs={TEXT_RESULT_MARK: True}))
        else:
            ids = [f"c{step}_{n}" for n in range(rng.randint(1, 4))]
            calls = [{"name": "read_file", "args": {"path": i}, "id": i} for i in ids]
            history.append(AIMessage("", tool_calls=calls))
            for call_id in ids:
                lines = [
                    f"{call_id} " + "x" * rng.randint(0, 200) for _ in range(rng.randint(0, 80))
                ]
                body = result("\n".join(lines), step)
                history.append(ToolMessage(body, tool_call_id=call_id))
    return history


def _trial(rng: random.Random, *, pruned: float = 0.0) -> Trial:
    history = _random_conversation(rng, pruned=pruned)
    counter = MessageCounter(TokenEstimator(rng.uniform(2.0, 6.0)))
    total = counter.count_fn()(history)
    ceiling = max(int(total * rng.uniform(0.05, 1.3)), 2)
    target = max(ceiling * 65 // 100, 1)
    plan = ContextPlan(
        window=ceiling * 2,
        budget_percent=0.85,
        reply_reserve=0,
        ceiling=ceiling,
        trim_target=target,
        warn_at=target,
    )
    before = _snapshot(history)
    count = counter.count_fn(extra_chars=rng.randint(0, 500))
    keep = rng.randint(0, 3)
    result = fit_messages(history, plan=plan, count=count, keep_steps=keep)
    return Trial(history, before, plan, result, count, keep)


def _pairs_ok(view: list[BaseMessage]) -> bool:
    for index, message in enumerate(view):
        if isinstance(message, AIMessage) and message.tool_calls:
            ids = [call["id"] for call in message.tool_calls]
            following = view[index + 1 : index + 1 + len(ids)]
            if [getattr(m, "tool_call_id", None) for m in following] != ids:
                return False
        if isinstance(message, ToolMessage):
            previous = view[index - 1]
            if not isinstance(previous, AIMessage | ToolMessage):
                return False
    return True


@when("{count:d} seeded random conversations are fitted for trimming")
def step_random(context: Context, count: int) -> None:
    rng = random.Random(20240604)
    context.budget_trim_trials = [_trial(rng) for _ in range(count)]
    assert len(context.budget_trim_trials) == count


@when("{count:d} seeded random conversations with pruned results are fitted for trimming")
def step_random_pruned(context: Context, count: int) -> None:
    rng = random.Random(20240605)
    context.budget_trim_trials = [_trial(rng, pruned=0.4) for _ in range(count)]
    assert len(context.budget_trim_trials) == count


@then("every trimming view kept its length, order and pairs")
def step_random_pairs(context: Context) -> None:
    for trial in context.budget_trim_trials:
        view = trial.result.messages
        assert len(view) == len(trial.history)
        assert [type(m) for m in view] == [type(m) for m in trial.history]
        assert _pairs_ok(view)
        for original, message in zip(trial.history, view, strict=True):
            if isinstance(original, ToolMessage):
                assert message.tool_call_id == original.tool_call_id  # type: ignore[attr-defined]


@then("every trimming view left system, human and AI messages byte-identical")
def step_random_identical(context: Context) -> None:
    for trial in context.budget_trim_trials:
        for original, message in zip(trial.history, trial.result.messages, strict=True):
            if not is_tool_result(original):
                assert message is original
            elif message is not original:
                assert is_trimmed(message) and message.text.endswith(TRIM_NOTE)


@then("no trimming input was mutated")
def step_random_not_mutated(context: Context) -> None:
    for trial in context.budget_trim_trials:
        assert _snapshot(trial.history) == trial.before


@then("every trimming view is under its ceiling unless nothing more could be trimmed")
def step_random_ceiling(context: Context) -> None:
    for trial in context.budget_trim_trials:
        result = trial.result
        assert result.tokens_after == trial.count(result.messages)
        assert result.over == (result.tokens_after > trial.plan.ceiling)
        if result.over:
            for message in result.messages:
                if is_tool_result(message) and not is_trimmed(message):
                    # Whatever was left could not be made shorter by trimming.
                    assert trial.count([message]) <= trial.count([trim_result(message)])


@then("the random trimming conversations exercised all three passes")
def step_random_passes(context: Context) -> None:
    seen = {p for trial in context.budget_trim_trials for p in trial.result.passes}
    overs = sum(trial.result.over for trial in context.budget_trim_trials)
    untouched = sum(trial.result.trimmed == 0 for trial in context.budget_trim_trials)
    assert seen == {1, 2, 3}, seen
    assert 0 < overs < len(context.budget_trim_trials)
    assert 0 < untouched < len(context.budget_trim_trials)


def _results_by_step(trial: Trial) -> list[tuple[int, int]]:
    """``(index, step)`` of every result of ``trial``'s history; the step is its AI index."""
    found, step = [], -1
    for index, message in enumerate(trial.history):
        if isinstance(message, AIMessage):
            step = index
        elif is_tool_result(message):
            found.append((index, step))
    return found


def _done_with(trial: Trial, index: int) -> bool:
    """Whether result ``index`` is trimmed in the view, or could not be made shorter."""
    original, message = trial.history[index], trial.result.messages[index]
    return is_trimmed(message) or trial.count([original]) <= trial.count([trim_result(original)])


@then("every trimming view trimmed a pruned result only after the raw results of older steps")
def step_random_raw_first(context: Context) -> None:
    for trial in context.budget_trim_trials:
        results = _results_by_step(trial)
        newest = max((step for _, step in results), default=None)
        view = trial.result.messages
        if any(is_trimmed(view[i]) and is_pruned(trial.history[i]) for i, _ in results):
            for index, step in results:
                if step != newest and not is_pruned(trial.history[index]):
                    assert _done_with(trial, index), (index, trial.result)


@then("every trimming view trimmed the newest step only after every older result")
def step_random_newest_last(context: Context) -> None:
    for trial in context.budget_trim_trials:
        results = _results_by_step(trial)
        newest = max((step for _, step in results), default=None)
        view = trial.result.messages
        newest_trimmed = [i for i, step in results if step == newest and is_trimmed(view[i])]
        if trial.keep_steps == 0:  # the first pass may take the newest step's raw results
            newest_trimmed = [i for i in newest_trimmed if is_pruned(trial.history[i])]
        if newest_trimmed:
            for index, step in results:
                if step != newest:
                    assert _done_with(trial, index), (index, trial.result)


@then("the random pruned conversations both trimmed and spared pruned results")
def step_random_spared(context: Context) -> None:
    trimmed = spared = 0
    for trial in context.budget_trim_trials:
        pairs = zip(trial.history, trial.result.messages, strict=True)
        pruned = [(o, m) for o, m in pairs if is_tool_result(o) and is_pruned(o)]
        trimmed += any(is_trimmed(m) for _, m in pruned)
        spared += trial.result.trimmed > 0 and any(
            m is o and trial.count([o]) > trial.count([trim_result(o)]) for o, m in pruned
        )
    assert trimmed > 10 and spared > 10, (trimmed, spared)
