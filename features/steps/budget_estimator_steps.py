"""Steps for features/budget_estimator.feature: the learned ratio and incremental counting."""

from __future__ import annotations

import json
import math
import random
import threading

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from leanloop.budget import (
    MessageCounter,
    TokenEstimator,
    estimator_for,
    message_chars,
    schema_chars,
)


@tool
def read_file(path: str, start: int = 1) -> str:
    """Read a text file from the workspace, from line ``start``."""
    return path


@tool
def search(pattern: str) -> str:
    """Search the workspace for a regular expression."""
    return pattern


_TOOLS = {"read_file": read_file, "search": search}

_MESSAGES: dict[str, BaseMessage] = {
    "system hello": SystemMessage("hello"),
    "human parts": HumanMessage(content=["abc", {"type": "text", "text": "12345678"}]),
    "human image": HumanMessage(
        content=[
            {"type": "text", "text": "hello"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 5000}},
        ]
    ),
    "ai with tool call": AIMessage(
        content="ok",
        tool_calls=[{"name": "read_file", "args": {"path": "a.txt"}, "id": "call_1"}],
    ),
    "tool result": ToolMessage("result", tool_call_id="call_1"),
    "named human": HumanMessage("hi", name="alice"),
    "human other part": HumanMessage(content=[{"type": "json", "data": {"k": [1, 2]}}]),
}


def _history(count: int, size: int) -> list[BaseMessage]:
    kinds = (HumanMessage, AIMessage)
    return [kinds[i % 2](content="x" * size) for i in range(count)]


# --- the ratio ---------------------------------------------------------------------------


@given("a fresh token estimator")
def step_fresh(context: Context) -> None:
    context.budget_estimator = TokenEstimator()
    assert context.budget_estimator.observations == 0


@when("the estimator observes {chars:d} characters counted as {tokens:d} tokens")
def step_observe(context: Context, chars: int, tokens: int) -> None:
    ratio = context.budget_estimator.observe(estimated_chars=chars, input_tokens=tokens)
    assert ratio == context.budget_estimator.chars_per_token


@when("the estimator observes {chars:d} characters counted as {tokens:d} tokens {times:d} times")
def step_observe_times(context: Context, chars: int, tokens: int, times: int) -> None:
    for _ in range(times):
        context.budget_estimator.observe(estimated_chars=chars, input_tokens=tokens)
    assert context.budget_estimator.observations == times


@when(
    "{threads:d} threads each make the estimator observe {chars:d} characters counted as "
    "{tokens:d} tokens {times:d} times"
)
def step_observe_threads(
    context: Context, threads: int, chars: int, tokens: int, times: int
) -> None:
    estimator: TokenEstimator = context.budget_estimator
    start = threading.Barrier(threads)

    def work() -> None:
        start.wait()
        for _ in range(times):
            estimator.observe(estimated_chars=chars, input_tokens=tokens)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not any(worker.is_alive() for worker in workers)


@then("the estimator ratio is {ratio:f}")
def step_ratio(context: Context, ratio: float) -> None:
    actual = context.budget_estimator.chars_per_token
    assert abs(actual - ratio) < 0.006, actual


@then("the estimator puts {chars:d} characters at {tokens:d} tokens")
def step_tokens(context: Context, chars: int, tokens: int) -> None:
    assert context.budget_estimator.tokens(chars) == tokens, context.budget_estimator.tokens(chars)


@then("the estimator has {count:d} observations")
def step_observations(context: Context, count: int) -> None:
    assert context.budget_estimator.observations == count, context.budget_estimator.observations


@then('building an estimator with smoothing {weight:f} fails with "{text}"')
def step_bad_smoothing(context: Context, weight: float, text: str) -> None:
    try:
        TokenEstimator(smoothing=weight)
    except ValueError as exc:
        assert text in str(exc), str(exc)
    else:
        raise AssertionError("the estimator accepted a bad smoothing weight")


@then(
    'the estimator for "{endpoint}" and "{model}" is shared with "{other_endpoint}" and '
    '"{other_model}"'
)
def step_shared(
    context: Context, endpoint: str, model: str, other_endpoint: str, other_model: str
) -> None:
    assert estimator_for(endpoint, model) is estimator_for(other_endpoint, other_model)


@then(
    'the estimator for "{endpoint}" and "{model}" is not the one for "{other_endpoint}" and '
    '"{other_model}"'
)
def step_not_shared(
    context: Context, endpoint: str, model: str, other_endpoint: str, other_model: str
) -> None:
    assert estimator_for(endpoint, model) is not estimator_for(other_endpoint, other_model)


# --- measuring ---------------------------------------------------------------------------


@given('the estimator test message "{kind}"')
def step_message(context: Context, kind: str) -> None:
    context.budget_estimator_message = _MESSAGES[kind]
    assert isinstance(context.budget_estimator_message, BaseMessage)


@then("the estimator measures it at {chars:d} characters")
def step_measures(context: Context, chars: int) -> None:
    measured = message_chars(context.budget_estimator_message)
    assert measured == chars, measured


@given('the estimator test tool schemas for "{first}" and "{second}"')
def step_schemas(context: Context, first: str, second: str) -> None:
    context.budget_estimator_tools = [convert_to_openai_tool(_TOOLS[n]) for n in (first, second)]
    assert len(context.budget_estimator_tools) == 2


@then("the estimator measures the schemas at their compact JSON length")
def step_schema_chars(context: Context) -> None:
    tools = context.budget_estimator_tools
    expected = sum(len(json.dumps(t, separators=(",", ":"))) for t in tools)
    assert schema_chars(tools) == expected, (schema_chars(tools), expected)


# --- counting ----------------------------------------------------------------------------


@given("an estimator message counter at {ratio:f} characters a token")
def step_counter(context: Context, ratio: float) -> None:
    context.budget_counter = MessageCounter(TokenEstimator(ratio))
    context.budget_estimates = []
    assert context.budget_counter.computations == 0


@given("an estimator message counter at {ratio:f} characters a token holding {size:d} counts")
def step_small_counter(context: Context, ratio: float, size: int) -> None:
    context.budget_counter = MessageCounter(TokenEstimator(ratio), max_entries=size)
    assert context.budget_counter.computations == 0


@given("an estimator history of {count:d} messages of {size:d} characters")
def step_history(context: Context, count: int, size: int) -> None:
    context.budget_history = _history(count, size)
    assert len(context.budget_history) == count


@when("{count:d} messages of {size:d} characters are added to the estimator history")
def step_add(context: Context, count: int, size: int) -> None:
    before = len(context.budget_history)
    context.budget_history.extend(_history(count, size))
    assert len(context.budget_history) == before + count


@when("the estimator estimates the history")
def step_estimate(context: Context) -> None:
    estimate = context.budget_counter.estimate(context.budget_history)
    context.budget_estimates.append(estimate)
    assert estimate.tokens > 0


@when("estimator history message {index:d} is replaced in place by one of {size:d} characters")
def step_replace(context: Context, index: int, size: int) -> None:
    context.budget_history[index] = HumanMessage("w" * size)
    assert len(context.budget_history[index].text) == size


@when("the estimator estimates the history as a tuple")
def step_estimate_tuple(context: Context) -> None:
    estimate = context.budget_counter.estimate(tuple(context.budget_history))
    context.budget_estimates.append(estimate)
    assert estimate.tokens > 0


@when("the estimator estimates the history with the schemas and {extra:d} extra characters")
def step_estimate_extra(context: Context, extra: int) -> None:
    tools = context.budget_estimator_tools
    estimate = context.budget_counter.estimate(context.budget_history, tools, extra)
    context.budget_estimates.append(estimate)
    assert estimate.chars > extra


@when("the estimator estimates a view of the history with message {index:d} replaced")
def step_estimate_view(context: Context, index: int) -> None:
    view = list(context.budget_history)
    view[index] = ToolMessage("short", tool_call_id="c1")
    estimate = context.budget_counter.estimate(view)
    context.budget_estimates.append(estimate)
    assert estimate.chars != context.budget_estimates[0].chars


@when("the estimator count callable counts the history and each message alone")
def step_count_fn(context: Context) -> None:
    count = context.budget_counter.count_fn(tools=context.budget_estimator_tools)
    context.budget_count_total = count(context.budget_history)
    singles = [count([m]) for m in context.budget_history]
    assert all(s > 0 for s in singles)


@then("the estimator measured {count:d} messages")
def step_measured(context: Context, count: int) -> None:
    assert context.budget_counter.computations == count, context.budget_counter.computations


@then("the estimate is the history's characters plus the schemas plus {extra:d}")
def step_estimate_sum(context: Context, extra: int) -> None:
    messages = sum(message_chars(m) for m in context.budget_history)
    expected = messages + schema_chars(context.budget_estimator_tools) + extra
    assert context.budget_estimates[-1].chars == expected, (context.budget_estimates[-1], expected)


@then("the estimate's tokens are its characters at {ratio:f} a token, rounded up")
def step_estimate_tokens(context: Context, ratio: float) -> None:
    estimate = context.budget_estimates[-1]
    assert estimate.tokens == math.ceil(estimate.chars / ratio), estimate


@then("the estimate is {count:d} messages' worth of estimator characters")
def step_estimate_exact(context: Context, count: int) -> None:
    assert len(context.budget_history) == count
    expected = sum(message_chars(m) for m in context.budget_history)
    assert context.budget_estimates[-1].chars == expected


@then("the estimator count callable agrees with the estimate")
def step_count_agrees(context: Context) -> None:
    estimate = context.budget_counter.estimate(
        context.budget_history, context.budget_estimator_tools
    )
    assert context.budget_count_total == estimate.tokens, (context.budget_count_total, estimate)


@when("the estimator measures {count:d} short-lived messages of random lengths")
def step_short_lived(context: Context, count: int) -> None:
    rng = random.Random(4)
    context.budget_mismatches = []
    for _ in range(count):
        # Each message dies right after being counted, so CPython reuses its id() soon.
        message = HumanMessage("y" * rng.randint(0, 300))
        if context.budget_counter.chars(message) != message_chars(message):
            context.budget_mismatches.append(message)
    assert context.budget_counter.computations == count


@then("every estimator measurement matched the message's own length")
def step_no_mismatch(context: Context) -> None:
    assert context.budget_mismatches == [], len(context.budget_mismatches)


@when("the server counts the estimated request at half the estimator's tokens")
def step_server_counts(context: Context) -> None:
    first = context.budget_estimates[-1]
    ratio = context.budget_counter.estimator.observe(
        estimated_chars=first.chars, input_tokens=first.tokens // 2
    )
    assert ratio > 3.3


@then("the second estimate has fewer estimator tokens than the first")
def step_fewer(context: Context) -> None:
    first, second = context.budget_estimates[-2:]
    assert first.chars == second.chars
    assert second.tokens < first.tokens, (first, second)


# --- templates that drop the tool list on answer turns ------------------------------------


@given(
    "a simulated server counting {ratio:f} characters a token that {drops:w} the tool list "
    "after tool results"
)
def step_template_server(context: Context, ratio: float, drops: str) -> None:
    context.budget_sim = {"ratio": ratio, "drops": drops == "drops"}
    context.budget_counter = MessageCounter(TokenEstimator())


@when(
    "a run of {rounds:d} tool rounds with {schemas:d} characters of tool schemas is estimated "
    "and counted by it"
)
def step_template_run(context: Context, rounds: int, schemas: int) -> None:
    counter: MessageCounter = context.budget_counter
    sim = context.budget_sim
    tools = [{"type": "function", "function": {"name": "t", "description": "d" * (schemas - 64)}}]
    tool_chars = schema_chars(tools)
    history: list[BaseMessage] = [HumanMessage(content="Which port does the service use? " * 4)]
    context.budget_pairs = []
    for step in range(rounds + 1):
        estimate = counter.estimate(history, tools)
        answer_turn = isinstance(history[-1], ToolMessage)
        sent = counter.total_chars(history) + (0 if sim["drops"] and answer_turn else tool_chars)
        reported = max(1, round(sent / sim["ratio"]))
        context.budget_pairs.append((estimate.tokens, reported))
        counted = 0 if counter.drops_tools(history) else tool_chars
        counter.estimator.observe_request(
            message_chars=estimate.chars - counted,
            tool_chars=tool_chars,
            answer_turn=answer_turn,
            input_tokens=reported,
        )
        call = {"name": "read_file", "args": {"path": f"part{step}.txt"}, "id": f"c{step}"}
        history += [
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="line of the file\n" * (40 + 15 * step), tool_call_id=f"c{step}"),
        ]


@given("the estimator knows from the server's template that it drops the tool list")
def step_template_known(context: Context) -> None:
    context.budget_counter.estimator.drops_tools_on_answer_turns = True


@then("every estimate from request {first:d} on is within 10% of the server's count")
def step_template_close(context: Context, first: int) -> None:
    pairs = context.budget_pairs[first - 1 :]
    worst = max(abs(est - got) / got for est, got in pairs)
    assert worst <= 0.10, f"worst {worst:.1%}: {context.budget_pairs}"


@then("the estimator says the endpoint {says:w} the tool list on answer turns")
def step_template_flag(context: Context, says: str) -> None:
    drops = context.budget_counter.estimator.drops_tools_on_answer_turns
    assert drops == (says == "drops"), drops
