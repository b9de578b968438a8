"""One run of the tool-calling loop, from the opening messages to an honest answer.

Each step: build the request view inside the budget (trimming old results in the view
only); if even that is over the budget, start the synthesis flow (one last tool round,
then the final answer); ask the model; read its calls (native or text); run them; append
the reply and its results together; repeat. A run that runs out of rounds or budget ends
with one more request offering no tools and asking for what was found and what is left.
Only this module knows the order of things; each piece it calls takes and returns values.
Each policy keeps its own state and is spoken to at fixed points (ADR 0028): the budget
once before a request (:meth:`RunBudget.prepare_step`) and once after the reply
(:meth:`RunBudget.observe`), the tool round once per round (:meth:`ToolRunner.round`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    message_chunk_to_message,
)
from langchain_core.messages.ai import UsageMetadata, add_usage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from leanloop import endings, events
from leanloop.budget import SHARED_ESTIMATORS, TokenEstimators, parse_overflow
from leanloop.budget.run import Prepared, RunBudget
from leanloop.budget.window import default_resolver
from leanloop.exceptions import ModelError, RunFailed
from leanloop.loop import prompts
from leanloop.loop.prefetch import request_paths
from leanloop.loop.profiles import SMALL, PromptProfile, pick_profile
from leanloop.loop.tool_round import ANSWER_TURN, READ, ToolRunner, pruning_trigger
from leanloop.protocol import (
    HoldBack,
    ReadCalls,
    ToolProtocol,
    answer_text,
    flatten_tool_history,
    format_tool_call,
    initial_mode,
    is_tools_refusal,
    question_of,
    text_result_turn,
)
from leanloop.pruning import augment_tool_schemas, processed_tokens
from leanloop.redact import redact_text, redact_url
from leanloop.report import RunReport, StopReason
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.tools.readers import file_like_words, reader_parameter
from leanloop.tools.registry import ToolRegistry

__all__ = ["AgentLoop", "CutStreamError", "StepSink", "TextSink", "TurnContext"]

_log = logging.getLogger(__name__)

TextSink = Callable[[str], Awaitable[None]]
"""Where streamed answer text goes."""

StepSink = Callable[[int, list[BaseMessage]], Awaitable[None]]
"""Receives each completed step (its reply and results) before the next request."""


@dataclass(frozen=True)
class TurnContext:
    """What a session adds to a run (see :mod:`leanloop.sessions`).

    Attributes:
        earlier_starts: The opening's index of each earlier turn's first message.
        current_start: The opening's index where the current turn starts.
        on_step: Called with each completed step (step 0: the prefetched reads) once its
            reply and results are in the history, before the next request.
        resume: Steps of this turn a previous process completed, in order: they go into
            the history as they are and the run goes on after the last one.
        recall: Whether the model has the ``recall`` tool (the omission note names it).
        session: What the report's ``session`` starts with (thread, turn, notes).
    """

    earlier_starts: Sequence[int] = ()
    current_start: int = 0
    on_step: StepSink | None = None
    resume: Sequence[tuple[int, Sequence[BaseMessage]]] = ()
    recall: bool = False
    session: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class _Answered:
    """A reply to a request, and (for a step) the calls read from it."""

    reply: AIMessage
    read: ReadCalls | None


class _StillTooLarge(Exception):
    """The provider refused a request for its size again after one recovery."""


class CutStreamError(ModelError, RuntimeError):
    """A streamed reply ended without the server saying it was finished.

    The connection closed (or the server stopped sending) before the chunk that carries a
    finish reason (OpenAI's ``finish_reason``, Ollama's ``done_reason``, Anthropic's
    ``stop_reason``): what arrived is part of a reply, never an answer.

    A :class:`~leanloop.exceptions.ModelError` (the model's reply cannot be used); also a
    :class:`RuntimeError`, its only base before it joined the tree (ADR 0030). The loop
    sends the request again once; a second cut becomes the run's
    :class:`~leanloop.exceptions.RunFailed`, so it never reaches a caller.
    """


_FINISH_KEYS = ("finish_reason", "done_reason", "stop_reason")
"""The response metadata that says a streamed reply was finished, per provider."""
_REPORTS_FINISH = frozenset({"BaseChatOpenAI", "ChatOllama", "ChatAnthropic"})
"""Chat model classes whose streams always end with one of :data:`_FINISH_KEYS`."""


@dataclass
class _Stream:
    """What streaming a run's replies keeps from one reply to the next."""

    on_text: TextSink | None = None
    """Receives answer text as it streams (``astream``); ``None`` when not streaming."""
    streamed: str = ""
    """The text of the latest reply that was passed to ``on_text``."""
    cut: bool = False
    """The latest streamed reply was cut (its text was shown, the reply did not count)."""
    replay: str = ""
    """What a cut reply showed that the retry has not repeated yet."""


@dataclass
class _Run:
    """What the loop itself keeps of one run; lives only as long as the run.

    The policies keep their own state: the budget (:class:`RunBudget`: plan, estimate,
    trimmed view, limits), the tool round (:class:`ToolRunner`: the guard, the pruner,
    the rounds of repeats), streaming (:class:`_Stream`).
    """

    history: list[BaseMessage]
    report: RunReport
    budget: RunBudget
    protocol: ToolProtocol
    runner: ToolRunner
    config: RunnableConfig
    profile: PromptProfile
    question: str
    """The user's request (the last human message of the opening)."""
    base_system: SystemMessage | None = None
    """The system message as the caller gave it, before any tool instructions."""
    step: int = 0
    synthesis: bool = False
    exhausted: bool = False
    """The guard stopped the model (it repeated calls whose results it had)."""
    tools_ran: bool = False
    stream: _Stream = field(default_factory=_Stream)
    started: float = field(default_factory=time.monotonic)
    usage: UsageMetadata | None = None
    """The usage of every reply of the run, added up."""
    resumed_reads: list[BaseMessage] = field(default_factory=list)
    """The results of steps an earlier process of this turn completed that carry data
    (marked :data:`READ`): the report of this process has no records of them."""
    bindings: dict[tuple[int, str | None], tuple[Sequence[Any], Any]] = field(default_factory=dict)
    """The run's model with each schema list bound: binding converts every schema, and the
    loop binds the same list on every step."""
    schemas: dict[bool, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    """The schemas a request offers, with tools and without, in the protocol's mode."""
    on_step: StepSink | None = None
    """A session's sink for completed steps; ``None`` outside a session."""
    learn_speed: Callable[[float, float], None] | None = None
    """Told ``(processed prompt tokens, seconds)`` of each answered request when the
    pruning model shares the main model's server, so pruning limits start measured."""

    @property
    def model(self) -> Any:
        """The chat model as this run sends requests (for Ollama, asking for its window)."""
        return self.budget.sized


class AgentLoop:
    """Drives runs of one agent; holds no per-run state, so runs may overlap."""

    def __init__(
        self,
        *,
        spec: AgentSpec,
        model: BaseChatModel,
        registry: ToolRegistry,
        pruning_model: BaseChatModel | None = None,
        estimators: TokenEstimators = SHARED_ESTIMATORS,
    ) -> None:
        self.spec = spec
        self.estimators = estimators
        self.model = model
        self.registry = registry
        self.pruning_model = pruning_model or model
        schemas = [convert_to_openai_tool(tool) for tool in registry.tools]
        if spec.allow_tool_output_pruning:
            schemas = augment_tool_schemas(schemas, spec.pruning_tools)
        self.schemas = schemas
        # What holds for every run of the agent is worked out once, here.
        self._profile = pick_profile(spec.prompt_profile, spec.model.model)
        self._prefetches = spec.prefetch_mentioned_files and "read_file" in registry.names
        self._reader = (
            _only_reader(registry.tools)
            if spec.prefetch_mentioned_files and not self._prefetches
            else None
        )
        self._needs_room = spec.allow_tool_output_pruning and pruning_trigger(spec) == "budget"
        self._model_name = _model_name(spec.model)

    async def run(
        self,
        messages: Sequence[BaseMessage],
        config: RunnableConfig,
        *,
        on_text: TextSink | None = None,
        turn: TurnContext | None = None,
    ) -> AIMessage:
        """Run the loop from ``messages`` to a final answer.

        Args:
            messages: The opening conversation.
            config: The run's config (callbacks, tags) passed to every model call.
            on_text: When given, replies are streamed and their text (never any part of a
                tool call) is passed here as it arrives.
            turn: A session's earlier turns, step sink and steps to resume from.

        Raises:
            RunFailed: When a request to the model fails for a reason other than its size
                (after LangChain's own retries); nothing half-done stays in the history.
        """
        text = question_of(messages)
        turn = turn or TurnContext()
        # The paths the request names travel as an argument: to the prefetch, the pruning
        # pass and, with each tool call, the workspace tools.
        named = request_paths(text, self.spec.workspace)
        run = await self._start(messages, config, question=text, named=named, turn=turn)
        run.stream.on_text = on_text
        return await self._drive(run)

    async def _drive(self, run: _Run) -> AIMessage:
        while run.step < self.spec.max_rounds:
            prepared = await self._prepare(run, tools=True)
            if prepared.over_budget:
                if run.synthesis:
                    return await self._final_answer(run, "budget_exhausted")
                await self._begin_synthesis(run, prepared)
                prepared = await self._prepare(run, tools=True)
                if not prepared.fits_window:
                    return await self._final_answer(run, "budget_exhausted")
            try:
                answered = await self._send(run, prepared, kind="step")
            except _StillTooLarge:
                return await self._final_answer(run, "budget_exhausted")
            read = answered.read or run.protocol.read(answered.reply)  # a step's is read
            if not read.calls and not read.corrections:
                reason: StopReason = "budget_exhausted" if run.synthesis else "answer"
                return await self._finish(run, read.reply, reason, judge=True)
            await self._tool_round(run, read)
            if run.synthesis:
                return await self._final_answer(run, "budget_exhausted")
            if run.exhausted:
                return await self._after_repeats(run)
        return await self._final_answer(run, "max_rounds")

    async def _start(
        self,
        messages: Sequence[BaseMessage],
        config: RunnableConfig,
        *,
        question: str,
        named: Callable[[], list[str]],
        turn: TurnContext,
    ) -> _Run:
        report = RunReport(question=question, agent=self.spec.name, model=self._model_name)
        if turn.session is not None:
            report.session = {"omitted_turns": 0, "resumed_from": None, **turn.session}
        protocol = ToolProtocol(
            mode=initial_mode(self.spec.tool_mode, self.model), schemas=self.schemas
        )
        report.tool_mode = protocol.mode
        profile = await self._run_profile()
        report.prompt_profile = profile.name
        opening = list(messages)
        base = opening[0] if opening and isinstance(opening[0], SystemMessage) else None
        if profile.guidance and self.schemas:
            text = f"{base.text}\n\n{profile.guidance}" if base else profile.guidance
            base = SystemMessage(content=text)
        head = opening[1:] if opening and isinstance(opening[0], SystemMessage) else opening
        system = protocol.system_message(base)
        history = [system, *head] if system is not None else list(head)
        schemas = _schemas(protocol)
        # One word with the budget opens the run: the windows, the models as the run
        # sends them, the limits of the prefetched reads.
        budget = await RunBudget.open(
            spec=self.spec,
            model=self.model,
            pruning_model=self.pruning_model,
            report=report,
            config=config,
            earlier=(turn.earlier_starts, turn.current_start, turn.recall),
            opening=history,
            tools=schemas[True],
            room=self._needs_room,
            estimators=self.estimators,
        )
        runner = ToolRunner.for_run(
            spec=self.spec,
            registry=self.registry,
            pruning=budget.pruning if self.spec.allow_tool_output_pruning else None,
            chars_per_token=budget.limits.chars_per_token,
            profile=profile,
            report=report,
            config=config,
            question=question,
            named=named,
        )
        run = _Run(
            history,
            report,
            budget,
            protocol,
            runner,
            config,
            profile,
            question,
            base_system=base,
            schemas=schemas,
            on_step=turn.on_step,
        )
        if runner.pruner is not None and _pruning_shares_server(self.spec):
            run.learn_speed = runner.pruner.observe_request
        if not any(step == 0 for step, _ in turn.resume):
            await self._prefetch(run, named)
        _resume(run, turn.resume)
        return run

    async def _run_profile(self) -> PromptProfile:
        """The prompting profile of a run: under ``auto``, what a local server says it
        serves decides when the configured name did not mark a small model
        (:func:`~leanloop.loop.profiles.pick_profile`); the probe is the window's, cached."""
        if self.spec.prompt_profile != "auto" or self._profile is SMALL:
            return self._profile
        model = self.spec.model
        said = await default_resolver().served(
            provider=model.provider,
            base_url=model.base_url,
            model_name=model.model,
            api_key=model.api_key,
        )
        if said is None:
            return self._profile
        return pick_profile("auto", model.model, served=said.served, n_params=said.n_params)

    async def _prefetch(self, run: _Run, named: Callable[[], list[str]]) -> None:
        """Read what the request names before the first request, as ordinary calls.

        The workspace files it names, with ``read_file``; without ``read_file``, the names
        that look like files, with the agent's one tool that reads a named resource (a
        user's ``read_doc(name)``, :mod:`leanloop.tools.readers`). Such a tool cannot be
        asked first whether the name exists: when every prefetched call failed, the step
        is left out of the conversation (the report keeps the calls).
        """
        tool, param = ("read_file", "path") if self._prefetches else self._reader or ("", "")
        # A user's reader cannot be asked which names exist: the words that look like files.
        paths = named() if self._prefetches else file_like_words(run.question) if tool else []
        if not paths:
            return
        calls: list[ToolCall] = [
            {"name": tool, "args": {param: p}, "id": f"prefetch_{i}", "type": "tool_call"}
            for i, p in enumerate(paths)
        ]
        # No request yet: the budget's limits are those the opening leaves (RunBudget.open).
        limits = run.budget.limits
        done = await run.runner.round(
            calls,
            step=0,
            history=run.history,
            result_cap=limits.result_cap,
            room_chars=limits.room,
            protocol=run.protocol,
            profile=run.profile,
            prefetch=True,
        )
        messages = done.messages
        if not self._prefetches and not any(c.ok for c in run.report.tool_calls if c.step == 0):
            run.report.events.append(
                f"prefetch: {tool} found none of {', '.join(paths)}; left out of the conversation"
            )
            return
        if run.protocol.mode == "native":
            reply = AIMessage(content="", tool_calls=calls)
        else:
            reply = AIMessage(
                content="\n".join(format_tool_call(c["name"], c["args"]) for c in calls)
            )
        run.history.extend([reply, *messages])
        run.report.prefetched = paths
        if run.on_step is not None:
            await run.on_step(0, [reply, *messages])
        await _emit_step(run, 0, prefetch=True)

    async def _prepare(self, run: _Run, *, tools: bool) -> Prepared:
        schemas = run.schemas[tools]
        history = run.history
        repeats = run.runner.repeat_rounds
        if not tools and repeats:
            history = [m for m in history if id(m) not in repeats]
        # In text mode the tool list lives in the system prompt: a request without tools
        # (the final answer) and a small model's answer turn leave it out, and so does the
        # synthesis flow once an answer turn has left it out, so that its appended
        # instruction does not rewrite the system prompt (the server's cached prefix).
        no_list = (
            not tools or _is_answer_turn(run) or (run.synthesis and bool(run.profile.answer_turn))
        )
        if (
            no_list
            and run.protocol.mode == "text"
            and history
            and isinstance(history[0], SystemMessage)
        ):
            history = [run.protocol.system_without_tools(run.base_system), *history[1:]]
        return await run.budget.prepare_step(history, tools=schemas, step=run.step + 1)

    async def _begin_synthesis(self, run: _Run, prepared: Prepared) -> None:
        run.synthesis = True
        plan = run.budget.plan
        _log.error(
            "context budget spent after trimming: estimate=%d ceiling=%d window=%d; "
            "starting the synthesis flow",
            prepared.tokens,
            plan.ceiling,
            plan.window,
        )
        run.history.append(HumanMessage(content=run.profile.synthesis))
        run.report.events.append(f"step {run.step + 1}: budget spent, synthesis flow started")
        await events.emit(
            events.SYNTHESIS,
            {"reason": "budget_exhausted", "estimate": prepared.tokens, "ceiling": plan.ceiling},
            run.config,
        )

    async def _send(self, run: _Run, prepared: Prepared, *, kind: str) -> _Answered:
        """Send one request, recovering once from a refusal for size or for tools."""
        attempt, recovered_size, flattened, recut = prepared, False, False, False
        # The loop's clock, the one of every timing decision (ADR 0027): on virtual time
        # in tests, a scripted model's delay is the seconds measured.
        clock = asyncio.get_running_loop()
        while True:
            sent = clock.time()
            try:
                reply = await self._invoke(run, attempt)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                overflow = parse_overflow(exc)
                if isinstance(exc, CutStreamError) and not recut:
                    recut = True  # sent again once; a second cut fails the run
                    self._note_cut(run, exc)
                    continue
                if overflow is not None:
                    if recovered_size:
                        raise _StillTooLarge from exc
                    recovered_size = True
                    retry = await run.budget.prepare_step(
                        run.history,
                        tools=list(attempt.tools),
                        step=run.step + 1,
                        refused=(attempt, overflow),
                    )
                    if not retry.fits_window or retry.chars >= attempt.chars:
                        raise _StillTooLarge from exc  # a retry that cannot shrink fails too
                    attempt = retry
                elif self._can_fall_back_to_text(run, exc):
                    attempt = await self._fall_back_to_text(run, exc)
                elif kind == "final" and not flattened and _has_tool_history(attempt.messages):
                    flattened = True
                    attempt = _flattened(attempt)
                else:
                    raise self._failed(run, exc) from exc
                continue
            seconds = clock.time() - sent  # of the attempt that was answered
            # A step sent again after a refusal is recorded as a retry (the refused attempt
            # has no reply to record); the final request stays "final".
            retried = attempt is not prepared and kind == "step"
            # A step's reply is read before the budget sees it: the room of the round that
            # follows is worked out for the reply as it enters the history.
            read = run.protocol.read(reply) if kind != "final" else None
            entering = read.reply if read is not None else reply
            self._record(
                run,
                attempt,
                reply,
                "retry" if retried else kind,
                entering=entering,
                seconds=seconds,
            )
            if run.learn_speed is not None:
                tokens = processed_tokens(reply.usage_metadata, default=attempt.tokens)
                run.learn_speed(tokens, seconds)
            return _Answered(reply, read)

    def _note_cut(self, run: _Run, exc: CutStreamError) -> None:
        run.report.events.append(f"step {run.step + 1}: {exc}; sent again")
        _log.warning("%s; sending the request again", exc)

    def _failed(self, run: _Run, exc: BaseException) -> RunFailed:
        """The run's failure, with the partial report and a hint at the server."""
        msg = f"the request to the model failed at step {run.step + 1}: {_one_line(exc)}"
        msg += _server_hint(self.spec.model.base_url, exc)
        # Shown by the CLI, the report and serve's replies: never base_url's credentials
        # (the provider's own text may repeat the URL too).
        msg = redact_text(msg)
        run.report.stop_reason = "failed"
        run.report.error = msg
        run.report.elapsed_s = round(time.monotonic() - run.started, 3)
        return RunFailed(msg, report=run.report, messages=run.history)

    async def _invoke(self, run: _Run, prepared: Prepared) -> AIMessage:
        model: Any = run.model
        if prepared.tools:
            choice = "required" if self._require_tool(run) else None
            model = _bound(run, prepared.tools, choice)
        if run.stream.on_text is not None:
            reply = await self._stream(run, model, prepared)
        else:
            reply = await model.ainvoke(prepared.messages, config=run.config)
        if not isinstance(reply, AIMessage):  # a custom model returning a plain message
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        return reply

    def _require_tool(self, run: _Run) -> bool:
        """``first_tool_choice: required`` applies to the first model request only."""
        first = run.step == 0 and not any(r.kind != "final" for r in run.report.requests)
        return self.spec.first_tool_choice == "required" and first

    async def _stream(self, run: _Run, model: Any, prepared: Prepared) -> AIMessage:
        """Stream one reply, passing on text that cannot be the start of a tool call.

        Raises:
            CutStreamError: When the stream of a model that always says how a reply ended
                stops without saying so: the reply is incomplete, and nothing of it counts.
        """
        hold = HoldBack(run.protocol.parameters)
        stream = run.stream
        whole: AIMessageChunk | None = None
        complete: AIMessage | None = None
        # Text a cut attempt already showed is not shown twice when the retry repeats it.
        stream.replay, stream.streamed = stream.streamed if stream.cut else "", ""
        async for item in model.astream(prepared.messages, config=run.config):
            if not isinstance(item, AIMessageChunk):
                # A model without streaming support hands over the whole reply at once.
                complete = item if isinstance(item, AIMessage) else AIMessage(content=str(item))
                calling = bool(complete.tool_calls)
                await self._show(stream, "" if calling else hold.feed(complete.text))
                continue
            whole = item if whole is None else whole + item
            if item.tool_call_chunks:
                continue  # a native call has begun: its text is not for the reader
            await self._show(stream, hold.feed(item.text))
        if complete is not None:
            reply = complete
        elif whole is not None:
            if _is_cut(self.model, whole):
                stream.cut = True
                raise CutStreamError(_cut_message(whole))
            reply = cast(AIMessage, message_chunk_to_message(whole))
        else:
            if _is_cut(self.model, None):
                stream.cut = True
                raise CutStreamError(_cut_message(None))
            reply = AIMessage(content="")
        stream.cut = False
        if not reply.tool_calls:
            read = run.protocol.read(reply)
            # The hold-back stops at anything that might start a call; when the finished
            # reply holds none after all (a ```json block of data), show the rest of it.
            rest = hold.flush() if read.calls or read.corrections else reply.text[hold.shown :]
            await self._show(stream, rest)
        if stream.replay:  # the retry stopped short of what the cut attempt showed
            stream.streamed, stream.replay = stream.streamed + stream.replay, ""
        return reply

    async def _show(self, stream: _Stream, text: str) -> None:
        if not text or stream.on_text is None:
            return
        if stream.replay:
            # Sent again after a cut: the caller saw ``stream.replay`` already. Text that
            # repeats it is not shown again; text that differs starts on a new paragraph.
            seen = min(len(text), len(stream.replay))
            if text[:seen] == stream.replay[:seen]:
                stream.streamed += text[:seen]
                stream.replay, text = stream.replay[seen:], text[seen:]
                if not text:
                    return
            else:
                matched = stream.streamed  # the retry's text so far, the same as before
                stream.replay, stream.streamed = "", ""
                await stream.on_text("\n\n")
                text = matched + text
        stream.streamed += text
        await stream.on_text(text)

    def _can_fall_back_to_text(self, run: _Run, exc: BaseException) -> bool:
        return (
            self.spec.tool_mode == "auto"
            and run.protocol.mode == "native"
            and not run.tools_ran
            and is_tools_refusal(exc)
        )

    async def _fall_back_to_text(self, run: _Run, exc: BaseException) -> Prepared:
        run.protocol.mode = "text"
        run.report.tool_mode = "text"
        run.schemas = _schemas(run.protocol)
        # Only prefetched reads can be in the history yet: give them the text form.
        run.history = flatten_tool_history(run.history)
        _install_system(run)
        run.report.events.append(
            f"step {run.step + 1}: server refused tools; switched to text mode"
        )
        _log.warning("the server refused native tools (%s); switching to text mode", _one_line(exc))
        await events.emit(
            events.TOOL_MODE_CHANGED,
            {"from": "native", "to": "text", "reason": _one_line(exc)},
            run.config,
        )
        return await self._prepare(run, tools=True)

    async def _tool_round(self, run: _Run, read: ReadCalls) -> None:
        step = run.step + 1
        if read.calls:
            # What the budget said when it observed the reply (RunBudget.observe).
            limits = run.budget.limits
            done = await run.runner.round(
                read.calls,
                step=step,
                history=[*run.history, read.reply],
                result_cap=limits.result_cap,
                room_chars=limits.room,
                protocol=run.protocol,
                profile=run.profile,
            )
            messages, run.exhausted = done.messages, done.exhausted
            run.tools_ran = True
        else:
            messages = [text_result_turn("\n".join(read.corrections))]
        # A reply and its results enter the history together, or not at all.
        run.history.extend([read.reply, *messages])
        if run.on_step is not None:  # stored before the next request: a resume starts here
            await run.on_step(step, [read.reply, *messages])
        run.step = run.report.steps = step
        await _emit_step(run, step)

    async def _after_repeats(self, run: _Run) -> AIMessage:
        """The guard stopped the model: ask once for the answer from what was read.

        With a profile that asks for it (``answer_after_repeats``, the small one) and a
        result of this run still whole in view (it ran, it did not fail, nothing trimmed
        it), one request without tools asks for the answer from those results; its plain
        text is the model's answer (``answer``). Without a read, or when that reply holds
        no text (another call), the run ends by ``repeated_calls`` and says so.
        """
        prompt = run.profile.answer_after_repeats
        if not prompt or not _reads_in_view(run):
            return await self._final_answer(run, "repeated_calls")
        return await self._final_answer(
            run, "answer", prompt=prompt, unanswered="repeated_calls", note=_ANSWER_AFTER_REPEATS
        )

    async def _final_answer(
        self,
        run: _Run,
        reason: StopReason,
        *,
        prompt: str | None = None,
        unanswered: StopReason | None = None,
        note: str = "",
    ) -> AIMessage:
        """One request without tools, and the run's end.

        ``prompt`` replaces the profile's final-answer prompt; ``unanswered`` is the stop
        reason when the reply holds no text or the request cannot be sent (else
        ``reason``); ``note`` opens the report's event line for the request, which says
        how it went.
        """
        otherwise = unanswered or reason
        if run.report.tool_calls and not _rests_on(run):
            # Every call of the run failed: a reply could only guess (a made-up port, in
            # the run). The ending says so without asking, and nothing is streamed.
            run.report.events.append(
                f"step {run.step + 1}: no final request: no tool call returned data; "
                f"stop: {otherwise}"
            )
            ending = endings.ending_text(otherwise, read=[])
            return await self._finish(run, AIMessage(content=ending), otherwise)
        text = run.profile.with_question(prompt or run.profile.final_answer, run.question)
        run.history.append(HumanMessage(content=text))
        prepared = await self._prepare(run, tools=False)
        trimmed = ""
        if unanswered is not None and not _reads_in_view(run, prepared.messages):
            # The trimming of this very view took the last read out of it: the reply
            # cannot be an answer from what was read.
            reason, trimmed = unanswered, " (but this request's view trimmed every read)"
        if not prepared.fits_window:
            _note_end(run, note, "the request does not fit the window", otherwise)
            return await self._finish(run, self._out_of_context(run, prepared), otherwise)
        try:
            reply = (await self._send(run, prepared, kind="final")).reply
        except _StillTooLarge:
            _note_end(run, note, "refused for its size", otherwise)
            return await self._finish(run, self._out_of_context(run, prepared), otherwise)
        # A call written on the final request is never run; only its text counts.
        text = answer_text(reply, run.protocol.parameters)
        if not text:
            reason = otherwise
            text = endings.ending_text(
                reason, read=_rests_on(run), why="its last reply held only a tool call"
            )
            _note_end(run, note, "no answer (the reply held no text, only a call)", reason)
            answer = AIMessage(content=text, usage_metadata=reply.usage_metadata, id=reply.id)
            return await self._finish(run, answer, reason)
        _note_end(run, note, f"answered{trimmed}", reason)
        answer = AIMessage(content=text, usage_metadata=reply.usage_metadata, id=reply.id)
        return await self._finish(run, answer, reason, judge=True, unanswered=otherwise)

    def _out_of_context(self, run: _Run, prepared: Prepared) -> AIMessage:
        text = prompts.OUT_OF_CONTEXT_TEXT.format(
            tokens=prepared.tokens, window=run.budget.plan.window
        )
        return AIMessage(content=f"{text} {endings.read_clause(_rests_on(run))}")

    def _judged(
        self,
        run: _Run,
        reply: AIMessage,
        reason: StopReason,
        read: list[str],
        unanswered: StopReason | None,
    ) -> tuple[AIMessage, StopReason]:
        """The reply as the run's answer, or the ending's own words (see :meth:`_finish`)."""
        verdict = endings.judge_reply(
            reply.text,
            question=run.question,
            instructions=_instructions(run),
            read_something=bool(read),
        )
        # A run that stopped for a limit after calls that all failed has nothing to
        # answer from; without any call, its reply rests on the conversation itself.
        grounded = reason == "answer" or bool(read) or not run.report.tool_calls
        if verdict.is_answer and grounded:
            if verdict.text == reply.text:
                return reply, reason
            run.report.events.append(
                f"step {run.step + 1}: the reply was the request's JSON shape; "
                "its finding is the answer"
            )
            return reply.model_copy(update={"content": verdict.text}), reason
        if not verdict.is_answer:
            reason = unanswered or ("no_answer" if reason == "answer" else reason)
            why = verdict.why
            said = f"the reply was not an answer ({why}); stop: {reason}"
        else:  # a run stopped for a limit, and every tool call it made failed
            why = ""
            said = f"the reply rests on no tool result (every call failed); stop: {reason}"
        run.report.events.append(f"step {run.step + 1}: {said}")
        run.report.set_aside = reply.text
        text = endings.ending_text(reason, read=read, why=why)
        return AIMessage(content=text, usage_metadata=reply.usage_metadata, id=reply.id), reason

    def _record(
        self,
        run: _Run,
        prepared: Prepared,
        reply: AIMessage,
        kind: str,
        *,
        entering: AIMessage,
        seconds: float,
    ) -> None:
        if reply.usage_metadata:
            run.usage = add_usage(run.usage, reply.usage_metadata)
        # The budget learns from the reply, records the request and sets the limits of the
        # round that follows: its one word after the request.
        run.budget.observe(
            prepared,
            reply,
            step=run.step + 1,
            kind=kind,
            room=self._needs_room,
            entering=entering,
            seconds=seconds,
        )

    async def _finish(
        self,
        run: _Run,
        reply: AIMessage,
        reason: StopReason,
        *,
        judge: bool = False,
        unanswered: StopReason | None = None,
    ) -> AIMessage:
        """End the run with ``reply``: stream what the caller has not seen, fill the report.

        With ``judge``, ``reply`` is the model's text and is judged first
        (:func:`~leanloop.loop.endings.judge_reply`): a reply that is not an answer (the
        loop's instruction or the question written back, the request's JSON shape with
        nothing found) ends the run by ``unanswered`` (``no_answer`` when the run was
        answering), in words; so does the text of a run that stopped for a limit when no
        tool call of the run returned data (it rests on nothing).
        """
        read = _rests_on(run)
        if judge:
            reply, reason = self._judged(run, reply, reason, read, unanswered)
        if reason != "answer":
            run.report.ending = endings.STOP_WORDS.get(reason)
        run.report.rests_on = read
        if run.stream.on_text is not None:
            # Answers leanloop composed (or cleaned of a written call) were not streamed as
            # they are: pass on whatever of the final text the caller has not seen yet.
            text, shown = reply.text, run.stream.streamed
            if not text.startswith(shown) and text.startswith(shown.rstrip()):
                shown = shown.rstrip()  # whitespace shown before a held-back call
            await self._show(
                run.stream, text[len(shown) :] if text.startswith(shown) else f"\n\n{text}"
            )
        run.report.stop_reason = reason
        # A step is a request and the round it asked for: the request that answered is
        # the last step (a prefetched file answered at once is one step, not zero).
        run.report.steps = max(run.step, *(r.step for r in run.report.requests), 0)
        run.report.elapsed_s = round(time.monotonic() - run.started, 3)
        metadata = {**reply.response_metadata, "leanloop": run.report.to_dict()}
        # The usage of the whole run (every request); per-request figures are in the report.
        return AIMessage(
            content=reply.content,
            response_metadata=metadata,
            usage_metadata=run.usage or reply.usage_metadata,
            id=reply.id,
        )


def _only_reader(tools: Sequence[BaseTool]) -> tuple[str, str] | None:
    """The agent's one tool that reads a named resource, and its parameter; ``None`` when
    it has none or several (which one a name belongs to is then a guess)."""
    readers = [(tool.name, param) for tool in tools if (param := reader_parameter(tool))]
    return readers[0] if len(readers) == 1 else None


def _rests_on(run: _Run) -> list[str]:
    """What the run read: the calls that returned data (:func:`endings.rests_on`)."""
    return endings.rests_on(run.report.tool_calls, resumed=bool(run.resumed_reads))


def _instructions(run: _Run) -> list[str]:
    """The texts the loop itself may have put into the run's conversation."""
    profile = run.profile
    texts = (
        profile.final_answer,
        profile.answer_after_repeats,
        profile.answer_turn,
        profile.synthesis,
        prompts.FINAL_ANSWER_PROMPT,
    )
    return [profile.with_question(text, run.question) for text in texts if text]


_ANSWER_AFTER_REPEATS = (
    "the model repeated calls whose results it already had; asked once, without tools, "
    "for the answer from what was read"
)
"""The report's event line for the small profile's answer after repeats (ADR 0011)."""

_READ_FATES = frozenset({"kept", "cut", "pruned"})
"""What became of a result the model can still read (all of it, or what the cap or the
pruning pass left of it): the fates of :attr:`leanloop.report.ToolCallRecord.fate`."""


def _reads_in_view(run: _Run, view: Sequence[BaseMessage] | None = None) -> bool:
    """Whether this turn read data that the request ``view`` still carries whole.

    A result counts when its tool ran and did not fail (a repeat's reminder is not data)
    and no request view has trimmed it since; prefetched reads count like any other.
    The report's records say so for the calls of this process. The steps an earlier
    process of a resumed turn completed have no records here: their results carry
    :data:`READ` instead, and count when ``view`` holds them as they are (a trimmed
    copy is another message); without a view they are taken to be there.
    """
    if any(call.fate in _READ_FATES for call in run.report.tool_calls):
        return True
    if view is None:
        return bool(run.resumed_reads)
    resumed = {id(m) for m in run.resumed_reads}
    return any(id(m) in resumed for m in view)


def _note_end(run: _Run, note: str, outcome: str, reason: StopReason) -> None:
    """Add the report's event line for a final request opened by ``note``."""
    if note:
        run.report.events.append(f"step {run.step}: {note}: {outcome}; stop: {reason}")


def _resume(run: _Run, steps: Sequence[tuple[int, Sequence[BaseMessage]]]) -> None:
    """Put the steps a previous process completed into the history and go on after them."""
    if not steps:
        return
    for _, messages in steps:
        run.history.extend(messages)
        run.resumed_reads.extend(m for m in messages if m.additional_kwargs.get(READ))
    last = max(step for step, _ in steps)
    run.step = run.report.steps = last
    if run.report.session is not None:
        run.report.session["resumed_from"] = last
    run.report.events.append(f"resumed after step {last} ({len(steps)} stored steps)")


def _model_name(model: ModelSpec) -> str | None:
    """The model as the report names it: the name the server is asked for, else the class
    of a ``class:`` model (``ScriptedChatModel``), which is what a reader of the YAML knows."""
    if model.model:
        return model.model
    if model.class_path:
        # `package.module:Class`, or a dotted path to the class.
        return model.class_path.rpartition(":")[2].rpartition(".")[2] or None
    return None


def _pruning_shares_server(spec: AgentSpec) -> bool:
    """Whether the pruning model is the main model's server (its speed is the same)."""
    own = spec.pruning_model
    return own is None or (own.base_url is not None and own.base_url == spec.model.base_url)


async def _emit_step(run: _Run, step: int, *, prefetch: bool = False) -> None:
    """The ``leanloop.step`` event: each call of the step with what became of its result."""
    calls = [c for c in run.report.tool_calls if c.step == step]
    payload = {
        "step": step,
        "prefetch": prefetch,
        "elapsed_s": round(time.monotonic() - run.started, 3),
        "calls": [
            {
                "name": c.name,
                "args": c.args,
                "chars_out": c.chars_out,
                "chars_raw": c.chars_raw,
                "ok": c.ok,
                "repeated": c.repeated,
                "pruned": c.pruned,
                "cut_from": c.cut_from,
            }
            for c in calls
        ],
    }
    await events.emit(events.STEP, payload, run.config)


def _server_hint(base_url: str | None, exc: BaseException) -> str:
    """Where the request went and, when nothing answered there, how to start a server."""
    if not base_url:
        return ""
    hint = f" (server: {redact_url(base_url)})"
    if _is_connection_error(exc):
        hint += "; nothing answered there"
        authority = base_url.split("//", 1)[-1].split("/", 1)[0].rpartition("@")[2]
        host, colon, port = authority.rpartition(":")
        if not colon or not port.isdigit():  # no port ("[::1]" has colons of its own)
            host, port = authority, "443" if base_url.startswith("https:") else "80"
        if host in {"127.0.0.1", "localhost", "[::1]"}:
            from leanloop.localmodel import DEFAULT_PORT  # noqa: PLC0415 - only for this hint

            # `local start` serves on its default port unless told: name the file's port.
            flag = "" if int(port) == DEFAULT_PORT else f" --port {int(port)}"
            hint += f" — for the embedded model, start it with `leanloop local start{flag}`"
    return hint


def _is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it came from) is a failure to connect at all."""
    seen: BaseException | None = exc
    while seen is not None:
        name = type(seen).__name__
        if "Connect" in name or isinstance(seen, ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _is_answer_turn(run: _Run) -> bool:
    """Whether the history ends with a result turn marked :data:`ANSWER_TURN`."""
    return bool(run.history) and bool(run.history[-1].additional_kwargs.get(ANSWER_TURN))


def _bound(run: _Run, tools: Sequence[Mapping[str, Any]], choice: str | None) -> Any:
    """The run's model with ``tools`` bound; the binding is made once per schema list."""
    key = (id(tools), choice)
    cached = run.bindings.get(key)
    if cached is not None and cached[0] is tools:
        return cached[1]
    bound = run.model.bind_tools([dict(t) for t in tools], tool_choice=choice)
    run.bindings[key] = (tools, bound)
    return bound


def _schemas(protocol: ToolProtocol) -> dict[bool, Sequence[Mapping[str, Any]]]:
    """The schemas a request offers in the protocol's mode, with tools and without."""
    return {tools: protocol.bound_schemas(tools=tools) for tools in (True, False)}


def _install_system(run: _Run) -> None:
    """Put the system message for the protocol's current mode first in the history."""
    head = run.history[0] if run.history and isinstance(run.history[0], SystemMessage) else None
    rest = run.history[1:] if head is not None else run.history
    system = run.protocol.system_message(run.base_system)
    run.history = [system, *rest] if system is not None else list(rest)


def _has_tool_history(messages: Sequence[BaseMessage]) -> bool:
    return any(isinstance(m, AIMessage) and m.tool_calls for m in messages)


def _flattened(prepared: Prepared) -> Prepared:
    return replace(prepared, messages=flatten_tool_history(prepared.messages))


def _is_cut(model: Any, whole: AIMessageChunk | None) -> bool:
    """Whether a stream of ``model`` that added up to ``whole`` ended without a finish.

    Only models whose streams always end with a finish reason are judged (an unknown model
    may never report one); their stream is cut when no chunk carried a reason.
    """
    if not any(kind.__name__ in _REPORTS_FINISH for kind in type(model).__mro__):
        return False
    metadata = whole.response_metadata if whole is not None else {}
    return not any(metadata.get(key) for key in _FINISH_KEYS)


def _cut_message(whole: AIMessageChunk | None) -> str:
    got = f"{len(whole.text)} characters" if whole is not None else "nothing"
    if whole is not None and whole.tool_call_chunks:
        got += " and part of a tool call"
    return f"the streamed reply was cut off (after {got}, with no finish reason)"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]
