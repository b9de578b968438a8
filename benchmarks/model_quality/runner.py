"""Run one quality task through leanloop (help on or off) or LangChain's ``create_agent``.

Each run gives a :class:`TaskResult` with the same figures whichever loop ran it, read
from leanloop's run report or from the LangGraph message list.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast
from unittest import mock

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from benchmarks.local_server import local_chat_model
from benchmarks.model_quality.tasks import QualityTask
from leanloop.agent import LLMAgent
from leanloop.cache_usage import prompt_usage
from leanloop.localmodel import MODEL_ALIAS
from leanloop.loop.policies.hooks import CallDecision, PendingCall
from leanloop.loop.policies.repeat_guard import RepeatGuard
from leanloop.spec import load_specs_from_dict
from leanloop.tools import workspace_tools

__all__ = [
    "SYSTEM_PROMPT",
    "TaskResult",
    "Variant",
    "agent_document",
    "calls_run_twice",
    "help_switched_off",
    "later_prompt_split",
    "read_leanloop_report",
    "run_task",
]

Variant = Literal["leanloop", "leanloop-off", "create_agent"]
"""``leanloop``: the defaults; ``leanloop-off``: this issue's help switched off (see
:func:`help_switched_off`); ``create_agent``: LangChain v1's plain agent loop."""

SYSTEM_PROMPT = (
    "You answer questions about the files in the workspace. Use the tools to look at the "
    "files before you answer, then answer in one or two plain sentences."
)
MAX_ROUNDS = 4
REPLY_TOKENS = 256
REQUEST_TIMEOUT_S = 120.0
_REQUEST_KEYS = (
    "step",
    "kind",
    "messages",
    "tools",
    "reported_input_tokens",
    "prompt_evaluated",
    "prompt_cached",
    "output_tokens",
)


@dataclass
class TaskResult:
    """What one run of one task did."""

    task: str
    variant: str
    mode: str
    correct: bool = False
    file_read: bool = False
    """The expected file was read (by the model or the prefetch) and the read succeeded."""
    calls: int = 0
    """Tool calls the model wrote (prefetched reads not counted)."""
    valid_calls: int = 0
    """Of those, calls that ran as written and succeeded."""
    repaired_calls: int = 0
    repeats_caught: int = 0
    """Repeated identical calls answered from memory instead of run."""
    repeats_executed: int = 0
    """Repeated identical calls that ran again."""
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    later_requests: int = 0
    """Requests after the run's first (the first one's prefix was never sent by this run)."""
    later_prompt_evaluated: int | None = None
    """Prompt tokens the server computed on requests 2+ (llama.cpp ``timings.prompt_n``),
    over those whose reply said how its prompt was split; ``None`` when none said."""
    later_prompt_cached: int | None = None
    """Prompt tokens the server's prompt cache served on requests 2+ (same requests)."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Per main-model request: step, kind, messages, tools offered, prompt tokens reported,
    evaluated and cached (from leanloop's run report; empty for ``create_agent``)."""
    stop_reason: str = ""
    answer: str = ""
    error: str = ""
    notes: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict, repr=False)
    """leanloop's run report (empty for ``create_agent``); not written to the results."""

    def as_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (without the run report)."""
        return {key: value for key, value in self.__dict__.items() if key != "report"}


async def run_task(
    task: QualityTask, *, variant: Variant, mode: str, base_url: str, workspace: Path
) -> TaskResult:
    """Run ``task`` once; never raises for a failed run (the result says why)."""
    result = TaskResult(task.key, variant, mode)
    started = time.perf_counter()
    try:
        if variant == "create_agent":
            await _run_create_agent(task, result, base_url=base_url, workspace=workspace)
        else:
            await _run_leanloop(task, result, base_url=base_url, workspace=workspace)
    except Exception as exc:  # one failed run is a row in the report, not a crash
        result.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    result.seconds = round(time.perf_counter() - started, 2)
    result.correct = not result.error and task.correct(result.answer)
    return result


def agent_document(
    variant: Variant, mode: str, base_url: str, workspace: Path | str
) -> dict[str, Any]:
    """The agents file (as data) of one loop: agent ``quality`` on the server at ``base_url``.

    ``workspace`` may be relative (to the agents file's folder, once written to a file).
    """
    agent: dict[str, Any] = {
        "model": "local",
        "system_prompt": SYSTEM_PROMPT,
        "tools": ["read_file", "list_files", "search"],
        "workspace": os.fspath(workspace),
        "max_rounds": MAX_ROUNDS,
        "tool_mode": mode,
    }
    if variant == "leanloop-off":
        agent |= {
            "prefetch_mentioned_files": False,
            "repair_paths": False,
            "prompt_profile": "default",
        }
    return {
        "version": 1,
        "models": {
            "local": {
                "provider": "openai-compatible",
                "model": MODEL_ALIAS,
                "base_url": base_url,
                "api_key": "none",
                "temperature": 0,
                "max_tokens": REPLY_TOKENS,
                "timeout": REQUEST_TIMEOUT_S,
            }
        },
        "agents": {"quality": agent},
    }


async def _never_a_repeat(self: RepeatGuard, call: PendingCall) -> CallDecision:
    """The repeat guard finding no repeat: every call runs, as before the guard existed."""
    return None


@contextlib.contextmanager
def help_switched_off() -> Iterator[None]:
    """Switch off what YAML cannot: the identical-call guard and tool-name repair.

    The other parts of the help (prefetch, path repair, the small prompting profile) are
    switched off in the agent's YAML. Argument coercion and aliases stay on: they are
    part of the tool registry's validation, which has no off switch.
    """
    with (
        mock.patch.object(RepeatGuard, "before_tool_call", _never_a_repeat),
        mock.patch("leanloop.tools.registry.repair_call", lambda *a, **k: None),
    ):
        yield


async def _run_leanloop(
    task: QualityTask, result: TaskResult, *, base_url: str, workspace: Path
) -> None:
    variant: Variant = "leanloop-off" if result.variant == "leanloop-off" else "leanloop"
    document = agent_document(variant, result.mode, base_url, workspace)
    spec = load_specs_from_dict(document)["quality"]
    agent = LLMAgent.from_spec(spec)
    off = help_switched_off() if variant == "leanloop-off" else contextlib.nullcontext()
    with off:
        message = await agent.ainvoke(task.question)
    read_leanloop_report(task, result, message.response_metadata["leanloop"], message.text)


def read_leanloop_report(
    task: QualityTask, result: TaskResult, report: Mapping[str, Any], answer: str
) -> None:
    """Fill ``result``'s figures from leanloop's run ``report`` and the run's ``answer``.

    The serial run reads the report of the message it got; a run through ``leanloop
    batch`` reads the one its results line holds (:mod:`benchmarks.model_quality.via_batch`).
    """
    result.report = dict(report)
    result.answer = answer
    result.stop_reason = report["stop_reason"]
    result.steps = report["steps"]
    result.input_tokens = sum(r["input_tokens"] or 0 for r in report["requests"])
    result.output_tokens = sum(r["output_tokens"] or 0 for r in report["requests"])
    result.requests = [{key: r.get(key) for key in _REQUEST_KEYS} for r in report["requests"]]
    result.later_requests = max(len(report["requests"]) - 1, 0)
    split = later_prompt_split(report["requests"])
    if split is not None:
        result.later_prompt_cached, result.later_prompt_evaluated = split
    result.repeats_executed = len(calls_run_twice(report["tool_calls"]))
    for call in report["tool_calls"]:
        result.repeats_caught += bool(call["repeated"])
        if call["step"] > 0:  # a call the model wrote (step 0 is the prefetch)
            result.calls += 1
            result.repaired_calls += bool(call["repaired"])
            ok_as_written = call["ok"] and not call["repaired"] and not call["repeated"]
            result.valid_calls += ok_as_written
        repaired_to = f'read "{task.path}"'
        if call["ok"] and (
            _reads(call["name"], call["args"], task.path)
            or any(repaired_to in note for note in call["notes"])
        ):
            result.file_read = True
        if call["notes"]:
            result.notes.extend(f"{call['name']}: {note}" for note in call["notes"])


async def _run_create_agent(
    task: QualityTask, result: TaskResult, *, base_url: str, workspace: Path
) -> None:
    from langchain.agents import create_agent  # noqa: PLC0415 - the bench extra only

    model = local_chat_model(base_url, reply_tokens=REPLY_TOKENS, timeout=REQUEST_TIMEOUT_S)
    tools = workspace_tools(workspace)
    for tool in tools:  # as any LangChain user would: a refusal is a message, not a crash
        tool.handle_tool_error = True
    graph = create_agent(model, tools=tools, system_prompt=SYSTEM_PROMPT)
    # Each round is a model node and a tools node; one more model turn for the answer.
    limit = 2 * MAX_ROUNDS + 1
    try:
        state: dict[str, Any] = await cast(Any, graph).ainvoke(
            {"messages": [("user", task.question)]}, config={"recursion_limit": limit}
        )
        messages: Sequence[BaseMessage] = state["messages"]
        result.stop_reason = "answer"
    except Exception as exc:  # GraphRecursionError: out of rounds, no answer
        if type(exc).__name__ != "GraphRecursionError":
            raise
        result.stop_reason = "max_rounds"
        result.error = "no answer within the round limit"
        return
    _read_messages(task, result, messages)


def later_prompt_split(requests: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    """``(cached, evaluated)`` prompt tokens of the requests after the first of one run.

    Skips the run's first request (its prefix comes from whatever the server's slot held
    before, not from this run) and counts the requests whose reply said both figures, as
    :func:`leanloop.report.cached_share` does; ``None`` when none of them said.
    """
    cached = evaluated = 0
    known = False
    for row in requests[1:]:
        hit, computed = row.get("prompt_cached"), row.get("prompt_evaluated")
        if isinstance(hit, int) and isinstance(computed, int) and _is_count(hit):
            cached += hit
            evaluated += computed
            known = True
    return (cached, evaluated) if known else None


def calls_run_twice(tool_calls: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The calls of a run report that ran although an identical call had run before."""
    seen: set[str] = set()
    twice: list[Mapping[str, Any]] = []
    for call in tool_calls:
        if call["repeated"]:  # answered from memory, not run
            continue
        key = json.dumps([call["name"], call["args"]], sort_keys=True, default=str)
        if key in seen:
            twice.append(call)
        seen.add(key)
    return twice


def _read_messages(task: QualityTask, result: TaskResult, messages: Sequence[BaseMessage]) -> None:
    replies = [m for m in messages if isinstance(m, AIMessage)]
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    ran: list[tuple[str, str]] = []
    for reply in replies:
        if reply.usage_metadata is not None:
            result.input_tokens += reply.usage_metadata["input_tokens"]
            result.output_tokens += reply.usage_metadata["output_tokens"]
        for call in reply.tool_calls:
            result.calls += 1
            key = (call["name"], json.dumps(call["args"], sort_keys=True))
            result.repeats_executed += key in ran
            ran.append(key)
            answer = results.get(call["id"] or "")
            ok = answer is not None and answer.status != "error"
            ok = ok and not str(answer.content if answer else "").startswith("Error")
            result.valid_calls += ok
            if ok and _reads(call["name"], call["args"], task.path):
                result.file_read = True
    result.steps = len(replies)
    result.answer = replies[-1].text if replies else ""
    result.later_requests = max(len(replies) - 1, 0)
    usages = [prompt_usage(reply) for reply in replies]
    split = later_prompt_split(
        [{"prompt_cached": u.cached, "prompt_evaluated": u.evaluated} if u else {} for u in usages]
    )
    if split is not None:
        result.later_prompt_cached, result.later_prompt_evaluated = split


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _reads(name: str, args: Mapping[str, Any], path: str) -> bool:
    if name != "read_file" or not isinstance(args.get("path"), str):
        return False
    return str(args["path"]).strip().lstrip("/").removeprefix("./") == path
