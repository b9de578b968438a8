"""One run of the tool-calling loop, from the opening messages to an honest answer.

Each step: build the request view inside the budget (trimming old results in the view
only); ask the model; read its calls (native or text); run them; append the reply and its
results together; repeat. A run that runs out of rounds or budget ends with one more
request offering no tools and asking for what was found and what is left.

Only this module knows the order of things, and it owns the run's state
(:class:`~leanloop.loop.run_state.RunState`); each piece it calls takes and returns
values. The budget is spoken to once before a request (:meth:`RunBudget.prepare_step`)
and once after the reply (:meth:`RunBudget.observe`), the tool round once per round
(:meth:`ToolRunner.round`) (ADR 0028). The policies (prefetch, the cut-stream retry, the
text-mode fallback, the synthesis flow, the repeat guard, the answer after repeats,
``read_file`` paging, the answer check) are asked at fixed, typed hooks in the order
:class:`AgentLoop` lists them, and answer with values the driver applies
(:mod:`leanloop.loop.policies`, ADR 0034).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolCall,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool

from leanloop import events
from leanloop.budget.run import RunBudget
from leanloop.budget.shared import PROCESS_STATE, SharedState
from leanloop.loop.ending import final_answer, finish
from leanloop.loop.pause import PausedReply, mark_paused, paused_reply, waiting_text
from leanloop.loop.policies.answer_after_repeats import AnswerAfterRepeatsConfig
from leanloop.loop.policies.answer_check import AnswerCheckConfig
from leanloop.loop.policies.approval import (
    ApprovalConfig,
    Approver,
    DecisionName,
    Preview,
    decision_from,
    decision_to_dict,
)
from leanloop.loop.policies.cut_stream import CutStreamConfig, CutStreamError
from leanloop.loop.policies.hooks import (
    FinalRequest,
    Policies,
    Policy,
    PolicyConfig,
)
from leanloop.loop.policies.prefetch import PrefetchConfig
from leanloop.loop.policies.read_paging import ReadPagingConfig
from leanloop.loop.policies.repeat_guard import RepeatGuardConfig
from leanloop.loop.policies.synthesis import SynthesisConfig
from leanloop.loop.policies.text_fallback import TextFallbackConfig
from leanloop.loop.prefetch import request_paths
from leanloop.loop.profiles import SMALL, PromptProfile, pick_profile
from leanloop.loop.requests import Requests
from leanloop.loop.run_state import RunState, StepSink, StillTooLarge, TurnContext, schemas_of, view
from leanloop.loop.streaming import TextSink
from leanloop.loop.tool_round import READ, Round, ToolRunner, pruning_trigger
from leanloop.protocol import (
    ReadCalls,
    ToolProtocol,
    initial_mode,
    question_of,
    text_result_turn,
)
from leanloop.pruning import augment_tool_schemas
from leanloop.report import RunReport
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.tools.registry import ToolRegistry

__all__ = ["AgentLoop", "CutStreamError", "StepSink", "TextSink", "TurnContext"]


class AgentLoop:
    """Drives runs of one agent; holds no per-run state, so runs may overlap."""

    def __init__(
        self,
        *,
        spec: AgentSpec,
        model: BaseChatModel,
        registry: ToolRegistry,
        pruning_model: BaseChatModel | None = None,
        shared_state: SharedState = PROCESS_STATE,
        approval: Mapping[str, tuple[DecisionName, ...]] | None = None,
        approval_when: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
        approver: Approver | None = None,
        preview: Preview | None = None,
    ) -> None:
        self.spec = spec
        self.approval = dict(approval or {})
        """Per tool name whose calls ask a person first, the decisions allowed (ADR 0037)."""
        self.approval_when = dict(approval_when or {})
        """Per tool name that asks only on a condition, its ``(argument, regex)`` pairs."""
        self.approver = approver
        """Who decides when the run's config names no ``approver``; ``None``: nobody."""
        self.preview = preview
        self.shared_state = shared_state
        """What outlives a run: the budget's caches and their clock (the agent's)."""
        self.model = model
        self.registry = registry
        self.pruning_model = pruning_model or model
        schemas = [convert_to_openai_tool(tool) for tool in registry.tools]
        if spec.allow_tool_output_pruning:
            schemas = augment_tool_schemas(schemas, spec.pruning_tools)
        self.schemas = schemas
        # What holds for every run of the agent is worked out once, here.
        self._profile = pick_profile(spec.prompt_profile, spec.model.model)
        self._needs_room = spec.allow_tool_output_pruning and pruning_trigger(spec) == "budget"
        self._model_name = _model_name(spec.model)
        self._requests = Requests(spec=spec, model=model, needs_room=self._needs_room)
        self._answer_check = AnswerCheckConfig(spec.answer_check)
        # The policies, in the order the driver asks them (ADR 0034); each run starts its own.
        self._policies: tuple[PolicyConfig[Policy], ...] = (
            CutStreamConfig(),
            TextFallbackConfig(spec.tool_mode),
            SynthesisConfig(),
            RepeatGuardConfig(max_repeats=spec.max_repeated_calls, workspace=spec.workspace),
            AnswerAfterRepeatsConfig(),
            ReadPagingConfig(),
            self._answer_check,
        )
        prefetch = PrefetchConfig.for_tools(registry.tools)
        if spec.prefetch_mentioned_files and prefetch is not None:
            self._policies = (prefetch, *self._policies)

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
        # An answer the check may replace is shown once checked: text already streamed
        # could not be taken back (ADR 0035).
        run.stream.hold = on_text is not None and self._answer_check.asks(run.profile)
        return await self._drive(run)

    async def _drive(self, run: RunState) -> AIMessage:
        if run.paused is not None:  # a resume: the paused reply's calls, decided now
            read = run.protocol.read(run.paused.reply)
            done = await self._tool_round(run, read)
            if done.paused:
                return await self._pause(run, read, done)
            if final := run.policies.after_round(view(run), done):
                return await final_answer(self._requests, run, final)
        while run.step < self.spec.max_rounds:
            prepared = await self._requests.prepare(run, tools=True)
            decision = await run.policies.before_request(view(run), prepared)
            if isinstance(decision, FinalRequest):
                return await final_answer(self._requests, run, decision)
            if decision is not None:  # a turn added (the synthesis flow): prepare again
                run.history.append(decision.message)
                prepared = await self._requests.prepare(run, tools=True)
                if not prepared.fits_window:
                    return await final_answer(self._requests, run, FinalRequest(decision.otherwise))
            try:
                answered = await self._requests.send(run, prepared, kind="step")
            except StillTooLarge:
                return await final_answer(self._requests, run, FinalRequest("budget_exhausted"))
            read = answered.read or run.protocol.read(answered.reply)  # a step's is read
            if not read.calls and not read.corrections:
                reason = run.policies.at_end(view(run), "answer")
                return await finish(run, read.reply, reason, judge=True, check=self._requests)
            done = await self._tool_round(run, read)
            if done.paused:
                return await self._pause(run, read, done)
            if final := run.policies.after_round(view(run), done):
                return await final_answer(self._requests, run, final)
        return await final_answer(self._requests, run, FinalRequest("max_rounds"))

    async def _pause(self, run: RunState, read: ReadCalls, done: Round) -> AIMessage:
        """End the run before the reply's calls: they wait for a person (ADR 0037).

        The reply is stored as its step's only message, marked with the calls that wait
        and the decisions made on its other calls, so a later run goes on from it.
        """
        step = run.step + 1
        run.report.pending_calls = [p.to_dict() for p in done.paused]
        decided = {
            str(a["call_id"]): decision_to_dict(_decision_of(a))
            for a in run.report.approvals
            if a["step"] == step and a["decision"] != "pause" and a["call_id"] is not None
        }
        if run.on_step is not None:
            seen = self.registry.workspace_run.seen()
            await run.on_step(step, [mark_paused(read.reply, done.paused, decided, seen)])
        run.step = step
        text = waiting_text(done.paused, session=run.report.session is not None)
        return await finish(run, AIMessage(content=text), "paused")

    async def _start(
        self,
        messages: Sequence[BaseMessage],
        config: RunnableConfig,
        *,
        question: str,
        named: Callable[[], list[str]],
        turn: TurnContext,
    ) -> RunState:
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
        schemas = schemas_of(protocol)
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
            shared_state=self.shared_state,
        )
        paused = paused_reply(turn.resume)
        configs = self._policies
        if self.approval:
            # First of all: a call a person rejects must never be claimed by the repeat
            # guard (ADR 0037). An agent whose tools never ask has no such policy.
            configs = (self._approval(config, paused), *configs)
        policies = Policies(tuple(policy.start() for policy in configs))
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
            policies=policies,
            server_tokens=self.shared_state.server_tokens,
        )
        run = RunState(
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
            policies=policies,
            edits=self.registry.workspace_run.report,
        )
        if runner.pruner is not None and _pruning_shares_server(self.spec):
            run.learn_speed = runner.pruner.observe_request
        if not any(step == 0 for step, _ in turn.resume):
            await self._open(run)
        if paused is not None:
            # The files read before the pause were read by this run too: an approved edit
            # of one unchanged since goes through (the edit checks the disk itself).
            self.registry.workspace_run.trust(paused.seen)
            # The paused reply's round is run again, with the decisions; not the history.
            _resume(run, turn.resume[:-1])
            run.step = run.report.steps = paused.step - 1
            run.paused = paused
        else:
            _resume(run, turn.resume)
        return run

    def _approval(self, config: RunnableConfig, paused: PausedReply | None) -> ApprovalConfig:
        """The approval policy's config for one run: who decides (the config's
        ``approver``, else the agent's), and a resume's decisions on its paused reply."""
        configurable: Mapping[str, Any] = config.get("configurable") or {}
        approver = configurable.get("approver") or self.approver
        given = {}
        if paused is not None:
            given = dict(paused.decided)
            for call_id, value in (configurable.get("approvals") or {}).items():
                given[str(call_id)] = decision_from(value, by="resume")
        return ApprovalConfig(
            asks=self.approval,
            when=self.approval_when,
            approver=approver,
            given=given,
            preview=self.preview,
            agent=self.spec.name,
        )

    async def _run_profile(self) -> PromptProfile:
        """The prompting profile of a run: under ``auto``, what a local server says it
        serves decides when the configured name did not mark a small model
        (:func:`~leanloop.loop.profiles.pick_profile`); the probe is the window's, cached."""
        if self.spec.prompt_profile != "auto" or self._profile is SMALL:
            return self._profile
        model = self.spec.model
        said = await self.shared_state.windows.served(
            provider=model.provider,
            base_url=model.base_url,
            model_name=model.model,
            api_key=model.api_key,
        )
        if said is None:
            return self._profile
        return pick_profile("auto", model.model, served=said.served, n_params=said.n_params)

    async def _open(self, run: RunState) -> None:
        """The opening step (step 0, before the first request): what a policy reads first."""

        async def run_calls(calls: Sequence[ToolCall]) -> Round:
            # No request yet: the budget's limits are those the opening leaves (RunBudget.open).
            limits = run.budget.limits
            return await run.runner.round(
                calls,
                step=0,
                history=run.history,
                result_cap=limits.result_cap,
                room_chars=limits.room,
                protocol=run.protocol,
                profile=run.profile,
                view=view(run),
                prefetch=True,
            )

        messages = await run.policies.at_start(view(run), run_calls)
        if not messages:
            return
        run.history.extend(messages)
        if run.on_step is not None:
            await run.on_step(0, messages)
        await _emit_step(run, 0, prefetch=True)

    async def _tool_round(self, run: RunState, read: ReadCalls) -> Round:
        step = run.step + 1
        done = Round([text_result_turn("\n".join(read.corrections))], exhausted=False)
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
                view=view(run),
            )
            run.tools_ran = True
        if done.paused:
            return done  # nothing ran: the reply does not enter the history
        messages = done.messages
        # A reply and its results enter the history together, or not at all.
        run.history.extend([read.reply, *messages])
        if run.on_step is not None:  # stored before the next request: a resume starts here
            await run.on_step(step, [read.reply, *messages])
        run.step = run.report.steps = step
        await _emit_step(run, step)
        return done


def _decision_of(record: Mapping[str, Any]) -> Any:
    """A decision of the report's ``approvals`` as :func:`decision_from` reads it."""
    value = {"decision": record["decision"], "by": record["by"]}
    if record["decision"] == "edit":
        value["args"] = record["args"]
    if record["decision"] == "reject":
        value["reason"] = record["reason"]
    return decision_from(value)


def _resume(run: RunState, steps: Sequence[tuple[int, Sequence[BaseMessage]]]) -> None:
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


async def _emit_step(run: RunState, step: int, *, prefetch: bool = False) -> None:
    """The ``leanloop.step`` event: each call of the step with what became of its result."""
    calls = [c for c in run.report.tool_calls if c.step == step]
    payload = {
        "step": step,
        "prefetch": prefetch,
        "elapsed_s": run.elapsed(),
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
