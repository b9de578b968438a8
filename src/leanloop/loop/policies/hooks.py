"""The typed hooks a policy of the loop answers, and what it may read (ADR 0034).

A policy is one rule of the run that is not the order of things: send a cut stream again,
fall back to text mode, start the synthesis flow, ask for the answer after repeats, read
the files the request names first, read a file on past its first page, answer a repeated
call from memory. The driver owns the run's state and asks its policies at fixed points,
in order; each hook has its own argument and return types (ADR 0028 rejected one general
hook as ``Any`` in, ``Any`` out):

========================  =====================================  ==========================
hook                      reads                                  gives back
========================  =====================================  ==========================
``at_start``              the view, a runner of step-0 calls     the opening step's messages
``shape_request``         the view, the request's shape          the shape (folded)
``before_request``        the view, the prepared request         add a turn, end, or nothing
``after_error``           the view, the error, the attempt       a recovery, or nothing
``before_tool_call``      the call about to run (with the view)  run, edit, answer, or pause
``after_tool_call``       the call, its outcome, a tool caller   the outcome (folded)
``after_tool_result``     the call, its result (pruned, capped)  nothing (a policy notes it)
``end_round``             the round of calls done                the round (folded)
``after_round``           the view, the round done               the final request, or nothing
``at_end``                the view, the stop reason              the stop reason (folded)
``before_answer``         the view, the answer                   one request alone, or nothing
``answer_asked``          the view, the answer, the reply        the answer to give
========================  =====================================  ==========================

A policy never holds the run's state: it reads a :class:`StepView` and answers with a
value from a closed set; the driver applies it. What a policy keeps from one step to the
next (whether the synthesis flow started) lives on the policy object of that run, which
its frozen config makes fresh for each run (:meth:`PolicyConfig.start`).

The tool-call hooks run in the tool round, for each call of a reply (and of the opening
step): ``before_tool_call`` for every call of the reply in the order of the calls, before
any of them runs (a call one policy claims is known when the next call is asked, so two
identical calls in one reply are told apart, although the calls then run concurrently);
``after_tool_call`` once a call ran, before pruning; ``after_tool_result`` once its result
is what the model will read (pruned, capped, recorded); ``end_round`` once the round of
the model's calls is done, before the driver asks ``after_round``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal, Protocol, TypeVar

from langchain_core.messages import BaseMessage, ToolCall
from langchain_core.runnables import RunnableConfig

from leanloop.budget.plan import ContextPlan
from leanloop.budget.run import Prepared
from leanloop.loop.profiles import PromptProfile
from leanloop.protocol import Mode
from leanloop.pruning import PruneRequest
from leanloop.report import RunReport, StopReason, ToolCallRecord
from leanloop.tools.registry import ToolOutcome

__all__ = [
    "AddTurn",
    "AnswerCall",
    "AskAlone",
    "Attempt",
    "CallDecision",
    "CallRunner",
    "CallView",
    "EditCall",
    "FinalRequest",
    "PauseCall",
    "PausedCall",
    "PendingCall",
    "Policies",
    "Policy",
    "PolicyConfig",
    "Recovery",
    "RequestKind",
    "RequestShape",
    "Resend",
    "Round",
    "RunCall",
    "StepView",
    "SwitchToText",
    "ToolCaller",
    "ToolResult",
    "error_line",
]


@dataclass(frozen=True)
class Round:
    """One round of tool calls, done: what goes into the history and what the guard says."""

    messages: list[BaseMessage]
    """The messages carrying the results back, in the order of the calls."""
    exhausted: bool = False
    """The repeat guard has seen enough repeats in a row: the loop stops asking for tools
    (set at :meth:`Policy.end_round`)."""
    repeated: int = 0
    """How many of the round's calls a policy answered as repeats of earlier calls
    (:attr:`AnswerCall.repeat_of`)."""
    calls: int = 0
    """How many calls the round had, those over ``max_parallel_tools`` included."""
    paused: tuple[PausedCall, ...] = ()
    """The calls a person must decide on first; when any, no call of the reply ran and
    :attr:`messages` is empty (the run ends paused)."""


RequestKind = Literal["step", "final"]
"""A request of a step (it offers tools), or the run's final, tool-less request."""

CallRunner = Callable[[Sequence[ToolCall]], Awaitable[Round]]
"""Runs calls as the opening step (step 0, before the first request) and gives the round."""

ToolCaller = Callable[[str, dict[str, object]], Awaitable[ToolOutcome]]
"""Runs one more call of a tool by name, as the round runs its calls (time limit, the
request's paths), and gives its outcome."""


def _names_nothing() -> list[str]:
    return []


def error_line(exc: BaseException) -> str:
    """``exc`` on one line, its type first, as the loop's logs, events and errors show it."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]


@dataclass(frozen=True)
class StepView:
    """What a policy may read of a run at a hook; never the run's state itself.

    Attributes:
        step: The steps completed so far; the request at hand belongs to ``step + 1``.
        history: The run's conversation as it stands (read only).
        question: The user's request (the last human turn of the opening).
        profile: The run's prompting profile (its wording for the model's family).
        mode: The tool protocol's mode: ``native`` calls or calls written as text.
        tools_ran: Whether a round of the model's calls ran in this run.
        report: The run's report: its records to read, its event lines to add to.
        config: The run's LangChain config (for the events a policy emits).
        plan: How the budget shares out the window now (it may shrink after a refusal).
        named: The workspace paths the request names, looked up on first use.
        resumed_reads: Results with data from steps an earlier process of the turn made.
    """

    step: int
    history: Sequence[BaseMessage]
    question: str
    profile: PromptProfile
    mode: Mode
    tools_ran: bool
    report: RunReport
    config: RunnableConfig
    plan: ContextPlan
    named: Callable[[], list[str]] = _names_nothing
    resumed_reads: Sequence[BaseMessage] = ()

    def event(self, line: str) -> None:
        """Add the report's event line ``line`` for the request at hand."""
        self.report.events.append(f"step {self.step + 1}: {line}")


@dataclass(frozen=True)
class CallView:
    """What a policy may read of one tool call that ran (the round's, not the run's).

    Attributes:
        args: The tool's own arguments as the model gave them (meta-arguments split off).
        prunable: Whether the pruning pass may prune this call's result (its tool is one
            of ``pruning_tools`` and the call did not opt out).
        max_chars: The registry's cap on one result, in characters.
    """

    args: Mapping[str, object]
    prunable: bool
    max_chars: int


@dataclass(frozen=True)
class PendingCall:
    """What a policy may read of one tool call about to run (:meth:`Policy.before_tool_call`).

    Attributes:
        name: The tool's name as the model wrote it.
        args: The tool's own arguments (the meta-arguments split off).
        meta: The meta-arguments as the model gave them (``output_prune``,
            ``output_prune_context``); ``None`` when pruning is off, where a stray
            meta-argument stays in ``args`` for the registry to drop.
        call_id: The call's id (``None`` when the model gave none).
        step: The step the call belongs to (0: the opening step, before any request).
        run: The run as it stood when the round began (its question, profile, report).
        notes: Lines for the call's record, from the policies asked before (:class:`RunCall`,
            :class:`EditCall`), in order.
    """

    name: str
    args: Mapping[str, object]
    meta: PruneRequest | None
    call_id: str | None
    step: int
    run: StepView
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunCall:
    """Before a call: run it as it stands (the policies after this one are asked too).

    Attributes:
        note: A line for the call's record ("": none), such as why a call runs again.
    """

    note: str = ""


@dataclass(frozen=True)
class EditCall:
    """Before a call: run it with other arguments; the policies after this one are asked
    about the edited call, and it is the edited call that runs.

    Attributes:
        args: The tool's own arguments to run it with; ``None``: as they are.
        meta: The meta-arguments to run it with (``PruneRequest(prune=False)``: not
            pruned); ``None``: as they are.
        note: A line for the call's record ("": none).
    """

    args: Mapping[str, object] | None = None
    meta: PruneRequest | None = None
    note: str = ""


@dataclass(frozen=True)
class AnswerCall:
    """Before a call: do not run it; ``content`` is the tool message the model gets.

    No policy after this one is asked, and the call is not run, pruned or capped. Its
    record says it was not run (``chars_raw`` 0) and carries ``note``; its result is no
    data (a later process of the turn does not count it as read).

    Attributes:
        content: The result the model reads instead of the tool's.
        note: The line on the call's record that says why it did not run.
        repeat_of: The step of the earlier identical call when ``content`` is a repeat's
            reminder: the record is marked ``repeated`` and the report and the round
            count it as a repeat (``None``: any other answer).
    """

    content: str
    note: str
    repeat_of: int | None = None


@dataclass(frozen=True)
class PauseCall:
    """Before a call: the run pauses before it, until a person decides.

    The approval of tool calls gives it (:mod:`~leanloop.loop.policies.approval`). No
    call of the reply runs: the round ends paused (:attr:`Round.paused`) and so does the
    run (stop reason ``paused``), which a later run goes on from with the decisions.

    Attributes:
        reason: What the person is asked to decide.
        preview: What the call would do, when cheap to tell (an edit's diff); ``None``.
    """

    reason: str
    preview: str | None = None


@dataclass(frozen=True)
class PausedCall:
    """A call a person must decide on before its reply's calls run (:class:`PauseCall`).

    Attributes:
        call_id: The call's id (``None`` when the model gave none).
        tool: The tool's name.
        args: The tool's own arguments.
        reason: What the person is asked to decide.
        preview: What the call would do (an edit's diff), or ``None``.
    """

    call_id: str | None
    tool: str
    args: Mapping[str, object]
    reason: str
    preview: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The call as the report's ``pending_calls`` lists it."""
        return {
            "id": self.call_id,
            "tool": self.tool,
            "args": dict(self.args),
            "reason": self.reason,
            "preview": self.preview,
        }


CallDecision = RunCall | EditCall | AnswerCall | PauseCall | None
"""What a policy makes of a call about to run. ``None`` and :class:`RunCall`: run it;
:class:`EditCall`: run it edited. Those three let the next policy be asked. The first
:class:`AnswerCall` or :class:`PauseCall` decides: no policy after it is asked.

An approval of tool calls fits these values: approve is :class:`RunCall`, edit the
arguments is :class:`EditCall`, reject with a reason is :class:`AnswerCall` (the reason is
the model's tool message), wait for a person is :class:`PauseCall`."""


@dataclass(frozen=True)
class ToolResult:
    """One call's result as the model will read it (:meth:`Policy.after_tool_result`).

    Attributes:
        text: The result after the pruning pass and the caps, escaped: the tool message.
        ok: Whether the tool ran and did not fail.
        record: The report's record of the call; its
            :attr:`~leanloop.report.ToolCallRecord.fate` changes as later requests trim
            the result, so a policy that keeps the record reads the fate as it is then.
    """

    text: str
    ok: bool
    record: ToolCallRecord


@dataclass(frozen=True)
class RequestShape:
    """How a request offers tools.

    Attributes:
        tools: Whether the request offers tools at all (the final request does not).
        tool_list: In text mode, whether the system prompt lists the tools.
    """

    tools: bool
    tool_list: bool


@dataclass(frozen=True)
class AddTurn:
    """Before a request: add ``message`` to the history and prepare the request again.

    Attributes:
        message: The turn to add (the synthesis flow's instruction).
        otherwise: The stop reason of the run when the new request does not fit the window.
    """

    message: BaseMessage
    otherwise: StopReason


@dataclass(frozen=True)
class FinalRequest:
    """End the run with one request that offers no tools.

    Attributes:
        reason: The stop reason when the request answers.
        prompt: The request's instruction; ``None``: the profile's final-answer prompt.
        unanswered: The stop reason when the reply holds no answer (else ``reason``).
        note: Opens the report's event line that says how the request went.
    """

    reason: StopReason
    prompt: str | None = None
    unanswered: StopReason | None = None
    note: str = ""


@dataclass(frozen=True)
class Attempt:
    """A request that failed, as a recovery policy sees it.

    Attributes:
        kind: A step's request or the final one.
        recoveries: The names of the policies that recovered this request so far, one
            entry per recovery, in order (a policy that recovers once looks itself up).
    """

    kind: RequestKind
    recoveries: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resend:
    """Send the same request again, as it was."""


@dataclass(frozen=True)
class SwitchToText:
    """The server refused native tools: go on in text mode, the request prepared again."""


Recovery = Resend | SwitchToText
"""What a policy makes of a failed request; the driver applies it."""


@dataclass(frozen=True)
class AskAlone:
    """Before the answer stands: one more request, the prompt alone (no history, no
    tools), whose reply goes back to the policy that asked (:meth:`Policy.answer_asked`).

    Attributes:
        prompt: The request's one message.
    """

    prompt: str


class Policy:
    """One rule of the run, asked at fixed points; each hook's default leaves things be.

    A subclass overrides only the hooks it needs. The driver makes one policy object per
    run (:meth:`PolicyConfig.start`), so the object's attributes are the policy's state
    for that run.
    """

    name: ClassVar[str] = "policy"
    """What the report and :attr:`Attempt.recoveries` call the policy."""

    async def at_start(self, view: StepView, run_calls: CallRunner) -> list[BaseMessage]:
        """Before the first request: the opening step's reply and results, or none.

        Args:
            view: The run before its first request.
            run_calls: Runs calls as step 0 (the tool round and its records; the policies
                are asked about each call, and the round is no round of the model's).

        Returns:
            The messages of step 0 in order (a reply, then its results); ``[]`` for none.
        """
        del view, run_calls
        return []

    def shape_request(self, view: StepView, shape: RequestShape) -> RequestShape:
        """The shape of the request about to be prepared (each policy in turn)."""
        del view
        return shape

    async def before_request(
        self, view: StepView, prepared: Prepared
    ) -> AddTurn | FinalRequest | None:
        """Before a step's request is sent: add a turn, end the run, or ``None`` (send)."""
        del view, prepared
        return None

    async def after_error(
        self, view: StepView, error: Exception, attempt: Attempt
    ) -> Recovery | None:
        """A request failed: how to recover, or ``None`` when the error is not this
        policy's (the next is asked; when none recovers, the run fails)."""
        del view, error, attempt
        return None

    async def before_tool_call(self, call: PendingCall) -> CallDecision:
        """Before a call of a round runs: run it, edit it, answer it instead, or pause.

        Asked for every call of a reply in the order of the calls, before any of them
        runs, and for the opening step's calls too (see :data:`CallDecision`).

        Args:
            call: The call as it stands (edited by a policy asked before this one, if any).
        """
        del call
        return None

    async def after_tool_call(
        self, call: CallView, outcome: ToolOutcome, call_tool: ToolCaller
    ) -> ToolOutcome:
        """After one call of a round ran, before pruning: its outcome, or another.

        Args:
            call: The call as the round sees it.
            outcome: What the tool gave (a policy before this one may have changed it).
            call_tool: Runs one more call (the pages after a first one).
        """
        del call, call_tool
        return outcome

    def after_tool_result(self, call: PendingCall, result: ToolResult) -> None:
        """A call ran and its result is what the model will read (each policy in turn).

        Not asked for a call a policy answered (:class:`AnswerCall`).

        Args:
            call: The call as the model made it, before any policy edited it (what a
                later call of the model's repeats).
            result: Its result, pruned, capped and recorded.
        """
        del call, result

    def end_round(self, done: Round) -> Round:
        """A round of the model's calls is done (each policy in turn; the opening step's
        round is not asked): the round, or the same with :attr:`Round.exhausted` set."""
        return done

    def after_round(self, view: StepView, done: Round) -> FinalRequest | None:
        """After a step's round of calls entered the history: end the run, or ``None``."""
        del view, done
        return None

    def at_end(self, view: StepView, reason: StopReason) -> StopReason:
        """The stop reason of a run ending with the model's reply (each policy in turn)."""
        del view
        return reason

    def before_answer(self, view: StepView, answer: str) -> AskAlone | None:
        """The run is about to end with ``answer`` (judged an answer): ask once more, or
        ``None`` (the answer stands)."""
        del view, answer
        return None

    def answer_asked(self, view: StepView, answer: str, reply: str | None) -> str:
        """The reply to this policy's :class:`AskAlone` (``None``: the request failed):
        the answer to give, ``answer`` or another."""
        del view, reply
        return answer


_HOOKS = (
    "at_start",
    "shape_request",
    "before_request",
    "after_error",
    "before_tool_call",
    "after_tool_call",
    "after_tool_result",
    "end_round",
    "after_round",
    "at_end",
    "before_answer",
)
"""The hooks of :class:`Policy`, in the order of a run (``answer_asked`` goes only to
the policy whose ``before_answer`` asked)."""

P_co = TypeVar("P_co", bound=Policy, covariant=True)


class PolicyConfig(Protocol[P_co]):
    """A policy's frozen configuration, which makes the policy object of each run."""

    def start(self) -> P_co:
        """A fresh policy object for one run."""
        ...


@dataclass(frozen=True)
class Policies:
    """A run's policies, in the order the driver asks them.

    The first answer wins where a hook decides (``at_start``, ``before_request``,
    ``after_error``, ``after_round``; ``before_tool_call``: the first answer that does not
    let the call run); each policy in turn where a hook shapes a value (``shape_request``,
    ``after_tool_call``, ``end_round``, ``at_end``) or is told something
    (``after_tool_result``).
    """

    members: tuple[Policy, ...] = field(default=())
    _asked: dict[str, tuple[Policy, ...]] = field(init=False, repr=False, compare=False)
    """Per hook, the members that override it: a hook no policy answers costs a run
    nothing, however many policies it has (the tool-call hook runs for every call)."""

    def __post_init__(self) -> None:
        asked = {
            hook: tuple(
                p for p in self.members if getattr(type(p), hook) is not getattr(Policy, hook)
            )
            for hook in _HOOKS
        }
        object.__setattr__(self, "_asked", asked)

    async def at_start(self, view: StepView, run_calls: CallRunner) -> list[BaseMessage]:
        """The first opening step a policy makes (see :meth:`Policy.at_start`)."""
        for policy in self._asked["at_start"]:
            if messages := await policy.at_start(view, run_calls):
                return messages
        return []

    def shape_request(self, view: StepView, shape: RequestShape) -> RequestShape:
        """The shape after every policy had its say (see :meth:`Policy.shape_request`)."""
        for policy in self._asked["shape_request"]:
            shape = policy.shape_request(view, shape)
        return shape

    async def before_request(
        self, view: StepView, prepared: Prepared
    ) -> AddTurn | FinalRequest | None:
        """The first policy's decision before a request (see :meth:`Policy.before_request`)."""
        for policy in self._asked["before_request"]:
            if (decision := await policy.before_request(view, prepared)) is not None:
                return decision
        return None

    async def after_error(
        self, view: StepView, error: Exception, attempt: Attempt
    ) -> tuple[str, Recovery] | None:
        """The first recovery, with the name of the policy that made it."""
        for policy in self._asked["after_error"]:
            if (recovery := await policy.after_error(view, error, attempt)) is not None:
                return policy.name, recovery
        return None

    async def before_tool_call(
        self, call: PendingCall
    ) -> tuple[PendingCall, AnswerCall | PauseCall | None]:
        """The call as the policies let it run, and the answer of the first policy that
        did not let it run (``None``: it runs); see :data:`CallDecision`."""
        for policy in self._asked["before_tool_call"]:
            decision = await policy.before_tool_call(call)
            if isinstance(decision, AnswerCall | PauseCall):
                return call, decision
            if isinstance(decision, EditCall):
                args = call.args if decision.args is None else decision.args
                meta = call.meta if decision.meta is None else decision.meta
                call = replace(call, args=args, meta=meta)
            if decision is not None and decision.note:
                call = replace(call, notes=(*call.notes, decision.note))
        return call, None

    async def after_tool_call(
        self, call: CallView, outcome: ToolOutcome, call_tool: ToolCaller
    ) -> ToolOutcome:
        """The outcome after every policy had its say (see :meth:`Policy.after_tool_call`)."""
        for policy in self._asked["after_tool_call"]:
            outcome = await policy.after_tool_call(call, outcome, call_tool)
        return outcome

    def after_tool_result(self, call: PendingCall, result: ToolResult) -> None:
        """Tell every policy a call's result (see :meth:`Policy.after_tool_result`)."""
        for policy in self._asked["after_tool_result"]:
            policy.after_tool_result(call, result)

    def end_round(self, done: Round) -> Round:
        """The round after every policy had its say (see :meth:`Policy.end_round`)."""
        for policy in self._asked["end_round"]:
            done = policy.end_round(done)
        return done

    def after_round(self, view: StepView, done: Round) -> FinalRequest | None:
        """The first policy's ending after a round (see :meth:`Policy.after_round`)."""
        for policy in self._asked["after_round"]:
            if (final := policy.after_round(view, done)) is not None:
                return final
        return None

    def at_end(self, view: StepView, reason: StopReason) -> StopReason:
        """The stop reason after every policy had its say (see :meth:`Policy.at_end`)."""
        for policy in self._asked["at_end"]:
            reason = policy.at_end(view, reason)
        return reason

    def before_answer(self, view: StepView, answer: str) -> tuple[Policy, AskAlone] | None:
        """The first policy that asks once more before the answer stands, and its request
        (see :meth:`Policy.before_answer`)."""
        for policy in self._asked["before_answer"]:
            if (ask := policy.before_answer(view, answer)) is not None:
                return policy, ask
        return None
