"""Pruning limits measured on the server, not a fixed timeout (moved from
features/pruning_speed.feature, issue 26).

A 1.5B model on two CPU cores reads a 1,000-token chunk in 40-60 s; a hosted API in two.
So the pruning pass gives each extraction request a limit from the server's measured speed
in prompt tokens per second: its own answers, and the main model's requests when the
pruning model is the main model's server. Until a speed is known a request may take ten
times pruning_timeout; a request already waiting is judged again as soon as a speed is
measured. These tests meet that rule with the pass's other promises: prefetched files
(pruned before any request was sent), a hung server, and a separate pruning server.

The models are ``ScriptedChatModel`` replies with a ``delay`` or a ``hang``, and every test
runs on virtual time (``looptime``, ADR 0027): the pass reads the event loop's clock for its
deadline and the speeds it measures, and so does the run when it measures the main model's
speed (``leanloop.loop.driver``), so a 30 s hang loses to a 0.3 s limit in no real time and
the seconds asserted are the loop's.
"""

# No ``from __future__ import annotations``: pydantic resolves the fake models' field

import asyncio
import dataclasses  # annotations when the classes are made.
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from leanloop.agent import LLMAgent
from leanloop.loop.tool_round import make_pruner
from leanloop.pruning import PruneOutcome, Pruner, PruneRequest, PruneSettings
from leanloop.pruning.prompt import split_raw_lines
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

_NUMBERED = re.compile(r"^\s*\d+\| ")
_WORD = "deadlock"
# A focus no line of the log holds: the pass reads every part, in order (ADR 0006
# amendment 5), so these tests meet the server's queue with every chunk.
READ_IN_ORDER = "what the reader needs"

# Virtual time for every test here; ``end``: a hang no limit ends fails the test at an
# hour of loop time instead of hanging the suite (with the timer of ``_end_of_time``).
END_OF_TIME = 3600.0
pytestmark = pytest.mark.looptime(end=END_OF_TIME)


@pytest.fixture(autouse=True)
async def _end_of_time() -> AsyncIterator[None]:
    """A timer at the end of virtual time. Without any timer a hung loop has nothing to
    jump to, and looptime would sleep in real time until ``end`` instead of failing."""
    handle = asyncio.get_running_loop().call_later(END_OF_TIME, lambda: None)
    yield
    handle.cancel()


Reply = Callable[[list[BaseMessage]], dict[str, Any]]


def _kept(messages: list[BaseMessage]) -> str:
    """A pruning answer keeping the numbered lines that name the word."""
    shown = [ln for ln in str(messages[-1].content).split("\n") if _NUMBERED.match(ln)]
    kept = "".join(f"{ln}\n" for ln in shown if _WORD in ln)
    return (
        "[PRUNE_INFO_START]\nkept the matching lines\n[PRUNE_INFO_END]\n"
        f"[PRUNE_OUTPUT_START]\n{kept}[PRUNE_OUTPUT_END]"
    )


def _now() -> float:
    return asyncio.get_running_loop().time()


def _every_request(reply: Reply) -> ScriptedChatModel:
    """A model answering every request with ``reply(messages)``."""
    return ScriptedChatModel(replies=[reply], repeat_last=True)


# --- a pass of a pruner on its own --------------------------------------------------------


def _sized(delay: Callable[[list[BaseMessage]], float]) -> ScriptedChatModel:
    """Keeps the lines naming the word after ``delay(messages)`` seconds."""
    return _every_request(lambda messages: {"delay": delay(messages), "content": _kept(messages)})


def _read_file_log(kb: int, count: int) -> str:
    """A log of ``kb`` KB as read_file shows it (from file line 201), ``count`` lines
    naming the word."""
    lines: list[str] = []
    i = 0
    while sum(len(ln) + 1 for ln in lines) < kb * 1024:
        lines.append(
            f"2026-11-30 02:{i // 60 % 60:02d}:{i % 60:02d},{i * 7 % 1000:03d} INFO  "
            f"[worker-{i % 8}] db.pool: processed job {10000 + i} rows={i * 37 % 5000} ok"
        )
        i += 1
    step = len(lines) // (count + 1)
    for k in range(1, count + 1):
        lines[k * step] = (
            f"2026-11-30 03:00:0{k},000 ERROR [worker-{k}] db.pool: {_WORD} #{k} detected"
        )
    numbered = [f"{n:>6}| {line}" for n, line in enumerate(lines, start=201)]
    return "\n".join(numbered) + "\n[lines 201-... of the file]"


async def _prune_made(
    raw: str, model: BaseChatModel, *, window: int, pruning_timeout: float, concurrency: int = 4
) -> PruneOutcome:
    """Prune ``raw`` as read_file output with the pruner make_pruner builds."""
    spec = AgentSpec(
        name="sized",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel"),
        allow_tool_output_pruning=True,
        pruning_model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel"),
        pruning_timeout=pruning_timeout,
        pruning_deadline=300.0,
        pruning_concurrency=concurrency,
        pruning_min_chars=1_000,
    )
    made = make_pruner(spec, model, window_tokens=window, chars_per_token=3.3)
    assert made is not None
    # These passes read in order to time every chunk: no reading allowance, no shapes
    # request (both bound a pass that finds nothing; test_shapes and test_reading).
    pruner = Pruner(model, dataclasses.replace(made.settings, read_tokens=10**9, shapes=0))
    outcome = await pruner.prune(
        tool_name="read_file", raw=raw, request=PruneRequest(focus=READ_IN_ORDER), task_context=""
    )
    assert isinstance(outcome, PruneOutcome)
    return outcome


def _pruned_without_a_fallback(outcome: PruneOutcome, raw: str) -> None:
    assert outcome.pruned, outcome
    assert (outcome.fallback, outcome.skipped) == (None, None), outcome
    assert outcome.text.startswith("[PRUNE_INFO_START]"), outcome.text[:200]
    assert len(outcome.text) < len(raw), len(outcome.text)


async def test_while_the_speed_is_unknown_a_slow_first_answer_is_waited_for() -> None:
    raw = _read_file_log(8, 2)
    model = _sized(lambda messages: 1.0)

    outcome = await _prune_made(raw, model, window=16_384, pruning_timeout=0.3, concurrency=1)

    _pruned_without_a_fallback(outcome, raw)
    wanted = [ln for ln in raw.split("\n") if _WORD in ln]
    assert len(wanted) == 2, wanted
    for line in wanted:
        assert line in outcome.text.split("\n"), (line, outcome.text)
    assert outcome.unread == (), outcome.unread
    assert "not read (" not in outcome.text


async def test_a_request_waiting_on_a_hung_server_is_judged_again_once_the_speed_is_known() -> None:
    raw = _read_file_log(40, 3)

    def hang_on_the_second(messages: list[BaseMessage]) -> float:
        shown = [ln for ln in str(messages[-1].content).split("\n") if _NUMBERED.match(ln)]
        return 30.0 if any(f"{_WORD} #2" in line for line in shown) else 0.05

    model = _sized(hang_on_the_second)

    outcome = await _prune_made(raw, model, window=4_096, pruning_timeout=0.3)

    _pruned_without_a_fallback(outcome, raw)
    assert len(outcome.unread) == 1, outcome.unread
    number = next(i for i, ln in enumerate(split_raw_lines(raw), start=1) if f"{_WORD} #2" in ln)
    assert outcome.unread[0].first_line <= number <= outcome.unread[0].last_line
    assert outcome.unread[0].reason == "timeout", outcome.unread
    assert outcome.seconds < 2.5, outcome.seconds


# --- a pass inside a run, paced ----------------------------------------------------------


class Stamped:
    """Replies that note the event loop's time each request arrived."""

    def __init__(self) -> None:
        self.arrived: list[float] = []

    def __call__(self, reply: Any) -> Reply:
        def stamped(messages: list[BaseMessage]) -> dict[str, Any]:
            self.arrived.append(_now())
            return reply(messages) if callable(reply) else dict(reply)

        return stamped


def _pruning(stamps: Stamped, *, delay: float = 0.0, hang: bool = False) -> ScriptedChatModel:
    """A pruning model that keeps the lines naming the word after ``delay`` s, or hangs."""
    if hang:
        return _every_request(stamps({"hang": True}))
    return _every_request(stamps(lambda m: {"delay": delay, "content": _kept(m)}))


def _pruning_seconds(pruning: Stamped, main: Stamped) -> float:
    """How long the one pruning request held the run: until the main model's next request."""
    assert len(pruning.arrived) == 1, f"expected one pruning request, got {len(pruning.arrived)}"
    after = [t for t in main.arrived if t >= pruning.arrived[0]]
    assert after, "the main model got no request after the pruning request"
    return after[0] - pruning.arrived[0]


def _paced_workspace(tmp_path: Path) -> Path:
    """A workspace whose app.log holds 30 KB with 2 lines mentioning the word."""
    lines = [
        f"2026-11-30 02:{i // 60 % 60:02d}:{i % 60:02d} INFO  [worker-{i % 8}] db.pool: "
        f"processed job {10000 + i} rows={i * 37 % 5000} ok"
        for i in range(30 * 1024 // 80)
    ]
    lines[50] = f"2026-11-30 03:00:01 ERROR [worker-1] db.pool: {_WORD} #1 detected"
    lines[120] = f"2026-11-30 03:00:02 ERROR [worker-2] db.pool: {_WORD} #2 detected"
    (tmp_path / "app.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def _main(
    delay: float, replies: list[dict[str, Any]], stamps: Stamped | None = None
) -> ScriptedChatModel:
    """The main model: each reply after ``delay`` seconds, reporting 2,000 prompt tokens."""
    usage = {"input_tokens": 2000, "output_tokens": 10}
    paced = [{**reply, "delay": delay, "usage": usage} for reply in replies]
    return ScriptedChatModel(replies=[stamps(r) for r in paced] if stamps else paced)


def _said(text: str) -> dict[str, Any]:
    return {"content": text}


def _read(args: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": "read_file", "args": args}]}


def _paced_agent(
    workspace: Path,
    main: ScriptedChatModel,
    pruning: ScriptedChatModel,
    *,
    own_server: bool = False,
    prefetch: bool = False,
) -> LLMAgent:
    pruning_spec = (
        ModelSpec(
            provider="openai-compatible",
            model="pruner",
            base_url="http://127.0.0.1:9/v1",
            context_window=200_000,
        )
        if own_server
        else None
    )
    spec = AgentSpec(
        name="paced",
        model=ModelSpec(
            class_path="leanloop.testing:ScriptedChatModel", model="paced", context_window=200_000
        ),
        tools=("read_file",),
        workspace=workspace,
        allow_tool_output_pruning=True,
        pruning_model=pruning_spec,
        pruning_timeout=0.3,
        prefetch_mentioned_files=prefetch,
    )
    return LLMAgent.from_spec(spec, model=main, pruning_model=pruning)


async def _ask(agent: LLMAgent, question: str) -> tuple[AIMessage, dict[str, Any]]:
    reply = await agent.ainvoke(question)
    return reply, reply.response_metadata["leanloop"]


def _fallbacks(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["tool"], f["reason"]) for f in report["pruning_fallbacks"]]


def _holds_the_kept_lines(main: ScriptedChatModel, index: int) -> None:
    requests = main.requests
    assert len(requests) > index, f"the main model got {len(requests)} request(s)"
    results = [str(m.content) for m in requests[index].messages if isinstance(m, ToolMessage)]
    assert results, "the request holds no tool result"
    text = results[-1]
    assert text.startswith("[PRUNE_INFO_START]"), text[:200]
    for k in (1, 2):
        assert f"{_WORD} #{k} detected" in text, text[:600]


def _pruned_read(report: dict[str, Any], prefetched: str | None) -> None:
    assert report["pruning_fallbacks"] == [], report["pruning_fallbacks"]
    calls = [c for c in report["tool_calls"] if c["name"] == "read_file"]
    assert calls, report["tool_calls"]
    assert calls[0]["pruned"], calls[0]
    if prefetched is not None:
        assert report["prefetched"] == [prefetched], report["prefetched"]
        assert calls[0]["step"] == 0, calls[0]


async def test_the_main_model_measures_a_shared_server_so_a_hung_pruning_request_ends_early(
    tmp_path: Path,
) -> None:
    asked, sent = Stamped(), Stamped()
    answers = [_read({"path": "app.log", "limit": 200}), _said("The log shows two deadlocks.")]
    main = _main(0.1, answers, asked)
    agent = _paced_agent(_paced_workspace(tmp_path), main, _pruning(sent, hang=True))

    reply, report = await _ask(agent, "Why did the job stop?")

    assert reply.text == "The log shows two deadlocks."
    assert report["stop_reason"] == "answer", report["stop_reason"]
    assert _fallbacks(report) == [("read_file", "timeout")]
    took = _pruning_seconds(sent, asked)
    assert took < 2.0, f"the hung pruning request was waited on for {took:.2f} s"


async def test_a_pruning_model_on_another_server_learns_nothing_from_the_main_model(
    tmp_path: Path,
) -> None:
    asked, sent = Stamped(), Stamped()
    main = _main(0.1, [_read({"path": "app.log"}), _said("The log shows two deadlocks.")], asked)
    pruning = _pruning(sent, hang=True)
    agent = _paced_agent(_paced_workspace(tmp_path), main, pruning, own_server=True)

    _, report = await _ask(agent, "Why did the job stop?")

    assert _fallbacks(report) == [("read_file", "timeout")]
    took = _pruning_seconds(sent, asked)
    assert took >= 2.5, f"the pruning request was given up after only {took:.2f} s"


async def test_a_prefetched_file_is_pruned_before_any_request_at_an_unmeasured_speed(
    tmp_path: Path,
) -> None:
    main = _main(0.1, [_said("The log shows two deadlocks.")])
    pruning = _pruning(Stamped(), delay=0.8)
    agent = _paced_agent(_paced_workspace(tmp_path), main, pruning, prefetch=True)

    reply, report = await _ask(agent, "Why did the job stop? See app.log.")

    _pruned_read(report, "app.log")
    _holds_the_kept_lines(main, 0)
    assert reply.text == "The log shows two deadlocks."
    assert report["stop_reason"] == "answer", report["stop_reason"]


async def test_a_slow_pruning_answer_within_three_times_the_measured_prediction_counts(
    tmp_path: Path,
) -> None:
    main = _main(1.0, [_read({"path": "app.log"}), _said("The log shows two deadlocks.")])
    pruning = _pruning(Stamped(), delay=0.6)
    agent = _paced_agent(_paced_workspace(tmp_path), main, pruning)

    _, report = await _ask(agent, "Why did the job stop?")

    _pruned_read(report, None)
    _holds_the_kept_lines(main, 1)


# --- a one-slot server ------------------------------------------------------------------


def _read_whole(outcome: PruneOutcome, chunks: int) -> None:
    """``outcome`` pruned from ``chunks`` chunks, none unread, both lines kept."""
    assert outcome.pruned and outcome.fallback is None, outcome
    assert outcome.chunks == chunks, f"{outcome.chunks} chunks, not {chunks}"
    assert outcome.unread == (), outcome.unread
    for k in (1, 2):
        assert f"{_WORD} #{k} detected" in outcome.text, outcome.text[:400]


def _one_slot(seconds: float) -> Reply:
    """Replies of a server with one slot, first come first served: each request takes
    ``seconds`` once the ones before it are done, as llama-server with one slot."""
    free_at = 0.0

    def reply(messages: list[BaseMessage]) -> dict[str, Any]:
        nonlocal free_at
        free_at = max(free_at, _now()) + seconds
        return {"delay": free_at - _now(), "content": _kept(messages)}

    return reply


async def test_two_passes_at_once_on_a_one_slot_server_each_keep_their_own_deadline() -> None:
    raw = _read_file_log(2, 2)
    model = _every_request(_one_slot(0.2))
    settings = PruneSettings(
        window_tokens=4096, min_chars=500, max_chunk_tokens=300, deadline=1.0, shapes=0
    )
    pruner = Pruner(model, settings)
    request = PruneRequest(focus=READ_IN_ORDER)

    outcomes = await asyncio.gather(
        *(
            pruner.prune(tool_name="read_file", raw=raw, request=request, task_context="")
            for _ in range(2)
        )
    )

    for outcome in outcomes:
        _read_whole(outcome, 4)


def _latest_first(seconds: float, together: int) -> Reply:
    """Replies of a server with one slot that reads the latest waiting request first:
    requests sent together reach a server in any order, and this one takes the
    ``together`` sent at once in the reverse of their sending, ``seconds`` each."""
    arrived = 0

    def reply(messages: list[BaseMessage]) -> dict[str, Any]:
        nonlocal arrived
        arrived += 1
        return {"delay": (together - arrived + 1) * seconds, "content": _kept(messages)}

    return reply


async def test_a_chunk_sent_first_but_read_last_is_not_cut_at_a_limit_counted_alone() -> None:
    raw = _read_file_log(2, 2)
    model = _every_request(_latest_first(0.3, together=4))
    settings = PruneSettings(
        window_tokens=4096,
        min_chars=500,
        max_chunk_tokens=300,
        concurrency=4,
        timeout=0.5,
        shapes=0,
    )

    outcome = await Pruner(model, settings).prune(
        tool_name="read_file", raw=raw, request=PruneRequest(focus=READ_IN_ORDER), task_context=""
    )

    _read_whole(outcome, 4)
    # The four were sent at once, so the first one sent was answered last, after 1.2 s.
    assert model.peak_in_flight == 4, model.peak_in_flight
