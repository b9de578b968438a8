"""One run of the tool-calling loop: step, run the tools, keep pairs whole, answer.

The loop reads like the protocol it drives: ask the model; run the calls it made (at most
``max_parallel_tools`` at once, failures as messages); append the reply and its results as
one unit; repeat until the model answers or the rounds run out, then ask once more with no
tools for an honest final answer. Only this module knows the order of things.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool

from leanloop import events, prompts
from leanloop.config import AgentSpec
from leanloop.exceptions import ModelError
from leanloop.report import RequestRecord, RunReport, StopReason, ToolCallRecord
from leanloop.tools.registry import ToolOutcome, ToolRegistry

__all__ = ["AgentLoop", "RunFailed"]

_log = logging.getLogger(__name__)


class RunFailed(ModelError):
    """A step failed; ``report`` holds what the run did before it (history rolled back)."""

    def __init__(self, message: str, *, report: RunReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class _Run:
    """The mutable state of one run; lives only as long as the run."""

    history: list[BaseMessage]
    report: RunReport = field(default_factory=RunReport)
    step: int = 0


class AgentLoop:
    """Drives one agent's runs; holds no per-run state, so runs may overlap."""

    def __init__(self, *, spec: AgentSpec, model: BaseChatModel, registry: ToolRegistry) -> None:
        self.spec = spec
        self.model = model
        self.registry = registry
        self.tool_schemas = [convert_to_openai_tool(tool) for tool in registry.tools]

    async def run(self, messages: Sequence[BaseMessage], config: RunnableConfig) -> AIMessage:
        """Run the loop from ``messages`` to a final answer.

        Raises:
            RunFailed: When a request to the model fails (after LangChain's own retries).
        """
        run = _Run(history=list(messages))
        while run.step < self.spec.max_rounds:
            reply = await self._request(run, config, tools=True)
            calls = list(reply.tool_calls)
            if not calls:
                return self._finish(run, reply, "answer")
            results = await self._run_calls(run, calls)
            # A reply and its results enter the history together or not at all.
            run.history.extend([reply, *results])
            run.step += 1
            run.report.steps = run.step
            await events.emit(events.STEP, _step_payload(run), config)
        return await self._final_answer(run, config, "max_rounds")

    async def _request(self, run: _Run, config: RunnableConfig, *, tools: bool) -> AIMessage:
        model: Any = (
            self.model.bind_tools(self.tool_schemas)
            if tools and self.tool_schemas
            else (self.model)
        )
        try:
            reply = await model.ainvoke(run.history, config=config)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            msg = f"the request to the model failed at step {run.step + 1}: {_one_line(exc)}"
            raise RunFailed(msg, report=run.report) from exc
        if not isinstance(reply, AIMessage):  # a custom model returning a string, say
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        usage: dict[str, Any] = dict(reply.usage_metadata or {})
        run.report.requests.append(
            RequestRecord(
                step=run.step + 1,
                messages=len(run.history),
                input_tokens=usage.get("input_tokens"),
                output_tokens=usage.get("output_tokens"),
                tools=tools,
                kind="step" if tools else "final",
            )
        )
        return reply

    async def _run_calls(self, run: _Run, calls: list[ToolCall]) -> list[BaseMessage]:
        limit = self.spec.max_parallel_tools
        accepted, dropped = calls[:limit], calls[limit:]
        outcomes = await asyncio.gather(
            *(self.registry.run(call["name"], call["args"]) for call in accepted)
        )
        results: list[BaseMessage] = []
        for call, outcome in zip(accepted, outcomes, strict=True):
            run.report.tool_calls.append(_record(run.step + 1, outcome))
            results.append(_tool_message(call, outcome.text, ok=outcome.ok))
        results.extend(_tool_message(c, prompts.fan_out_note(limit), ok=False) for c in dropped)
        if dropped:
            run.report.events.append(
                f"step {run.step + 1}: {len(dropped)} calls over the limit of {limit} not run"
            )
        return results

    async def _final_answer(
        self, run: _Run, config: RunnableConfig, reason: StopReason
    ) -> AIMessage:
        run.history.append(HumanMessage(content=prompts.FINAL_ANSWER_PROMPT))
        reply = await self._request(run, config, tools=False)
        if reply.tool_calls or not reply.text.strip():
            # A call written on the final request is never run; say so instead of acting.
            ran = ", ".join(sorted({c.name for c in run.report.tool_calls})) or "none"
            text = reply.text.strip() or prompts.NO_ANSWER_TEXT.format(tools=ran)
            reply = AIMessage(content=text, usage_metadata=reply.usage_metadata)
        return self._finish(run, reply, reason)

    def _finish(self, run: _Run, reply: AIMessage, reason: StopReason) -> AIMessage:
        run.report.stop_reason = reason
        run.report.steps = run.step
        metadata = {**reply.response_metadata, "leanloop": run.report.to_dict()}
        return AIMessage(
            content=reply.content,
            response_metadata=metadata,
            usage_metadata=reply.usage_metadata,
            id=reply.id,
        )


def _record(step: int, outcome: ToolOutcome) -> ToolCallRecord:
    return ToolCallRecord(
        step=step,
        name=outcome.name,
        args=dict(outcome.args),
        chars_out=len(outcome.text),
        chars_raw=outcome.chars_raw,
        ok=outcome.ok,
        notes=list(outcome.notes),
    )


def _tool_message(call: ToolCall, text: str, *, ok: bool) -> ToolMessage:
    return ToolMessage(
        content=text,
        tool_call_id=call.get("id") or "",
        name=call["name"],
        status="success" if ok else "error",
    )


def _step_payload(run: _Run) -> dict[str, Any]:
    calls = [c for c in run.report.tool_calls if c.step == run.step]
    return {
        "step": run.step,
        "calls": [{"name": c.name, "args": c.args, "chars_out": c.chars_out} for c in calls],
    }


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]
