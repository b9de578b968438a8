"""Inputs shared by the benchmarks: conversations, tool outputs, schemas, replies.

Not a benchmark module (nothing here is named ``time_``/``peakmem_``/``track_``). Every
builder is deterministic, and the expensive ones are cached per process so that an ASV
``setup``, which runs again before every timed call, stays cheap. Cached values are shared:
callers copy before they mutate.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import math
import re
import statistics
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from leanloop.budget import (
    ContextPlan,
    MessageCounter,
    TokenEstimator,
    Window,
    fit_messages,
)
from leanloop.budget.run import Prepared, RunBudget
from leanloop.report import RunReport
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

__all__ = [
    "BIG_WINDOW",
    "TEXT_TOOLS",
    "StepCase",
    "drive",
    "event_loop",
    "extraction_reply",
    "history",
    "log_text",
    "marker_answer",
    "measure_step_medians",
    "measure_step_ratio",
    "new_step",
    "quiet_logs",
    "read_file_schema",
    "text_batch",
    "text_megabyte",
    "tool_schemas",
]

T = TypeVar("T")

BIG_WINDOW = 1_048_576
"""A window no benchmark conversation fills, so the budget check measures and never trims."""

SYSTEM_PROMPT = (
    "You are a careful engineering assistant working in a repository. Use the tools to "
    "read files and search the code before you answer; quote paths and line numbers. "
) * 8

TEXT_TOOLS: dict[str, tuple[str, ...]] = {
    "read_file": ("path", "max_lines"),
    "search": ("pattern", "path"),
    "list_files": ("path",),
}
"""Tool names and parameter order the text-mode parser is given."""


def read_file_schema() -> dict[str, Any]:
    """The OpenAI-format schema of a ``read_file``-like tool, as bound to a model."""
    return _schema("read_file")


def _schema(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name}: read part of a workspace file and return its numbered lines.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "file path, workspace-relative"},
                    "max_lines": {"type": "integer", "description": "most lines to return"},
                    "start": {"type": "integer", "description": "first line, 1-based"},
                },
                "required": ["path"],
            },
        },
    }


@functools.cache
def tool_schemas(count: int) -> tuple[dict[str, Any], ...]:
    """``count`` distinct tool schemas (``tool_000``, ``tool_001``, ...)."""
    return tuple(_schema(f"tool_{index:03d}") for index in range(count))


def _result_text(index: int, chars: int) -> str:
    lines: list[str] = []
    size = 0
    number = 0
    while size < chars:
        number += 1
        line = (
            f"{number:4d}  def handler_{index}_{number}(request): return respond(request, {number})"
        )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:chars]


def new_step(index: int, *, result_chars: int = 400) -> list[BaseMessage]:
    """One fresh step: an AI message calling ``read_file`` and the tool's result."""
    call_id = f"call_{index:06d}"
    call = {
        "name": "read_file",
        "args": {"path": f"src/pkg/module_{index}.py", "max_lines": 200},
        "id": call_id,
        "type": "tool_call",
    }
    return [
        AIMessage(content=f"Reading module {index} next.", tool_calls=[call]),
        ToolMessage(
            content=_result_text(index, result_chars), tool_call_id=call_id, name="read_file"
        ),
    ]


@functools.cache
def history(count: int, *, result_chars: int = 400) -> tuple[BaseMessage, ...]:
    """A conversation of ``count`` messages: system, human, then tool steps (cached)."""
    messages: list[BaseMessage] = [
        SystemMessage(SYSTEM_PROMPT),
        HumanMessage("Find where request handlers are registered and explain the order."),
    ]
    index = 0
    while len(messages) < count:
        messages.extend(new_step(index, result_chars=result_chars))
        index += 1
    return tuple(messages[:count])


def quiet_logs() -> None:
    """Silence leanloop's warnings (small windows, 75% of budget): they are expected here."""
    logging.getLogger("leanloop").setLevel(logging.ERROR)


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (no event loop needed, no loop overhead timed).

    ``RunBudget.prepare`` awaits only the event dispatch, which returns at once when no
    run is listening, so its coroutine completes on the first ``send``.
    """
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    coro.close()
    msg = "the coroutine suspended; run it on an event loop instead"
    raise RuntimeError(msg)


@functools.cache
def event_loop() -> asyncio.AbstractEventLoop:
    """One event loop per process for benchmarks that really await (the pruning pass)."""
    return asyncio.new_event_loop()


@functools.cache
def log_text(chars: int) -> str:
    """A server log of about ``chars`` characters with an ERROR line every 400 lines."""
    lines: list[str] = []
    size = 0
    number = 0
    while size < chars:
        number += 1
        if number % 400 == 0:
            line = (
                f"2026-06-23T11:{number // 60 % 60:02d}:{number % 60:02d} ERROR pool-{number % 7}"
            )
            line += f" connection reset after {number % 997} ms (request {number})"
        else:
            line = f"2026-06-23T11:{number // 60 % 60:02d}:{number % 60:02d} INFO worker-"
            line += f"{number % 13} handled batch {number} in {number % 89} ms"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


@functools.cache
def marker_answer(chars: int) -> str:
    """A pruning answer of about ``chars`` characters, wrapped the way models wrap them."""
    body = log_text(max(chars - 200, 40))
    return (
        "Here is what matters.\n```\n[PRUNE_INFO_START]\nkept the request lines\n"
        "[PRUNE_INFO_END]\n[PRUNE_OUTPUT_START]\n" + body + "\n[PRUNE_OUTPUT_END]\n```\n"
    )


_ERROR_LINE = re.compile(r"^ *\d+\| .*\bERROR\b.*$", re.MULTILINE)


def extraction_reply(keep: int = 3) -> Callable[[list[BaseMessage]], str]:
    """A zero-latency pruning model's answer: keep the first ``keep`` ERROR lines shown."""

    def answer(messages: list[BaseMessage]) -> str:
        shown = messages[-1].text
        kept = _ERROR_LINE.findall(shown)[:keep]
        return (
            f"[PRUNE_INFO_START]\nkept {len(kept)} error lines of {len(shown)} chars\n"
            "[PRUNE_INFO_END]\n[PRUNE_OUTPUT_START]\n" + "\n".join(kept) + "\n[PRUNE_OUTPUT_END]"
        )

    return answer


_REPLY_FORMS = (
    'Let me look.\n```tool\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n```',
    '```json\n{"name": "search", "arguments": {"pattern": "createServer", "path": "src"}}\n```',
    '<tool_call>\n{"name": "search", "arguments": {"pattern": "createServer"}}\n</tool_call>',
    "<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
    "<parameter=max_lines>\n40\n</parameter>\n</function>",
    'I will read it: read_file("src/app.py", 20) and then search("main", "src").',
    "```tool\n{'name': 'read_file', 'arguments': {'path': 'a.py',},}\n```",
    'Checking.\n<tool_call>{"name": "list_files", "arguments": {"path": "docs"}}',
    '```tool\n{"name": "read_file", "arguments": {"path": "a.py" "max_lines": 3}}\n```\nok',
    "The handlers are registered in `src/app.py` in the order they are imported; the "
    "router sorts nothing. ```python\nprint(app.routes)\n``` shows them.",
    'Done. Nothing else to read.\n{"name": "read_file", "arguments": {"path": "README.md"}}',
)


@functools.cache
def text_batch(count: int = 50) -> tuple[str, ...]:
    """``count`` replies cycling through the call forms, prose and broken calls."""
    return tuple(_REPLY_FORMS[index % len(_REPLY_FORMS)] for index in range(count))


@functools.cache
def text_megabyte() -> str:
    """A 1 MB reply: prose and code with brackets and braces, then one ```tool call."""
    paragraph = (
        "The handler {name} is registered in routes[{n}] and calls dispatch(request) "
        "with a dict like {{'id': {n}, 'path': '/api/v1/items'}} before returning.\n"
    )
    parts: list[str] = []
    size = 0
    n = 0
    while size < 1_000_000:
        n += 1
        part = paragraph.format(name=f"handle_{n}", n=n)
        parts.append(part)
        size += len(part)
    parts.append('```tool\n{"name": "read_file", "arguments": {"path": "src/routes.py"}}\n```')
    return "".join(parts)


class StepCase:
    """One per-step budget check, set up the way the loop meets it.

    The history of ``count`` messages has been checked once (its messages are counted);
    :meth:`run` appends one fresh reply and tool result and checks again, which is what
    the loop does before each request.

    Args:
        count: Messages in the history before the step.
        path: ``"fit+estimate"`` calls :func:`fit_messages` with a counter's ``count_fn``
            and then ``counter.estimate``; ``"RunBudget.prepare"`` calls the loop's own
            check (which also builds the report figures and dispatches the events).
        over_budget: Use a window whose ceiling is 3/4 of the history, so every check trims.
        index: Makes the step's messages distinct from other samples'.
    """

    def __init__(self, count: int, *, path: str, over_budget: bool = False, index: int = 0) -> None:
        self.messages = list(history(count))
        self.tools = [read_file_schema()]
        window = _half_window(self.messages) if over_budget else BIG_WINDOW
        self.step = new_step(10_000_000 + index)
        if path == "fit+estimate":
            plan = ContextPlan.for_window(window)
            counter = MessageCounter(TokenEstimator())
            self.check: Callable[[], object] = functools.partial(
                _fit_and_estimate, self.messages, plan, counter, self.tools
            )
        elif path == "RunBudget.prepare":
            budget = _run_budget(window)
            self.check = functools.partial(self._prepare, budget)
        else:
            msg = f"unknown path {path!r}"
            raise ValueError(msg)
        self.check()  # the history as the previous step left it: counted once

    def _prepare(self, budget: RunBudget) -> Prepared:
        return drive(budget.prepare(self.messages, tools=self.tools, step=len(self.messages)))

    def run(self) -> None:
        """Append the step's reply and result, then check the budget again."""
        self.messages.extend(self.step)
        self.check()


def _fit_and_estimate(
    messages: list[BaseMessage],
    plan: ContextPlan,
    counter: MessageCounter,
    tools: Sequence[dict[str, Any]],
) -> int:
    fitted = fit_messages(messages, plan=plan, count=counter.count_fn(tools=tools))
    return counter.estimate(fitted.messages, tools).tokens


def _half_window(messages: Sequence[BaseMessage]) -> int:
    """A window whose ceiling is three quarters of the estimate of ``messages``."""
    tokens = MessageCounter(TokenEstimator()).estimate(messages).tokens
    ceiling = tokens * 3 // 4
    # ceiling = 0.85 W - reserve = max(0.65 W, 0.85 W - 2,048), the reserve being
    # 20% of W up to 2,048 tokens.
    window = min(math.ceil(ceiling / 0.65), math.ceil((ceiling + 2_048) / 0.85))
    if ContextPlan.for_window(window).ceiling >= tokens:  # tiny histories: 512 floor
        msg = f"a {len(messages)}-message history cannot be over budget"
        raise ValueError(msg)
    return window


def _run_budget(window: int) -> RunBudget:
    spec = AgentSpec(
        name="bench",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", context_window=window),
    )
    return RunBudget(
        spec=spec,
        window=Window(window, "config"),
        model=_scripted_model(),
        report=RunReport(),
        config={},
    )


@functools.cache
def _scripted_model() -> ScriptedChatModel:
    return ScriptedChatModel()


_WARMUP_SAMPLES = 5


def measure_step_ratio(
    *, path: str, large: int = 1_000, small: int = 10, samples: int = 150
) -> float:
    """Median per-step check at ``large`` messages over the median at ``small`` messages."""
    at_small, at_large = measure_step_medians(path=path, large=large, small=small, samples=samples)
    return at_large / at_small


def measure_step_medians(
    *, path: str, large: int = 1_000, small: int = 10, samples: int = 150
) -> tuple[float, float]:
    """Median seconds of one per-step check at ``small`` and at ``large`` messages.

    Samples of both sizes are interleaved, so a change in machine load affects both alike;
    the garbage collector is off while a step is timed, as in ASV and ``timeit``.
    """
    times: dict[int, list[float]] = {large: [], small: []}
    for index in range(-_WARMUP_SAMPLES, samples):
        for count in (small, large):
            case = StepCase(count, path=path, index=index)
            seconds = _timed(case.run)
            if index >= 0:
                times[count].append(seconds)
    return statistics.median(times[small]), statistics.median(times[large])


def _timed(call: Callable[[], object]) -> float:
    enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter()
        call()
        return time.perf_counter() - started
    finally:
        if enabled:
            gc.enable()
