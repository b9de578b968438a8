"""Run tool calls so that no failure ever ends a run: failures are messages.

:class:`ToolRegistry` holds an agent's tools and runs one call at a time. Whatever the
model sends and whatever the tool does, :meth:`ToolRegistry.run` returns a
:class:`ToolOutcome` whose ``text`` is what the model sees next:

- an unknown tool name: repaired when the intent is clear (``read_config/app.yaml`` runs
  ``read_file(path="config/app.yaml")``, see :mod:`leanloop.tools.repair`) and the
  result says so; otherwise one line listing the tools there are, with their arguments;
- argument names the tool does not take: read as the parameter they clearly stand for
  (``file`` as ``path``), else dropped, and the result says so;
- values of the wrong type with one sensible reading (``"20"``): coerced, and said so;
- missing or mistyped arguments: one line saying what to send;
- a tool that raises: ``error: <message>``; a ``None`` result: ``""``;
- a call that takes longer than its ``time_limit`` (the tool's own ``timeout`` when its
  :class:`ToolPolicy` sets one): ``error: <tool> timed out after N s; not retried`` (an
  async tool is cancelled; a sync one is left to finish on its own);
- an async tool that blocks the event loop (``time.sleep`` in an ``async def``) cannot be
  stopped at its limit, since the loop's timer waits for the loop: the watchdog
  (:mod:`._watchdog`) sees it hold the loop, and the result says how long it really ran
  (``error: <tool> timed out after 20.5 s (its limit is 3 s): it blocked the event loop,
  …``) and a note says where it was stuck; a result it returns all the same is kept, with
  the note. A call held up by something else on the loop says that instead;
- a tool that raises :class:`~leanloop.exceptions.TransientToolError` is called again,
  with exponential backoff (``tenacity``), up to its policy's ``retries`` times; the
  outcome counts the retries;
- what a tool tells besides its result (a path it read instead, the report of an
  ``agent:NAME`` tool's sub-run; see :mod:`._notes`) goes to the outcome's ``notes`` and
  ``sub_report``;
- a list of LangChain content blocks (what MCP tools return): the text blocks as text,
  an image, file or other block as one ``[image: image/png, 1,234 bytes]`` line;
- any other result: text (JSON for lists, dicts and numbers); a result that cannot
  become text (``10**5000``, a ``__str__`` that raises) is an ``error:`` line too;
- every text: cleaned (:func:`clean_text`: no lone surrogates or control characters, which
  would end a request to an HTTP model) and capped (``leanloop.textcap.cap_text``) on a
  line boundary, with a note.

Sync-only tools (a ``@tool`` on a plain function, a ``BaseTool`` with only ``_run``) run
in a daemon worker thread (:mod:`._worker`), never in the loop's default executor, so a
hung one cannot keep the process from exiting.

Only ``asyncio.CancelledError`` (and other ``BaseException``\\ s) pass through.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import CodeType
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel
from pydantic_core import to_jsonable_python
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from leanloop.exceptions import InvalidArgument, ToolError, TransientToolError
from leanloop.textcap import cap_text
from leanloop.tools._arguments import (
    ArgumentCheck,
    check_arguments,
    describe_parameters,
    parameter_names,
)
from leanloop.tools._journal import WorkspaceRun
from leanloop.tools._lean import LeanTool, lean_tool
from leanloop.tools._notes import CallContext, Told, call_config
from leanloop.tools._pertool import per_tool
from leanloop.tools._watchdog import Overrun, tool_codes, watch
from leanloop.tools._worker import blocks_in_executor, in_worker
from leanloop.tools.readers import fill_reader_argument
from leanloop.tools.repair import close_tool_names, format_call, repair_call

if TYPE_CHECKING:
    from leanloop.tools.mcp import McpSessions

__all__ = ["DEFAULT_RESULT_MAX_CHARS", "ToolOutcome", "ToolPolicy", "ToolRegistry", "clean_text"]

_log = logging.getLogger(__name__)

DEFAULT_RESULT_MAX_CHARS = 80_000
"""The global fuse: no single tool result reaching the model is longer than this."""
_MIN_RESULT_MAX_CHARS = 400
"""Below this the cap's own note would leave no room for the result."""
_MAX_ERROR_CHARS = 1_000
"""An error line longer than this is a dump, not a message."""
_MAX_LISTING_CHARS = 700
"""The list of available tools in an unknown-tool error stops here (``and N more``)."""
_NOT_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
"""Control characters but tab and newline, and lone surrogates (no UTF-8 for them)."""
_REPLACEMENT = "\ufffd"
_BACKOFF_FIRST_S = 0.2
"""The wait before the first retry; it doubles for each further one …"""
_BACKOFF_MAX_S = 5.0
"""… up to this."""


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """How one tool is run: its own time limit and how often a transient failure is retried.

    Attributes:
        timeout: Seconds one call (each attempt) may take; ``None``: the ``time_limit``
            :meth:`ToolRegistry.run` is given (the agent's ``tool_timeout``).
        retries: Times a call is made again after the tool raises
            :class:`~leanloop.exceptions.TransientToolError`.
    """

    timeout: float | None = None
    retries: int = 0


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call produced, as the model will see it.

    Attributes:
        name: The tool that ran (after a repair, the repaired name); for an unknown
            name that could not be repaired, the name as the model wrote it.
        args: The arguments the tool actually received (aliases read, unknown ones
            dropped, values validated and coerced), in JSON form (a validated model as
            a dict); for a call that did not run, the arguments that were checked.
        text: The text the model will see, already capped.
        ok: ``False`` when the call failed (unknown tool, bad arguments, the tool raised).
        chars_raw: The length of the text before the registry's cap.
        notes: Short remarks for reports: the repair, aliases read, values coerced,
            dropped arguments, what the tool itself repaired (a path), capping.
        repaired_from: The tool name as the model wrote it, when the registry repaired
            it and ran ``name`` instead; ``None`` otherwise.
        repaired: Whether the call ran only after something about it was mended: the
            tool name, arguments read under another name, coerced or dropped, a missing
            path replaced by the one the request names.
        timed_out: The call took longer than the ``time_limit`` it was run with and was
            given up (``ok`` is ``False``).
        retries: Times the call was made again after a transient error.
        time_limit: The time limit the call ran under (the tool's own, else the one given).
        sub_report: The report of the run the call made, as a JSON-ready dict (an
            ``agent:NAME`` tool, through :meth:`~leanloop.tools._notes.Told.sub_report`;
            after retries, the last attempt's); ``None`` for other tools.
        blocked_loop: The tool blocked the event loop past its time limit (a blocking
            call in an async tool), so the limit could not stop it in time; ``text``
            (for a timeout) and ``notes`` say how long it ran and where it was stuck.
        ran_s: How long the call really ran, when the event loop was held past its time
            limit (by the tool or by other work); ``None`` otherwise.
    """

    name: str
    args: dict[str, Any]
    text: str
    ok: bool
    chars_raw: int
    notes: tuple[str, ...] = ()
    repaired_from: str | None = None
    repaired: bool = False
    timed_out: bool = False
    retries: int = 0
    time_limit: float | None = None
    sub_report: Mapping[str, Any] | None = None
    blocked_loop: bool = False
    ran_s: float | None = None


class _TimedOut(Exception):
    """A call ran past its timeout (raised by :func:`_bounded`, never by a tool)."""


@dataclass(slots=True)
class _Draft:
    """One call on its way to an outcome."""

    name: str
    args: dict[str, Any]
    repaired_from: str | None = None
    shown: list[str] = field(default_factory=list)
    """Notes the model sees with the result."""
    told: list[str] = field(default_factory=list)
    """Notes the tool wrote into its own result; only recorded."""
    told_repair: bool = False
    """Whether a note the tool told was of a repair (see :meth:`._notes.Told.note`)."""
    dropped: tuple[str, ...] = ()
    retries: int = 0
    time_limit: float | None = None
    sub_report: dict[str, Any] | None = None
    """The report of the run the tool made (the last one, after retries)."""
    overrun: Overrun | None = None
    """The last attempt ran past its limit with the event loop held (see :mod:`._watchdog`)."""

    def take(self, told: Told) -> None:
        """Keep what the tool told the registry while it ran."""
        self.told.extend(told.notes)
        self.told_repair = self.told_repair or told.repaired
        if told.sub_reports:
            self.sub_report = told.sub_reports[-1]


class ToolRegistry:
    """The tools of one agent, run so that every failure becomes a one-line message."""

    def __init__(
        self,
        tools: Sequence[BaseTool],
        *,
        result_max_chars: int = DEFAULT_RESULT_MAX_CHARS,
        path_exists: Callable[[str], bool] | None = None,
        policies: Mapping[str, ToolPolicy] | None = None,
        mcp_sessions: McpSessions | None = None,
        workspace_run: WorkspaceRun | None = None,
    ) -> None:
        """Hold ``tools`` and cap each result at ``result_max_chars``.

        Args:
            tools: The agent's tools; names must be unique.
            result_max_chars: The most characters of one result the model sees.
            path_exists: Says whether a path exists in the agent's workspace (see
                :func:`leanloop.tools.workspace_path_exists`); lets an unknown tool name
                that is a file (``README.md``) be read with ``read_file``.
            policies: Per tool name: its own time limit and retries (see
                :class:`ToolPolicy`); tools not named run with the defaults.
            mcp_sessions: The MCP sessions of the run this registry serves, handed to
                every call (see :class:`leanloop.tools.mcp.McpSessions`); whoever runs
                the run closes them at its end. ``None``: each MCP call opens its own.
            workspace_run: What the run has read and edited in its workspace, handed to
                every call (the edit tools check it; see :mod:`leanloop.tools._journal`).
                ``None``: a fresh one, since a registry serves one run; a resumed run
                builds a new registry, so it starts without what an earlier one read.

        Raises:
            ToolError: Two tools share a name.
            InvalidArgument: ``result_max_chars`` is too small to hold a result and its note.
        """
        if result_max_chars < _MIN_RESULT_MAX_CHARS:
            msg = (
                f"result_max_chars must be at least {_MIN_RESULT_MAX_CHARS}, got {result_max_chars}"
            )
            raise InvalidArgument(msg)
        self._tools: dict[str, BaseTool] = {}
        for tool in tools:
            if tool.name in self._tools:
                msg = f'two tools are named "{tool.name}"'
                raise ToolError(msg)
            self._tools[tool.name] = tool
        self.result_max_chars = result_max_chars
        self.path_exists = path_exists
        self.policies: dict[str, ToolPolicy] = dict(policies or {})
        self.mcp_sessions = mcp_sessions
        self.workspace_run = workspace_run if workspace_run is not None else WorkspaceRun()
        """The run's reads and edit journal (:meth:`WorkspaceRun.report` for a report)."""
        self._codes = {
            name: per_tool(_CODES, tool, tool_codes) for name, tool in self._tools.items()
        }
        self._lean = {name: lean_tool(tool) for name, tool in self._tools.items()}
        """How to call each tool's coroutine directly, when nothing sees it (:mod:`._lean`)."""

    @property
    def tools(self) -> tuple[BaseTool, ...]:
        """The tools, in the order given."""
        return tuple(self._tools.values())

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in the order given."""
        return tuple(self._tools)

    def get(self, name: str) -> BaseTool | None:
        """Return the tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def parameters(self, name: str) -> tuple[str, ...]:
        """Return the argument names of tool ``name`` in order (``()`` if unknown).

        The text protocol uses this order to map positional arguments to names.
        """
        tool = self._tools.get(name)
        return _parameters(tool) if tool is not None else ()

    async def run(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        time_limit: float | None = None,
        request_paths: Callable[[], Sequence[str]] | None = None,
        request_names: Sequence[str] = (),
        repair_paths: bool | None = None,
    ) -> ToolOutcome:
        """Run tool ``name`` with ``args``; never raises except on cancellation.

        Args:
            name: The tool name the model used.
            args: The arguments the model sent (a JSON object as text is read too).
            time_limit: Seconds the tool may take (``None``: no limit), unless the tool's
                :class:`ToolPolicy` sets its own. A call that takes longer is given up:
                an async tool is cancelled, a sync one is abandoned in its worker thread;
                the outcome says ``timed out after N s``.
            request_paths: The workspace paths the run's request names, handed to the
                tool with the call (:class:`~leanloop.tools._notes.CallContext`); ``None``
                outside a run.
            request_names: The words of the request that look like file names: a tool
                that reads a named resource and was called without its name gets the one
                there is (:func:`~leanloop.tools.readers.fill_reader_argument`).
            repair_paths: Whether the workspace tools read the one path the request
                names instead of a missing one, as the run decided it (handed to the tool
                with the call); ``None``: the tool's own setting.

        Returns:
            The outcome; ``outcome.text`` goes to the model as the tool result.
        """
        decoded = _arguments_object(args)
        draft = _Draft(name, decoded if decoded is not None else {})
        tool = self._tools.get(name) or self._repair(draft)
        if tool is None:
            return self._finish(draft, self._unknown(name), ok=False)
        if decoded is None:
            problem = f"{tool.name} takes its arguments as a JSON object of names and values"
            return self._finish(draft, f"error: {problem}", ok=False)
        if not isinstance(args, Mapping):
            draft.shown.append("read the arguments from their JSON text")
        check = _check(tool, draft.args)
        if check.problem is not None and request_names:
            # A reader called without its name (`read_doc({})`): the one the request gives.
            filled = fill_reader_argument(tool, check.args, request_names)
            if filled is not None:
                check = replace(_check(tool, filled[0]), dropped=check.dropped)
                draft.shown.append(filled[1])
        draft.args, draft.dropped = check.args, check.dropped
        draft.shown.extend(check.notes)
        if check.problem is not None:
            return self._finish(draft, f"error: {check.problem}", ok=False, ran=False)
        policy = self.policies.get(tool.name, _DEFAULT_POLICY)
        if policy.timeout is not None:
            time_limit = policy.timeout
        draft.time_limit = time_limit
        # What the tool is handed with the call and tells back: numbered before any await.
        context = CallContext(
            Told(),
            request_paths,
            sessions=self.mcp_sessions,
            repair_paths=repair_paths,
            workspace_run=self.workspace_run,
        )
        told = context.told
        try:
            result = await self._attempts(
                tool, check.args, policy, time_limit, draft, context=context
            )
        except _TimedOut:
            draft.take(told)
            return self._timed_out(draft, tool.name, time_limit)
        except Exception as exc:  # the whole point: a failing tool is a message, not a crash
            draft.take(told)
            self._warn_overrun(draft, tool.name)
            return self._finish(draft, f"error: {_failure(tool.name, exc)}", ok=False)
        draft.take(told)
        self._warn_overrun(draft, tool.name)
        try:  # inside the guard: a result that cannot become text is a failure too
            text = _to_text(result)
        except Exception as exc:
            problem = f"{tool.name} returned a result that cannot be shown as text"
            return self._finish(draft, f"error: {problem} ({_failure(tool.name, exc)})", ok=False)
        return self._finish(draft, text, ok=True)

    async def _attempts(
        self,
        tool: BaseTool,
        args: dict[str, Any],
        policy: ToolPolicy,
        time_limit: float | None,
        draft: _Draft,
        *,
        context: CallContext,
    ) -> Any:
        """Call ``tool``, again after a transient error while retries are left.

        Each attempt has the whole ``time_limit``; a timeout is not retried.
        """
        codes = self._codes.get(tool.name, frozenset())
        lean = self._lean.get(tool.name)
        if policy.retries <= 0:
            return await _bounded(_invoke(tool, args, context, lean), time_limit, codes, draft)

        def note_retry(state: RetryCallState) -> None:
            draft.retries = state.attempt_number
            exc = state.outcome.exception() if state.outcome is not None else None
            line = _one_line(exc) if isinstance(exc, Exception) else "a transient error"
            _log.info("tool %s: transient error (%s); retry %d", tool.name, line, draft.retries)

        retrying = AsyncRetrying(
            stop=stop_after_attempt(policy.retries + 1),
            wait=wait_exponential(multiplier=_BACKOFF_FIRST_S, max=_BACKOFF_MAX_S),
            retry=retry_if_exception_type(TransientToolError),
            before_sleep=note_retry,
            reraise=True,
        )

        async def attempt() -> Any:
            return await _bounded(_invoke(tool, args, context, lean), time_limit, codes, draft)

        return await retrying(attempt)

    def _timed_out(self, draft: _Draft, tool: str, limit: float | None) -> ToolOutcome:
        over = draft.overrun
        if over is None:
            seconds = f"{limit:g} s" if limit is not None else "its time limit"
            _log.warning("tool %s timed out after %s; not retried", tool, seconds)
            body = f"error: {tool} timed out after {seconds}; not retried"
        else:
            # The timer fired late: say how long the call really ran, and why.
            ran = f"{tool} timed out after {_duration(over.seconds)} s"
            if over.by_tool:
                body = (
                    f"error: {ran} (its limit is {over.limit:g} s): it blocked the event loop,"
                    " so it could not be stopped in time; not retried"
                )
            else:
                body = (
                    f"error: {ran} (its limit is {over.limit:g} s; the event loop was blocked"
                    " by other work meanwhile); not retried"
                )
            _log.warning("tool %s", body.removeprefix("error: "))
        return self._finish(draft, body, ok=False, timed_out=True)

    @staticmethod
    def _warn_overrun(draft: _Draft, tool: str) -> None:
        """Log a call that overran its limit but ended (a result or a failure) all the same."""
        if draft.overrun is not None:
            _log.warning("tool %s: %s", tool, _overrun_note(draft.overrun))

    def _repair(self, draft: _Draft) -> BaseTool | None:
        """Repair ``draft``'s unknown tool name in place; the tool to run, or ``None``."""
        signatures = {name: _parameters(tool) for name, tool in self._tools.items()}
        try:
            repair = repair_call(draft.name, draft.args, signatures, path_exists=self.path_exists)
        except Exception:  # a failing path check must not turn into a crash
            debug = _log.isEnabledFor(logging.DEBUG)
            _log.warning("repairing tool name %r failed", draft.name, exc_info=debug)
            return None
        if repair is None:
            return None
        _log.info("unknown tool %r: running %s (%s)", draft.name, repair.name, repair.reason)
        draft.repaired_from, draft.name, draft.args = draft.name, repair.name, dict(repair.args)
        return self._tools[repair.name]

    def _unknown(self, name: str) -> str:
        shown = _clip(name, 80)
        close = close_tool_names(name, self.names)
        hint = " or ".join(f'"{c}"' for c in close)
        hint = f" (did you mean {hint}?)" if close else ""
        return f'error: no tool named "{shown}"{hint}. Available: {self._listing()}'

    def _listing(self) -> str:
        """``read_file {path, offset?, limit?}, search {...}``: what the model can call."""
        entries: list[str] = []
        used = 0
        for count, tool in enumerate(self._tools.values()):
            entry = f"{tool.name} {_describe(tool)}"
            if used + len(entry) > _MAX_LISTING_CHARS and entries:
                entries.append(f"and {len(self._tools) - count} more")
                break
            entries.append(entry)
            used += len(entry) + 2
        return ", ".join(entries) or "none"

    def _finish(
        self, draft: _Draft, body: str, *, ok: bool, ran: bool = True, timed_out: bool = False
    ) -> ToolOutcome:
        shown = [" ".join(note.split()) for note in draft.shown]
        if draft.repaired_from is not None:
            verb = "ran" if ran else "tried"
            call = format_call(draft.name, _jsonable(draft.args))
            original = _clip(draft.repaired_from, 80)
            shown.insert(0, f'unknown tool "{original}": {verb} {call} instead')
        if draft.dropped:
            shown.append(f"ignored unknown arguments: {', '.join(draft.dropped)}")
        retried = []
        if draft.retries:
            retried.append(f"retried {_count(draft.retries, 'time')} after transient errors")
        # Names and values the model wrote are echoed too: clean them with the result.
        shown = [clean_text(note) for note in shown]
        brackets = [f"[{note}]" for note in shown]
        body, replaced = _clean(body)
        # Before a result (seen first); after a one-line error (keeps "error:" first).
        full = "\n".join([*brackets, body]).rstrip("\n") if ok else " ".join([body, *brackets])
        notes = [*shown, *retried, *(clean_text(note) for note in draft.told)]
        if draft.overrun is not None:  # for the report: the model needs no advice on tools
            notes.append(_overrun_note(draft.overrun))
        if replaced:  # a note for the report only: nothing about the call was mended
            notes.append(f"replaced {_count(replaced, 'character')} that are not text")
        text = cap_text(full, self.result_max_chars)
        if len(text) != len(full):
            notes.append(f"capped at {self.result_max_chars:,} of {len(full):,} characters")
        _log.debug("tool %s: ok=%s, %d chars (%d raw)", draft.name, ok, len(text), len(full))
        return ToolOutcome(
            draft.name,
            _jsonable(draft.args),
            text,
            ok,
            len(full),
            tuple(notes),
            repaired_from=draft.repaired_from,
            repaired=ran
            and bool(draft.repaired_from or shown or draft.told_repair or draft.dropped),
            timed_out=timed_out,
            retries=draft.retries,
            time_limit=draft.time_limit,
            sub_report=draft.sub_report,
            blocked_loop=draft.overrun is not None and draft.overrun.by_tool,
            ran_s=draft.overrun.seconds if draft.overrun is not None else None,
        )


_DEFAULT_POLICY = ToolPolicy()


def clean_text(text: str) -> str:
    """``text`` safe to send: CR and CRLF as newlines, every other control character but
    tab and newline, and every lone surrogate, as U+FFFD.

    A lone surrogate (``os.fsdecode`` makes them of bytes that are not UTF-8) cannot be
    encoded, so an HTTP client fails on the whole request; control characters confuse
    servers and terminals. Cleaning twice changes nothing.
    """
    return _clean(text)[0]


def _clean(text: str) -> tuple[str, int]:
    """:func:`clean_text`, and how many characters became U+FFFD."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _NOT_TEXT.subn(_REPLACEMENT, text)


def _count(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


_CODES: dict[int, tuple[Any, ...]] = {}
"""Each tool's own code (:func:`tool_codes`), read once per tool (:func:`per_tool`)."""


async def _invoke(
    tool: BaseTool, args: dict[str, Any], context: CallContext, lean: LeanTool | None = None
) -> Any:
    """``tool.ainvoke(args)``, a sync-only tool run in a daemon worker thread instead.

    The call's config is the run's, with ``context`` for the tool (:mod:`._notes`). With
    nothing configured that would see the call, ``lean`` calls the tool's coroutine
    directly (:mod:`._lean`).
    """
    if lean is not None and lean.usable(var_child_runnable_config.get()):
        return await lean.call(args, lambda: call_config(context))
    config = call_config(context)
    if blocks_in_executor(tool):
        # Same input and config; only the thread differs: one the process never waits for.
        return await in_worker(tool.invoke, args, config)
    return await tool.ainvoke(args, config)


async def _bounded(
    call: Coroutine[Any, Any, Any],
    limit: float | None,
    codes: frozenset[CodeType],
    draft: _Draft,
) -> Any:
    """Await ``call`` for at most ``limit`` seconds, else cancel it and raise _TimedOut.

    The call runs as a task of its own, so a tool that swallows the cancellation cannot
    hold its caller past the timeout; cancelling the caller cancels the call. The
    watchdog watches the limit from a thread (``codes``: the tool's own code): when the
    event loop was held past it, ``draft.overrun`` says how long the call ran and why.
    """
    if limit is None:
        return await call
    watched = watch(limit, codes)
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=limit)
    except BaseException:  # the caller was cancelled: so is the call
        watched.settle()
        task.cancel()
        raise
    draft.overrun = watched.settle()
    if task in done:
        return task.result()
    task.cancel()
    task.add_done_callback(_forget)
    raise _TimedOut


def _duration(seconds: float) -> str:
    """``20.5`` for 20.46 seconds: a tenth is precise enough for a call gone long."""
    return f"{seconds:.1f}" if seconds < 100 else f"{seconds:.0f}"


def _overrun_note(over: Overrun) -> str:
    """The report's note on a call whose time limit could not stop it in time."""
    ran = f"ran {_duration(over.seconds)} s against its {over.limit:g} s time limit"
    if over.by_tool:
        return (
            f"blocked the event loop: {ran}, stuck in {over.where}; an async tool must not"
            " make blocking calls (run them with asyncio.to_thread)"
        )
    return f"held up: the event loop was blocked by other work ({over.where}); the call {ran}"


def _forget(task: asyncio.Future[Any]) -> None:
    """Retrieve an abandoned call's end, so asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()


def _parameters(tool: BaseTool) -> tuple[str, ...]:
    try:
        return parameter_names(tool)
    except Exception:  # an unreadable schema: the tool can still be called by name
        return ()


def _describe(tool: BaseTool) -> str:
    try:
        return describe_parameters(tool)
    except Exception:
        return "{...}"


def _failure(name: str, exc: Exception) -> str:
    line = _one_line(exc)
    # A ToolException is a refusal meant for the model; anything else is a bug in the
    # tool, worth a warning with the traceback when debugging.
    level = logging.INFO if isinstance(exc, ToolException) else logging.WARNING
    _log.log(level, "tool %s failed: %s", name, line, exc_info=_log.isEnabledFor(logging.DEBUG))
    return line


def _arguments_object(args: Any) -> dict[str, Any] | None:
    """The arguments as a dict; a JSON object sent as text counts; else ``None``."""
    if isinstance(args, Mapping):
        return {str(key): value for key, value in args.items()}
    if isinstance(args, str) and args.strip().startswith("{"):
        try:
            decoded = json.loads(args)
        except (ValueError, RecursionError):
            return None
        return decoded if isinstance(decoded, dict) else None
    return None


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check(tool: BaseTool, args: Mapping[str, Any]) -> ArgumentCheck:
    try:
        return check_arguments(tool, args)
    except Exception:  # a schema we cannot read: let the tool (and LangChain) judge
        _log.debug("cannot check arguments of %s", tool.name, exc_info=True)
        return ArgumentCheck(dict(args))


def _jsonable(args: dict[str, Any]) -> dict[str, Any]:
    """The arguments in JSON form (validated models as dicts), so reports can be dumped."""
    return {key: to_jsonable_python(value, fallback=repr) for key, value in args.items()}


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    if not isinstance(exc, ToolException):
        # The type says a lot for KeyError('x') or ZeroDivisionError; ToolExceptions
        # are already written for the model.
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    text = text or "the tool failed without a message"
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 3] + "..."


def _to_text(result: Any) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    if isinstance(result, BaseMessage):
        return _to_text(result.content)
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    if isinstance(result, list | tuple) and result and all(map(_is_block, result)):
        return "\n".join(_block_text(block) for block in result)
    if isinstance(result, bytes):
        return result.decode("utf-8", errors="replace")
    if isinstance(result, dict | list | tuple | int | float | bool):
        try:
            return json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError):  # circular structures and the like
            return str(result)
    return str(result)


_BLOCK_TYPES = frozenset(
    {"text", "image", "file", "audio", "video", "resource", "resource_link", "text-plain"}
)


def _is_block(item: Any) -> bool:
    """A content block (``{"type": "text", "text": ...}``, an image …) or a plain string."""
    if isinstance(item, str):
        return True
    if not (isinstance(item, Mapping) and item.get("type") in _BLOCK_TYPES):
        return False
    return item["type"] != "text" or isinstance(item.get("text"), str)


def _block_text(block: str | Mapping[str, Any]) -> str:
    """A text block's text; any other block summarised in one line (its data left out)."""
    if isinstance(block, str):
        return block
    if block["type"] in ("text", "text-plain") and isinstance(block.get("text"), str):
        return str(block["text"])
    kind = "resource" if block["type"] == "resource_link" else str(block["type"])
    parts = [str(block.get("mime_type") or block.get("mimeType") or "")]
    where = block.get("url") or block.get("uri") or block.get("file_id") or block.get("id")
    data = block.get("base64") or block.get("data")
    if isinstance(data, str) and data:
        parts.append(f"{len(data) * 3 // 4:,} bytes")
    elif where and not str(where).startswith("lc_"):
        parts.append(str(where))
    details = ", ".join(part for part in parts if part)
    return f"[{kind}: {details}]" if details else f"[{kind}]"
