"""Steps for features/pruning/pruning_fits.feature: chunks sized from real counts, split,
partly read."""

# No ``from __future__ import annotations`` here: pydantic must resolve the fake model's
# field annotations at class creation, and Behave runs step files outside sys.modules.

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import openai
from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import PrivateAttr
from support.aio import run, run_virtual
from support.logs import capture_logs

from leanloop.budget.server_tokens import ServerTokenCounter
from leanloop.budget.shared import PROCESS_STATE
from leanloop.loop.tool_round import make_pruner
from leanloop.pruning import PruneOutcome, Pruner, PruneRequest, PruneSettings
from leanloop.pruning.prompt import estimate_chars_per_token, sample_text, split_raw_lines
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel, ScriptError
from leanloop.testing.server import FakeModelServer, chars_per_token

_SHOWN = re.compile(r"^\s*(\d+)\| (.*)$")
_PART = re.compile(r"part (\d+) of (\d+)")
# Unless a scenario names a focus, the pass looks for words no line of the log holds, so
# it reads every part, in order (ADR 0006 amendment 5): the chunk mechanics meet every chunk.
_FOCUS = "what the reader needs"
_REQUEST = httpx.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")


# --- the fake pruning model --------------------------------------------------------------


def _shown(messages: list[BaseMessage]) -> list[str]:
    """The numbered output lines an extraction request showed."""
    return [ln for ln in str(messages[-1].content).split("\n") if _SHOWN.match(ln)]


def _part(messages: list[BaseMessage]) -> tuple[int, int]:
    found = _PART.search(str(messages[-1].content))
    return (int(found[1]), int(found[2])) if found else (1, 1)


def _keep(messages: list[BaseMessage], word: str) -> str:
    kept = "".join(f"{line}\n" for line in _shown(messages) if word in line)
    return (
        "[PRUNE_INFO_START]\nkept the matching lines\n[PRUNE_INFO_END]\n"
        f"[PRUNE_OUTPUT_START]\n{kept}[PRUNE_OUTPUT_END]"
    )


def _llama_refusal(prompt_tokens: int) -> openai.BadRequestError:
    """llama.cpp's HTTP 400 for a request larger than its window, as the openai client raises it."""
    error = {
        "code": 400,
        "message": (
            f"request ({prompt_tokens} tokens) exceeds the available context size "
            "(4096 tokens), try increasing it"
        ),
        "type": "exceed_context_size_error",
        "n_prompt_tokens": prompt_tokens,
        "n_ctx": 4096,
    }
    response = httpx.Response(400, json={"error": error}, request=_REQUEST)
    return openai.BadRequestError(
        f"Error code: 400 - {{'error': {error}}}", response=response, body=error
    )


class SizedPruningModel(ScriptedChatModel):
    """The package's scripted model, answering by ``behave(messages)``: (seconds to wait,
    answer or error). The wait is the scripted reply's ``delay`` (on the loop's clock);
    an error is raised as it is, after the wait."""

    behave: Any = None
    _answered: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _refused: int = PrivateAttr(default=0)

    @classmethod
    def answering(cls, behave: Callable[[list[BaseMessage]], tuple[float, Any]]) -> Any:
        """A model whose every request is answered by ``behave``."""
        model = cls(behave=behave, repeat_last=True)
        model.replies = [model.reply]
        return model

    @property
    def _calls(self) -> list[list[BaseMessage]]:
        return [request.messages for request in self.requests]

    def reply(self, messages: list[BaseMessage]) -> dict[str, Any]:
        delay, answer = self.behave(list(messages))
        return {"delay": delay, "answer": answer}

    def _answer(self, reply: Any, messages: list[BaseMessage]) -> ChatResult:
        answer = reply["answer"]
        if isinstance(answer, BaseException):
            if isinstance(answer, openai.BadRequestError):
                self._refused += 1
            raise answer
        self._answered.append(list(messages))
        return super()._answer(answer, messages)


def _model(context: Context, behave: Callable[[list[BaseMessage]], tuple[float, Any]]) -> None:
    context.sized_model = SizedPruningModel.answering(behave)


# --- outputs -----------------------------------------------------------------------------


def _log_lines(size: int, word: str, count: int) -> list[str]:
    lines: list[str] = []
    i = 0
    while sum(len(ln) + 1 for ln in lines) < size:
        lines.append(
            f"2026-11-30 02:{i // 60 % 60:02d}:{i % 60:02d},{i * 7 % 1000:03d} INFO  "
            f"[worker-{i % 8}] db.pool: processed job {10000 + i} rows={i * 37 % 5000} ok"
        )
        i += 1
    step = len(lines) // (count + 1)
    for k in range(1, count + 1):
        lines[k * step] = (
            f"2026-11-30 03:00:0{k},000 ERROR [worker-{k}] db.pool: {word} #{k} detected"
        )
    return lines


@given(
    'a sized pruning log of {kb:d} KB in read_file form with {count:d} lines mentioning "{word}"'
)
def step_read_file_log(context: Context, kb: int, count: int, word: str) -> None:
    # read_file numbers the file's lines; this output starts at file line 201 (offset=201).
    lines = _log_lines(kb * 1024, word, count)
    numbered = [f"{n:>6}| {line}" for n, line in enumerate(lines, start=201)]
    context.sized_raw = "\n".join(numbered) + "\n[lines 201-... of the file]"
    context.sized_word = word
    context.sized_tool = "read_file"


@given('a sized pruning log of {kb:d} KB with {count:d} lines mentioning "{word}"')
def step_plain_log(context: Context, kb: int, count: int, word: str) -> None:
    context.sized_raw = "\n".join(_log_lines(kb * 1024, word, count))
    context.sized_word = word
    context.sized_tool = "search"


@given('a sized pruning model that keeps the lines mentioning "{word}"')
def step_keeper(context: Context, word: str) -> None:
    _model(context, lambda messages: (0.0, _keep(messages, word)))


@given("a sized pruning model that refuses requests showing more than {limit:d} lines for size")
def step_refuser(context: Context, limit: int) -> None:
    context.sized_limit = limit
    word = context.sized_word

    def behave(messages: list[BaseMessage]) -> tuple[float, Any]:
        shown = _shown(messages)
        if len(shown) > limit:
            return 0.0, _llama_refusal(4096 + 10 * len(shown))
        return 0.0, _keep(messages, word)

    _model(context, behave)


@given('a sized pruning model that hangs on the part with the {nth:d}{suffix} "{word}" line')
def step_hanger(context: Context, nth: int, suffix: str, word: str) -> None:
    def behave(messages: list[BaseMessage]) -> tuple[float, Any]:
        if any(f"{word} #{nth}" in line for line in _shown(messages)):
            return 30.0, _keep(messages, word)
        return 0.0, _keep(messages, word)

    _model(context, behave)


@given('a sized pruning model that fails every request with "{message}"')
def step_failer(context: Context, message: str) -> None:
    _model(context, lambda messages: (0.0, ScriptError(message)))


@given(
    "a sized pruning model that answers its first request in {first:g} seconds, its second "
    "in {second:g} seconds and the rest at once"
)
def step_paced(context: Context, first: float, second: float) -> None:
    word = context.sized_word
    calls = iter(range(1, 10_000))  # requests in the order they arrive (the reading order)

    def behave(messages: list[BaseMessage]) -> tuple[float, Any]:
        delay = {1: first, 2: second}.get(next(calls), 0.0)
        return delay, _keep(messages, word)

    _model(context, behave)


@given('the sized focus is "{focus}"')
def step_focus(context: Context, focus: str) -> None:
    context.sized_focus = focus


@given("the sized pruning window is {tokens:d} tokens")
def step_window(context: Context, tokens: int) -> None:
    context.sized_window = tokens


@given("the sized pruning timeout is {seconds:g} seconds")
def step_timeout(context: Context, seconds: float) -> None:
    context.sized_timeout = seconds


@given("the sized pruning deadline is {seconds:g} seconds")
def step_deadline(context: Context, seconds: float) -> None:
    context.sized_deadline = seconds


@given('a sized pruning model that answers every request in {seconds:g} seconds, keeping "{word}"')
def step_slow_keeper(context: Context, seconds: float, word: str) -> None:
    _model(context, lambda messages: (seconds, _keep(messages, word)))


@given("the sized pruning concurrency is {count:d}")
def step_concurrency(context: Context, count: int) -> None:
    context.sized_concurrency = count


# --- a tokenize server -------------------------------------------------------------------


def _tokenize_server(context: Context, ratio: float | None) -> FakeModelServer:
    """llama.cpp's ``POST /tokenize`` at ``ratio`` characters a token (``None``: 404)."""
    # No /apply-template either (404): the pass must size chunks from /tokenize alone.
    tokenizer = None if ratio is None else chars_per_token(ratio)
    server = FakeModelServer(tokenizer=tokenizer, template=None).start()
    context.cleanups.append(server.stop)
    return server


def _seen(server: FakeModelServer) -> list[dict[str, Any]]:
    """The POST requests the tokenize server received: their paths and JSON bodies."""
    return [{"path": r.path, "body": r.body} for r in server.requests if r.method == "POST"]


@given("a tokenize server that counts {ratio:g} characters a token")
def step_tokenize(context: Context, ratio: float) -> None:
    context.sized_server = _tokenize_server(context, ratio)


@given("a tokenize server without the endpoint")
def step_no_tokenize(context: Context) -> None:
    context.sized_server = _tokenize_server(context, None)


# --- running the pass --------------------------------------------------------------------


def _spec(context: Context) -> AgentSpec:
    server = getattr(context, "sized_server", None)
    if server is not None:
        pruning = ModelSpec(provider="openai-compatible", model="m", base_url=server.base_url)
    else:
        pruning = ModelSpec(class_path="leanloop.testing:ScriptedChatModel")
    return AgentSpec(
        name="sized",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel"),
        allow_tool_output_pruning=True,
        pruning_model=pruning,
        pruning_timeout=getattr(context, "sized_timeout", 60.0),
        pruning_deadline=getattr(context, "sized_deadline", 300.0),
        pruning_concurrency=getattr(context, "sized_concurrency", 4),
        pruning_min_chars=1_000,
    )


def _prune(context: Context, pruner: Pruner, tool: str | None = None) -> PruneOutcome:
    if not hasattr(context, "sized_logs"):
        context.sized_logs = capture_logs(context)
    # On virtual time: the scripted delays and the pass's timeouts take no real time. Not
    # with a real tokenize server: virtual time skips ahead while a socket is awaited, so
    # the request's timeout would fire before the server's answer (ADR 0027).
    runner = run if getattr(context, "sized_server", None) is not None else run_virtual
    # These scenarios size chunks: their passes read every part, in order (no reading
    # allowance, no shapes request; both are pruning_shapes.feature's, ADR 0006 am. 7).
    pruner = pruner.with_settings(read_tokens=10**9, shapes=0)
    outcome = runner(
        pruner.prune(
            tool_name=tool or context.sized_tool,
            raw=context.sized_raw,
            request=PruneRequest(focus=getattr(context, "sized_focus", _FOCUS)),
            task_context="",
        )
    )
    assert isinstance(outcome, PruneOutcome)
    context.sized_outcome = outcome
    context.sized_outcomes = [*getattr(context, "sized_outcomes", []), outcome]
    return outcome


def _made_pruner(context: Context) -> Pruner:
    pruner = make_pruner(
        _spec(context), context.sized_model, window_tokens=context.sized_window, chars_per_token=3.3
    )
    assert pruner is not None
    return pruner


@when("the sized pruner built by make_pruner prunes the output")
def step_prune_made(context: Context) -> None:
    _prune(context, _made_pruner(context))


@when("the sized pruner built by make_pruner prunes the output again")
def step_prune_again(context: Context) -> None:
    _prune(context, _made_pruner(context))


@when("a sized pruner without a too_large predicate prunes the output")
def step_prune_plain(context: Context) -> None:
    settings = PruneSettings(window_tokens=context.sized_window, min_chars=1_000)
    _prune(context, Pruner(context.sized_model, settings))


@when('the sized pruner prunes the "{tool}" output')
def step_prune_tool(context: Context, tool: str) -> None:
    settings = PruneSettings(
        window_tokens=context.sized_window,
        min_chars=1_000,
        timeout=getattr(context, "sized_timeout", 60.0),
    )
    _prune(context, Pruner(context.sized_model, settings), tool)


@when(
    "the output is pruned once against a tokenize server counting {high:g} and once counting "
    "{low:g} characters a token"
)
def step_prune_twice(context: Context, high: float, low: float) -> None:
    context.sized_passes = {}
    for ratio in (high, low):
        context.sized_server = _tokenize_server(context, ratio)
        word = context.sized_word
        context.sized_model = SizedPruningModel.answering(lambda m: (0.0, _keep(m, word)))
        outcome = _prune(context, _made_pruner(context))
        assert outcome.ratio_source == "server", outcome
        context.sized_passes[ratio] = (outcome, _planned(context))


# --- checks ------------------------------------------------------------------------------


def _planned(context: Context) -> int:
    """How many chunks the pass planned, as its requests say ("part 3 of 7")."""
    calls = context.sized_model._calls
    assert calls, "the pruning model received no request"
    return _part(calls[0])[1]


def _info(context: Context) -> str:
    text = context.sized_outcome.text
    assert text.startswith("[PRUNE_INFO_START]\n"), text[:300]
    return text[len("[PRUNE_INFO_START]\n") : text.index("\n[PRUNE_INFO_END]")]


@then("the sized outcome is pruned without a fallback")
def step_pruned(context: Context) -> None:
    outcome = context.sized_outcome
    assert outcome.pruned, outcome
    assert (outcome.fallback, outcome.skipped) == (None, None), outcome
    assert outcome.text.startswith("[PRUNE_INFO_START]"), outcome.text[:200]
    assert len(outcome.text) < len(context.sized_raw), len(outcome.text)


@then('the sized outcome is a fallback starting with "{prefix}"')
def step_fallback(context: Context, prefix: str) -> None:
    outcome = context.sized_outcome
    assert not outcome.pruned and outcome.text == context.sized_raw, outcome
    assert outcome.fallback is not None and outcome.fallback.startswith(prefix), outcome
    assert outcome.unread == (), outcome.unread


@then("the sized pruning model refused at least {count:d} request for size")
def step_refused(context: Context, count: int) -> None:
    assert context.sized_model._refused >= count, context.sized_model._refused


@then("the sized outcome has more chunks than were planned")
def step_more_chunks(context: Context) -> None:
    planned = _planned(context)
    assert context.sized_outcome.chunks > planned, (context.sized_outcome.chunks, planned)
    assert context.sized_outcome.chunks == len(context.sized_model._answered)


@then("every sized request that was answered showed at most {limit:d} lines")
def step_answered_small(context: Context, limit: int) -> None:
    answered = context.sized_model._answered
    assert answered
    assert all(len(_shown(m)) <= limit for m in answered), [len(_shown(m)) for m in answered]


@then('the sized pruned message keeps the {count:d} lines mentioning "{word}"')
def step_keeps(context: Context, count: int, word: str) -> None:
    text = context.sized_outcome.text
    wanted = [ln for ln in context.sized_raw.split("\n") if word in ln]
    assert len(wanted) == count, wanted
    for line in wanted:
        assert line in text.split("\n"), (line, text)


@then('the sized pruned message keeps the 1st and 3rd lines mentioning "{word}"')
def step_keeps_some(context: Context, word: str) -> None:
    lines = context.sized_outcome.text.split("\n")
    wanted = [ln for ln in context.sized_raw.split("\n") if word in ln]
    assert wanted[0] in lines and wanted[2] in lines, context.sized_outcome.text
    assert wanted[1] not in lines, context.sized_outcome.text


@then("the sized outcome has no unread lines")
def step_no_unread(context: Context) -> None:
    assert context.sized_outcome.unread == (), context.sized_outcome.unread
    assert "not read (" not in context.sized_outcome.text


@then('the first {count:d} sized requests showed the lines mentioning "{word}"')
def step_read_first(context: Context, count: int, word: str) -> None:
    first = context.sized_model._calls[:count]
    assert len(first) == count, len(context.sized_model._calls)
    for n, messages in enumerate(first, start=1):
        assert any(word in line for line in _shown(messages)), f"request {n}: {_part(messages)}"


@then("the sized outcome names the parts the time limit left unread, with the call that reads them")
def step_unread_time(context: Context) -> None:
    outcome = context.sized_outcome
    assert outcome.unread, "every part was read"
    assert all("time limit" in r.reason for r in outcome.unread), outcome.unread
    assert "not read (past the pass's time limit" in outcome.text, outcome.text
    assert "read_file(offset=" in outcome.text, outcome.text


@then("the sized pass took less than {seconds:g} seconds")
def step_pass_time(context: Context, seconds: float) -> None:
    assert context.sized_outcome.seconds < seconds, context.sized_outcome.seconds


@then("every planned sized chunk got a request")
def step_all_parts(context: Context) -> None:
    planned = _planned(context)
    parts = sorted(_part(m)[0] for m in context.sized_model._calls)
    assert planned > 1 and parts == list(range(1, planned + 1)), (planned, parts)
    assert context.sized_outcome.chunks == planned, context.sized_outcome.chunks


@then(
    'the sized outcome has {count:d} unread range, because of "{reason}", holding the '
    '{nth:d}{suffix} "{word}" line'
)
def step_unread(
    context: Context, count: int, reason: str, nth: int, suffix: str, word: str
) -> None:
    unread = context.sized_outcome.unread
    assert len(unread) == count, unread
    raw_lines = split_raw_lines(context.sized_raw)
    number = next(i for i, ln in enumerate(raw_lines, start=1) if f"{word} #{nth}" in ln)
    assert unread[0].first_line <= number <= unread[0].last_line, (unread, number)
    assert unread[0].reason == reason, unread


@then(
    "the sized info block asks for the unread lines with read_file offset and limit in file lines"
)
def step_unread_hint(context: Context) -> None:
    gap = context.sized_outcome.unread[0]
    raw_lines = split_raw_lines(context.sized_raw)
    # The raw output starts at file line 201: output line n shows file line n + 200.
    first, last = gap.first_line + 200, gap.last_line + 200
    assert raw_lines[gap.first_line - 1].lstrip().startswith(f"{first}|")
    expected = (
        f"lines {first}-{last} not read ({gap.reason}); "
        f"read_file(offset={first}, limit={last - first + 1}) reads them"
    )
    assert expected in _info(context).split("\n"), _info(context)


@then('the sized info block says "{text}"')
def step_info_says(context: Context, text: str) -> None:
    assert text in _info(context), _info(context)


@then('a sized pruning warning says "{text}"')
def step_warning(context: Context, text: str) -> None:
    warnings = context.sized_logs.messages(30)  # logging.WARNING
    assert any(text in m for m in warnings), warnings


@then("no sized pruning warning was logged")
def step_no_warning(context: Context) -> None:
    warnings = context.sized_logs.messages(30)
    assert not warnings, warnings


@then("the sized pruning model got one request per planned chunk")
def step_one_each(context: Context) -> None:
    planned = _planned(context)
    parts = sorted(_part(m)[0] for m in context.sized_model._calls)
    assert parts == list(range(1, planned + 1)), (planned, parts)


@then('every refused sized chunk is unread because of "{prefix}"')
def step_refused_unread(context: Context, prefix: str) -> None:
    outcome = context.sized_outcome
    refused = [m for m in context.sized_model._calls if len(_shown(m)) > context.sized_limit]
    assert refused and len(outcome.unread) >= 1, outcome
    unread = {n for r in outcome.unread for n in range(r.first_line, r.last_line + 1)}
    for messages in refused:
        numbers = {int(_SHOWN.match(ln)[1]) for ln in _shown(messages)}  # type: ignore[index]
        assert numbers <= unread, (sorted(numbers)[:3], outcome.unread)
    assert all(r.reason.startswith(prefix) for r in outcome.unread), outcome.unread


@then("the sized pruning model got more than {count:d} request")
def step_requests(context: Context, count: int) -> None:
    assert len(context.sized_model._calls) > count, len(context.sized_model._calls)


@then('the sized chunks were sized with {ratio:g} characters a token from the "{source}"')
def step_ratio(context: Context, ratio: float, source: str) -> None:
    outcome = context.sized_outcome
    assert outcome.ratio_source == source, outcome
    assert outcome.chars_per_token is not None
    assert abs(outcome.chars_per_token - ratio) < 0.01, outcome.chars_per_token


@then("the sized chunks were sized with the content-aware estimate")
def step_estimate(context: Context) -> None:
    outcome = context.sized_outcome
    sample = sample_text(split_raw_lines(context.sized_raw), 6_000)
    expected = estimate_chars_per_token(sample, ceiling=3.3)
    assert outcome.ratio_source == "estimate", outcome
    assert outcome.chars_per_token == expected, (outcome.chars_per_token, expected)
    assert expected < 3.3, expected  # a log packs denser than the flat 3.3


@then("the tokenize server was asked to count the start of the numbered output")
def step_asked(context: Context) -> None:
    seen = _seen(context.sized_server)
    assert [s["path"] for s in seen] == ["/tokenize"], seen
    content = seen[0]["body"]["content"]
    assert 5_000 <= len(content) <= 6_000, len(content)
    first_raw = split_raw_lines(context.sized_raw)[0]
    assert content.split("\n")[0].endswith(f"| {first_raw}"), content[:200]


@then("the tokenize server was asked {count:d} time")
def step_asked_count(context: Context, count: int) -> None:
    seen = _seen(context.sized_server)
    assert len(seen) == count, seen


@then("every sized request fits {window:d} tokens at {ratio:g} characters a token")
def step_fits(context: Context, window: int, ratio: float) -> None:
    reply = window // 4
    for messages in context.sized_model._calls:
        tokens = sum(len(str(m.content)) for m in messages) / ratio
        assert tokens + reply <= window, (tokens, reply, window)


@then(
    "the pass at {low:g} characters a token planned more than twice the chunks of the pass at "
    "{high:g}"
)
def step_more_planned(context: Context, low: float, high: float) -> None:
    dense, loose = context.sized_passes[low], context.sized_passes[high]
    assert dense[0].chunks == dense[1] and loose[0].chunks == loose[1], context.sized_passes
    assert dense[1] > 2 * loose[1] >= 2, (dense[1], loose[1])


@when("a hosted base URL is asked for a token count")
def step_hosted(context: Context) -> None:
    def no_client() -> httpx.AsyncClient:
        raise AssertionError("a hosted API must not be asked")

    counter = ServerTokenCounter(client_factory=no_client)
    context.sized_count = run(
        counter.chars_per_token("https://api.openai.com/v1", "some text to count")
    )
    context.sized_count_default = run(
        PROCESS_STATE.server_tokens.count("https://api.example.com/v1", "some text")
    )


@then("the token count is unknown without a request")
def step_unknown(context: Context) -> None:
    assert context.sized_count is None, context.sized_count
    assert context.sized_count_default is None, context.sized_count_default


_SAMPLES: dict[str, Callable[[], str]] = {
    "prose": lambda: (
        (
            "A model that reads a large log to find three lines fills its context with the "
            "other lines. The main model can say what it is looking for, and a pruning model "
            "copies out only the relevant lines before the result reaches the conversation. "
        )
        * 20
    ),
    "a log": lambda: "\n".join(_log_lines(6_000, "deadlock", 3)),
    "compact JSON": lambda: json.dumps(
        [{"id": i, "name": f"item-{i}", "price": round(i * 1.37, 2)} for i in range(200)]
    )[:6_000],
}


@when("the content-aware estimate reads a sample of {kind}")
def step_estimate_kind(context: Context, kind: str) -> None:
    context.sized_estimate = estimate_chars_per_token(_SAMPLES[kind](), ceiling=3.3)


@then("the estimate is between {low:g} and {high:g} characters a token")
def step_estimate_range(context: Context, low: float, high: float) -> None:
    assert low <= context.sized_estimate <= high, context.sized_estimate


@then(
    'the sized pruning model got {count:d} request, showing the {lines:d} lines mentioning "{word}"'
)
def step_one_request(context: Context, count: int, lines: int, word: str) -> None:
    calls = context.sized_model._calls
    assert len(calls) == count, len(calls)
    shown = [line for messages in calls for line in _shown(messages) if word in line]
    assert len(shown) == lines, shown


@then(
    "every line the sized pass did not read is named on its one info line, which says "
    "{kept:d} of the output's {total:d} numbered lines were kept"
)
def step_named_unread(context: Context, kept: int, total: int) -> None:
    outcome = context.sized_outcome
    raw_lines = split_raw_lines(context.sized_raw)
    read = {
        int(m[1])
        for messages in context.sized_model._calls
        for m in map(_SHOWN.match, _shown(messages))
        if m
    }
    unread = {n for r in outcome.unread for n in range(r.first_line, r.last_line + 1)}
    assert read | unread == set(range(1, len(raw_lines) + 1)), (
        "some lines are neither read nor named"
    )
    assert not read & unread, sorted(read & unread)[:5]
    # The common path: nothing was left unread but for want of a focus word, so the info
    # block is the one compact line, its ranges in the file's own numbers (the closing
    # line has none).
    assert all(r.reason == "no focus word in them" for r in outcome.unread), outcome.unread
    spans = []
    for r in outcome.unread:
        numbers = [
            int(m[1])
            for line in raw_lines[r.first_line - 1 : r.last_line]
            if (m := _SHOWN.match(line))
        ]
        spans.append(f"{numbers[0]}-{numbers[-1]}")
    listed = ", ".join(spans[:12]) + (f" and {len(spans) - 12} more" if len(spans) > 12 else "")
    expected = f"{kept}/{total} lines kept; unread {listed}; output_prune=false for all"
    assert _info(context) == expected, (_info(context), expected)


@then('the sized pruned message keeps the 1st line mentioning "{word}"')
def step_keeps_first(context: Context, word: str) -> None:
    wanted = [ln for ln in context.sized_raw.split("\n") if word in ln]
    assert wanted[0] in context.sized_outcome.text.split("\n"), context.sized_outcome.text
