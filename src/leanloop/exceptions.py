"""The exceptions leanloop raises, and the signals it reads.

Two trees, drawn below with every class that derives from their roots anywhere in
``leanloop`` (``tests/test_exceptions.py`` checks the drawing against the classes; a
second base a class keeps, so that ``except ValueError`` still catches it, is in brackets):

- :class:`LeanloopError`: something went wrong, and leanloop says what. A failure of a run
  (it ended without a usable answer) is an :class:`AgentRunError`; a problem found before
  any run (a configuration file, an argument, a session that cannot be used) is not.
- :class:`LeanloopSignal`: no failure, a request leanloop acts on (pydantic-ai's
  ``ModelRetry`` is one): a tool raises :class:`TransientToolError` to be called again.

::

    LeanloopError
    ├── SpecError                   a configuration file is wrong (all problems, located)
    ├── UsageError                  the Python API was used wrongly: the caller's mistake
    │   ├── InvalidArgument [ValueError]   an argument's value cannot be used
    │   │   ├── ImportPathError              an import path names nothing importable
    │   │   └── GlobError                    a glob no file name can match (tools)
    │   └── InvalidArgumentType [TypeError]  an argument has a type it cannot have
    ├── ModelError                  a chat model failed: a request refused, a reply unusable
    │   ├── ContextOverflowError      a refusal for size (built by ``Overflow.to_error``)
    │   ├── PruneFormatError [ValueError]  a pruning reply has no OUTPUT block (pruning)
    │   └── CutStreamError [RuntimeError]  a streamed reply stopped before its end (loop)
    ├── AgentRunError               a run ended without a usable answer
    │   ├── RunFailed [ModelError]    a request failed mid-run; carries the partial report
    │   ├── NoAnswer                  ``no_answer: raise``: the run ended without an answer
    │   └── StructuredOutputError     the answer could not be typed as its schema
    ├── ToolError                   a tool could not be built or loaded (never raised mid-run)
    ├── LocalModelError             the embedded llama.cpp server could not be set up or run
    ├── SessionError                a session (a ``thread_id``) cannot be used as asked
    │   ├── SessionBusy               another live process is running a turn of it
    │   ├── SessionAgentMismatch      it belongs to another agent (ADR 0024)
    │   └── UnfinishedTurn            its last turn did not finish: resume it first
    │       └── ApprovalPending       it paused for approval: decide the calls first
    ├── ServeError                  ``leanloop serve`` answers a request with an error status
    └── ServeSetupError             ``leanloop serve`` cannot start as asked
    LeanloopSignal
    └── TransientToolError          raised *by a tool*: call me again (``retries``)

Where each lives when not here: :class:`ImportPathError` in ``leanloop._imports``,
:class:`GlobError` in ``leanloop.tools._paths``, :class:`PruneFormatError` in
``leanloop.pruning.markers``, :class:`CutStreamError` in ``leanloop.loop.driver``, the two
serve errors in ``leanloop.serve.errors``. They stay beside the code that raises them, and
out of ``leanloop``'s exports: none reaches a caller of ``leanloop``'s API (each is turned
into a located issue, a tool result, the run's :class:`RunFailed` or an HTTP reply).

Every leaf is raised somewhere, but one: no run raises :class:`ContextOverflowError`. A
request refused for its size is shrunk and sent again, and when that fails too the run
ends with ``budget_exhausted`` and an answer from what it read (ADR 0005): a run that
overflows answers, it does not fail. The class is what ``Overflow.to_error()`` builds and
what a model wrapper may raise for :func:`leanloop.budget.parse_overflow` to read.

:class:`SpecIssue` is no error: it is one located problem a :class:`SpecError` carries.
A tool that fails *during* a run never raises: its failure becomes a one-line
message to the model (see ``leanloop.tools.registry``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain_core.messages import AIMessage, BaseMessage

    from leanloop.report import RunReport
    from leanloop.sessions.identity import AgentIdentity

__all__ = [
    "AgentRunError",
    "ApprovalPending",
    "ContextOverflowError",
    "InvalidArgument",
    "InvalidArgumentType",
    "LeanloopError",
    "LeanloopSignal",
    "LocalModelError",
    "ModelError",
    "NoAnswer",
    "RunFailed",
    "SessionAgentMismatch",
    "SessionBusy",
    "SessionError",
    "SpecError",
    "SpecIssue",
    "StructuredOutputError",
    "ToolError",
    "TransientToolError",
    "UnfinishedTurn",
    "UsageError",
]


class LeanloopError(Exception):
    """Base class of every error leanloop raises on purpose."""


class LeanloopSignal(Exception):
    """Base class of the exceptions leanloop reads as a request, never as a failure.

    Apart from :class:`LeanloopError` so that ``except LeanloopError`` (the CLI's, the
    server's, a user's) never swallows a signal meant for leanloop's own loop.
    """


@dataclass(frozen=True, slots=True)
class SpecIssue:
    """One located problem in a configuration file.

    Attributes:
        source: The file name (or ``<string>``) the problem is in.
        line: 1-based line, or ``None`` when the position is unknown.
        column: 1-based column, or ``None`` when the position is unknown.
        path: The key path, dotted (``agents.reader.max_rounds``); empty for the document.
        message: What is wrong, in one line.
    """

    source: str
    line: int | None
    column: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class SpecError(LeanloopError):
    """A configuration file has one or more problems; ``issues`` lists them all."""

    def __init__(self, issues: list[SpecIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))


class UsageError(LeanloopError):
    """leanloop's Python API was used wrongly: a mistake in the caller's code.

    A mistake in an agents file is a :class:`SpecError` instead, located in the file.
    """


class InvalidArgument(UsageError, ValueError):
    """An argument's value cannot be used (a negative count, a share outside (0, 1]).

    Also a :class:`ValueError`, as Python's convention asks, so code that caught the
    ``ValueError`` leanloop raised before this class existed still catches it.
    """


class InvalidArgumentType(UsageError, TypeError):
    """An argument has a type leanloop does not take (an agent's input, most often).

    Also a :class:`TypeError`, as Python's convention asks.
    """


class ModelError(LeanloopError):
    """A chat model failed: a request was refused, or its reply cannot be used."""


class ContextOverflowError(ModelError):
    """The provider refused a request because it was larger than its context window.

    Attributes:
        prompt_tokens: The prompt size the provider reported, when it said.
        window: The context window the provider reported, when it said.
    """

    def __init__(
        self, message: str, *, prompt_tokens: int | None = None, window: int | None = None
    ) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.window = window


class AgentRunError(LeanloopError):
    """A run ended without a usable answer; catch this for every way a run can fail.

    A refusal to start one (a bad spec, a busy session) is not a run's failure and is not
    one of these.
    """


class RunFailed(AgentRunError, ModelError):
    """A run could not go on: a request to the model failed for a reason other than size.

    Also a :class:`ModelError`: that was its only base before :class:`AgentRunError`, and
    ``leanloop serve`` and callers still tell a model's failure by it.

    Nothing half-done stays in the history. ``report`` holds what the run did up to
    the failure (requests, tool calls, the context events), so a caller can still show
    or store it.

    Attributes:
        report: The partial run report (``stop_reason`` ``failed``, ``error`` set).
        messages: The conversation as it stood before the failed request.
    """

    def __init__(
        self, message: str, *, report: RunReport, messages: Sequence[BaseMessage] = ()
    ) -> None:
        super().__init__(message)
        self.report = report
        self.messages = list(messages)


class NoAnswer(AgentRunError):
    """A run ended without the model's answer, and the agent says ``no_answer: raise``.

    Raised only by agents that ask for it (the default, ``no_answer: return``, returns
    the ending's words as the message, with ``stop_reason`` in its report). It is a run
    that stopped for a limit (``max_rounds``, ``budget_exhausted``, ``repeated_calls``)
    or whose model wrote no answer (``no_answer``: the question or the loop's own
    instruction written back).

    Attributes:
        stop_reason: The run's stop reason.
        message: The message the run would have returned: the ending's words (what
            stopped the run, what was read) or the model's last reply; its
            ``response_metadata["leanloop"]`` is the whole report.
        report: The run report (``message``'s), as a dict.
    """

    def __init__(self, message: AIMessage) -> None:
        report = dict(message.response_metadata.get("leanloop", {}))
        self.stop_reason = str(report.get("stop_reason", ""))
        self.message = message
        self.report = report
        super().__init__(f"the run ended by {self.stop_reason}: {message.text}")


class ToolError(LeanloopError):
    """A tool could not be built or loaded from its configuration."""


class TransientToolError(LeanloopSignal):
    """Raised by a tool for a failure that may pass if the call is made again.

    A tool with ``retries: N`` in the agents file is called again, with backoff, up to
    ``N`` times after this error (any other error is not retried); the report counts the
    retries. When the retries are spent, the last error is the result, as for any failure.
    """


class LocalModelError(LeanloopError):
    """The embedded llama.cpp server could not be set up, started or stopped."""


class SessionError(LeanloopError):
    """A session (a conversation stored under a ``thread_id``) cannot be used as asked."""


class SessionBusy(SessionError):
    """Another live process is running a turn of the same session."""


class SessionAgentMismatch(SessionError):
    """The session belongs to another agent: it cannot be continued or resumed by this one.

    A stored thread records the agent that first wrote it (ADR 0024).

    Attributes:
        thread_id: The session.
        owner: The agent the session belongs to.
        asking: The agent that asked for a turn, or to resume one.
    """

    def __init__(
        self, message: str, *, thread_id: str, owner: AgentIdentity, asking: AgentIdentity
    ) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.owner = owner
        self.asking = asking


class UnfinishedTurn(SessionError):
    """The session's last turn did not finish (its process died): resume it first.

    Attributes:
        turn: The unfinished turn's number (1-based).
        steps: How many of its steps were stored before the process died.
    """

    def __init__(self, message: str, *, turn: int, steps: int) -> None:
        super().__init__(message)
        self.turn = turn
        self.steps = steps


class ApprovalPending(UnfinishedTurn):
    """The session's last turn paused for approval of tool calls: decide them first.

    A new question would leave the paused calls behind for good, so it is refused until
    the turn is resumed with the decisions (``LLMAgent.aresume``, ``leanloop run --resume
    --approve …``, or the ``leanloop.approvals`` of a ``serve`` request).

    Attributes:
        pending: The ids of the calls that wait, in the reply's order.
    """

    def __init__(self, message: str, *, turn: int, steps: int, pending: list[str]) -> None:
        super().__init__(message, turn=turn, steps=steps)
        self.pending = pending


class StructuredOutputError(AgentRunError):
    """The answer could not be turned into the requested schema, even after a repair.

    Attributes:
        answer: The run's final message (its text answer, the report in its metadata).
        problem: What the last attempt got wrong, one line.
    """

    def __init__(self, message: str, *, answer: Any, problem: str) -> None:
        super().__init__(message)
        self.answer = answer
        self.problem = problem
