"""The exceptions leanloop raises.

Every error leanloop raises on purpose derives from :class:`LeanloopError`; the tree
below names every class of this module (``tests/test_exceptions.py`` checks it against
the classes), and ``leanloop`` exports each of them::

    LeanloopError
    ├── SpecError                a configuration file is wrong (all problems, located)
    ├── ModelError               a request to a chat model failed after LangChain's retries
    │   ├── ContextOverflowError   a provider's refusal for size (``Overflow.to_error``)
    │   └── RunFailed              a run could not go on; carries the partial report
    ├── ToolError                a tool could not be built or loaded (never raised mid-run)
    ├── TransientToolError       raised *by a tool* for a failure worth retrying (``retries``)
    ├── LocalModelError          the embedded llama.cpp server could not be set up or run
    ├── SessionError             a session (a ``thread_id``) cannot be used as asked
    │   ├── SessionBusy            another live process is running a turn of it
    │   ├── SessionAgentMismatch   it belongs to another agent (ADR 0024)
    │   └── UnfinishedTurn         its last turn did not finish: resume it first
    └── StructuredOutputError    the answer could not be typed as its schema, even repaired

:class:`SpecIssue` is no error: it is one located problem a :class:`SpecError` carries.
A tool that fails *during* a run never raises: its failure becomes a one-line
message to the model (see ``leanloop.tools.registry``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain_core.messages import BaseMessage

    from leanloop.report import RunReport
    from leanloop.sessions.identity import AgentIdentity

__all__ = [
    "ContextOverflowError",
    "LeanloopError",
    "LocalModelError",
    "ModelError",
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
]


class LeanloopError(Exception):
    """Base class of every error leanloop raises on purpose."""


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


class ModelError(LeanloopError):
    """A request to the chat model failed; the run's history was rolled back."""


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


class RunFailed(ModelError):
    """A run could not go on: a request to the model failed for a reason other than size.

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


class ToolError(LeanloopError):
    """A tool could not be built or loaded from its configuration."""


class TransientToolError(LeanloopError):
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


class StructuredOutputError(LeanloopError):
    """The answer could not be turned into the requested schema, even after a repair.

    Attributes:
        answer: The run's final message (its text answer, the report in its metadata).
        problem: What the last attempt got wrong, one line.
    """

    def __init__(self, message: str, *, answer: Any, problem: str) -> None:
        super().__init__(message)
        self.answer = answer
        self.problem = problem
