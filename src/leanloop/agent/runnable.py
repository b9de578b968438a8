"""``LLMAgent``: a configured agent that is a LangChain ``Runnable``.

It composes like any Runnable (``prompt | agent | StrOutputParser()``), takes a question,
a ``{"input": ..., "messages": [...]}`` dict, a prompt value or a message list, and returns
an ``AIMessage`` whose ``response_metadata["leanloop"]`` is the run report.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import os
import queue
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, cast

from langchain_core.callbacks import AsyncCallbackManagerForChainRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableLambda,
    RunnableSerializable,
    ensure_config,
)
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field

from leanloop.agent.conversation import run_turn, session_of
from leanloop.agent.inputs import AgentInput, opening_messages
from leanloop.agent.located import (
    caller as _caller,
)
from leanloop.agent.located import (
    check_tool_name as _check_tool_name,
)
from leanloop.agent.located import (
    located as _located,
)
from leanloop.agent.located import (
    model_spec_of as _model_spec_of,
)
from leanloop.agent.located import (
    near as _near,
)
from leanloop.agent.located import (
    output_schema as _output_schema,
)
from leanloop.agent.located import (
    pick as _pick,
)
from leanloop.agent.located import (
    python_error as _python_error,
)
from leanloop.agent.located import (
    relocated as _relocated,
)
from leanloop.agent.located import (
    schema_class as _schema_class,
)
from leanloop.agent.structured import attach_structured
from leanloop.budget.shared import PROCESS_STATE, SharedState
from leanloop.exceptions import (
    InvalidArgument,
    NoAnswer,
    SpecError,
    ToolError,
)
from leanloop.loop import AgentLoop, TextSink
from leanloop.loop.policies.approval import ALL_DECISIONS, Approver, DecisionName
from leanloop.models import build_chat_model
from leanloop.protocol import question_of
from leanloop.report import ENDED_OTHERWISE
from leanloop.sessions import without_session
from leanloop.spec import load_specs
from leanloop.spec.load import load_specs_from_dict
from leanloop.spec.tooloptions import asks_approval
from leanloop.spec.types import AGENT_PREFIX, AgentSpec
from leanloop.tools.agents import agent_tool
from leanloop.tools.edits import preview_edit
from leanloop.tools.loader import build_tools_by_ref, tool_of
from leanloop.tools.mcp import McpSessions
from leanloop.tools.registry import ToolPolicy, ToolRegistry
from leanloop.tools.workspace import workspace_path_exists

__all__ = ["LLMAgent", "load_agents"]


class LLMAgent(RunnableSerializable[AgentInput, AIMessage]):
    """An agent built from an :class:`AgentSpec`: a model, tools, and context policies.

    Build one with :meth:`from_file` or :meth:`from_spec`; or in Python alone, with a chat
    model, tools and the agents file's agent keys as keyword arguments::

        agent = LLMAgent(model=ChatOpenAI(model="gpt-4o-mini"), tools=[read_notes],
                         system_prompt="Answer from the notes.", max_rounds=5)

    Tools may be ``BaseTool`` objects, plain functions (sync or async: the name, docstring
    and typed parameters make the tool), other ``LLMAgent`` objects (each a ``task`` tool)
    or, as in YAML, built-in names and import paths (``"read_file"``, ``"pkg.mod:fn"``).
    Passing ``spec=`` (with ``model`` and ``tools``) uses objects built in Python with a
    spec's policies, as before.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    spec: AgentSpec
    """The validated configuration."""
    model: BaseChatModel
    """The chat model the loop talks to."""
    tools: list[BaseTool]
    """The tools offered to the model."""
    pruning_model: BaseChatModel | None = None
    """The extraction model for tool-output pruning; ``None`` uses ``model``."""
    tool_policies: dict[str, ToolPolicy] = Field(default_factory=dict)
    """Per tool name: its own ``timeout`` and ``retries`` (the file's tool mappings)."""
    answer_schema: type[BaseModel] | None = None
    """When set, the answer is also an instance of this model
    (``additional_kwargs["parsed"]``); :meth:`with_structured_output` returns it alone."""
    shared_state: SharedState = PROCESS_STATE
    """What the agent's runs keep beyond a run: the windows the servers said, the token
    estimates learned from their counts, the trimmed copies, and the clock those age on
    (:class:`~leanloop.budget.shared.SharedState`). The process's by default, shared with
    every agent given none; one of the agent's own (its sub-agents share it) keeps its
    runs apart from every other agent's (ADR 0038)."""
    tool_approval: dict[str, tuple[DecisionName, ...]] = Field(default_factory=dict)
    """Per tool name whose calls ask a person first, the decisions allowed (the file's
    ``approval`` and ``approve_decisions``; ADR 0037)."""
    tool_ask_when: dict[str, tuple[tuple[str, str], ...]] = Field(default_factory=dict)
    """Per tool name that asks only on a condition, its ``(argument, regex)`` pairs (the
    file's ``approval: {ask_when: ...}``); a tool not here asks on every call."""
    approver: Approver | None = None
    """Who decides on a call that asks (sync or async ``(ApprovalRequest) -> Decision``);
    ``None``: such a call pauses the run. ``config["configurable"]["approver"]`` wins,
    and a run hands its approver to its sub-agents."""

    def __init__(self, **data: Any) -> None:
        """Build the agent: from ``spec=`` and objects, or Python-first (see the class).

        Without ``spec``, ``model`` is a chat model (or a model mapping as in YAML),
        ``tools`` what the class docstring lists, ``name`` the agent's name (``"agent"``)
        and every other keyword an agent key of the agents file, validated by the same
        schema and checks (``context_window`` is the model's).

        Raises:
            SpecError: An option or tool is wrong (one located line per problem).
        """
        if "spec" not in data:
            data = _python_first(data)
        elif data.get("tools") is not None:
            data["tools"] = _tool_objects(data["tools"], where="tools")
        super().__init__(**data)

    @classmethod
    def from_model(
        cls,
        model: BaseChatModel | Mapping[str, Any],
        tools: Sequence[Any] = (),
        *,
        name: str = "agent",
        **options: Any,
    ) -> LLMAgent:
        """A Python-first agent: ``LLMAgent(model=model, tools=tools, name=name, **options)``.

        Raises:
            SpecError: An option or tool is wrong (one located line per problem).
        """
        return cls(model=model, tools=list(tools), name=name, **options)

    @classmethod
    def from_spec(
        cls,
        spec: AgentSpec,
        *,
        model: BaseChatModel | None = None,
        tools: Sequence[Any] | None = None,
        pruning_model: BaseChatModel | None = None,
        extra_tools: Sequence[Any] = (),
        shared_state: SharedState = PROCESS_STATE,
        approver: Approver | None = None,
    ) -> LLMAgent:
        """Build the agent ``spec`` describes; ``model``/``tools``/``pruning_model`` override it.

        ``approver`` decides on the calls that ask a person (see :attr:`approver`).

        ``extra_tools`` are added to the spec's tools (ignored when ``tools`` replaces them).
        Tools may be ``BaseTool`` objects, plain functions or other ``LLMAgent`` objects.
        ``shared_state``: what its runs (and its sub-agents') keep beyond a run (see
        :attr:`shared_state`); a fresh :class:`~leanloop.budget.SharedState` makes them
        independent of other agents' runs.

        Raises:
            SpecError: When the model or a tool cannot be built (located in the file).
        """
        built_model = model if model is not None else build_chat_model(spec.model)
        policies: dict[str, ToolPolicy] = {}
        if tools is not None:
            built_tools = list(tools)
            approval = None  # by the tools' names, once they are tool objects (below)
            ask_when = {}
        else:
            extra = _tool_objects(extra_tools, where="tools", spec=spec)
            built = _build_tools(spec, extra=extra, shared_state=shared_state)
            built_tools = [tool for _, tool in built]
            policies = _policies(spec, built)
            approval = _approval(spec, built)
            ask_when = _ask_when(spec, built)
        pruning = pruning_model
        if pruning is None and spec.allow_tool_output_pruning and spec.pruning_model is not None:
            pruning = build_chat_model(spec.pruning_model)
        agent = cls(
            spec=spec,
            model=built_model,
            tools=built_tools,
            pruning_model=pruning,
            tool_policies=policies,
            answer_schema=_output_schema(spec),
            name=spec.name,
            shared_state=shared_state,
            tool_approval=approval or {},
            tool_ask_when=ask_when,
            approver=approver,
        )
        if approval is None:
            # Tools given as objects: a built-in's name is its reference.
            named = [(tool.name, tool) for tool in agent.tools]
            asks, when = _approval(spec, named), _ask_when(spec, named)
            agent = agent.model_copy(update={"tool_approval": asks, "tool_ask_when": when})
        return agent

    def with_approver(self, approver: Approver | None) -> LLMAgent:
        """This agent with ``approver`` deciding on the calls that ask (``None``: none,
        so that such a call pauses the run)."""
        return self.model_copy(update={"approver": approver})

    async def aresume(
        self,
        thread_id: str,
        decisions: Mapping[str, object] | None = None,
        config: RunnableConfig | None = None,
    ) -> AIMessage:
        """Go on with the session's paused turn, with a decision per waiting call id.

        The same as ``ainvoke("", {"configurable": {"thread_id": thread_id, "resume":
        True, "approvals": decisions}})``: a decision is an ``Approve()``,
        ``EditArgs(args)`` or ``Reject(reason)`` (or ``"approve"``, ``"reject"``, or
        ``{"decision": "edit", "args": {...}}``); a call left without one is asked of the
        approver, else it pauses again.
        """
        given = dict((config or {}).get("configurable") or {})
        given.update(thread_id=thread_id, resume=True, approvals=dict(decisions or {}))
        return await self.ainvoke(
            "", cast(RunnableConfig, {**(config or {}), "configurable": given})
        )

    def resume(
        self,
        thread_id: str,
        decisions: Mapping[str, object] | None = None,
        config: RunnableConfig | None = None,
    ) -> AIMessage:
        """Synchronous :meth:`aresume`."""
        given = dict((config or {}).get("configurable") or {})
        given.update(thread_id=thread_id, resume=True, approvals=dict(decisions or {}))
        return self.invoke("", cast(RunnableConfig, {**(config or {}), "configurable": given}))

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        name: str | None = None,
        *,
        tools: Sequence[Any] = (),
    ) -> LLMAgent:
        """Load ``path`` and build the agent called ``name`` (optional with one agent).

        Args:
            path: The agents file.
            name: The agent; optional when the file declares one.
            tools: Tools added to the tools the file lists (names must not clash):
                ``BaseTool`` objects, plain functions (sync or async) or ``LLMAgent`` objects.

        Raises:
            SpecError: When the file has problems, or ``name`` is missing or ambiguous.
        """
        # Only the chosen agent's problems stop it: a sibling's broken model or tool doesn't.
        specs = load_specs(path, only=name)
        return cls.from_spec(_pick(specs, name, source=str(path)), extra_tools=tools)

    def with_structured_output(
        self, schema: type[BaseModel] | None = None, *, include_raw: bool = False
    ) -> Runnable[AgentInput, Any]:
        """This agent answering with an instance of ``schema`` (default: ``answer_schema``).

        The run is the same; after its answer, one tool-less request asks for the answer in
        ``schema`` (see :mod:`leanloop.agent.structured`).

        Args:
            schema: A pydantic model class; the agent's ``answer_schema`` (the file's
                ``output_schema``) when omitted.
            include_raw: Return ``{"raw": AIMessage, "parsed": instance}`` (the raw message
                carries the run report) instead of the instance alone.

        Raises:
            InvalidArgument: When neither ``schema`` nor ``output_schema`` is set.
            InvalidArgumentType: ``schema`` is no pydantic model class (``dict``, ``int``).
        """
        chosen = self.answer_schema if schema is None else _schema_class(schema)
        if chosen is None:
            msg = "with_structured_output needs a schema (or the agent's output_schema)"
            raise InvalidArgument(msg)
        typed = self.model_copy(update={"answer_schema": chosen})

        def pick(message: AIMessage) -> Any:
            parsed = message.additional_kwargs["parsed"]
            return {"raw": message, "parsed": parsed} if include_raw else parsed

        return typed | RunnableLambda(pick, name="parsed")

    def as_tool(
        self,
        args_schema: type[BaseModel] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
    ) -> BaseTool:
        """This agent as a tool: one ``task`` string in, the answer's text out.

        The tool runs sync or async, so LangChain's ``create_agent`` (or any agent that
        takes tools) uses it directly. With ``args_schema`` or ``arg_types`` it is
        LangChain's own :meth:`Runnable.as_tool` (the arguments go in as the input dict).

        Args:
            args_schema: A pydantic model for the arguments (LangChain's behaviour).
            name: The tool's name; the agent's name by default.
            description: What the tool is for; the agent's ``description`` by default.
            arg_types: Argument types (LangChain's behaviour).

        Raises:
            InvalidArgument: ``name`` is not 1-64 letters, digits, ``_`` or ``-``.
        """
        if name is not None:
            _check_tool_name(name)  # here, not when the provider refuses the request
        if args_schema is not None or arg_types is not None:
            return super().as_tool(
                args_schema, name=name, description=description, arg_types=arg_types
            )
        tool_name = name or self.name or self.spec.name
        made = agent_tool(tool_name, description or self.spec.description or None, self)

        def run(task: str) -> str:
            return self.invoke(task, without_session(ensure_config())).text

        # agent_tool's tool is async only; create_agent's sync invoke calls `func`.
        return made.model_copy(update={"func": run})

    def _loop(
        self,
        spec: AgentSpec | None = None,
        extra: Sequence[BaseTool] = (),
        *,
        sessions: McpSessions | None = None,
    ) -> AgentLoop:
        spec = spec or self.spec
        workspace = spec.workspace
        registry = ToolRegistry(
            [*self.tools, *extra],
            result_max_chars=spec.tool_result_max_chars,
            path_exists=workspace_path_exists(workspace) if workspace is not None else None,
            policies=self.tool_policies,
            mcp_sessions=sessions,
        )
        preview = None
        if workspace is not None and self.tool_approval:
            root, state = workspace, registry.workspace_run

            def preview(tool: str, args: Mapping[str, Any]) -> str | None:
                return preview_edit(root, state, tool, args)

        return AgentLoop(
            spec=spec,
            model=self.model,
            registry=registry,
            pruning_model=self.pruning_model,
            shared_state=self.shared_state,
            approval=self.tool_approval,
            approval_when=self.tool_ask_when,
            approver=self.approver,
            preview=preview,
        )

    async def ainvoke(
        self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AIMessage:
        """Run the agent to a final answer (see the class docstring for inputs and output)."""
        return await self._acall_with_config(self._arun, input, config, **kwargs)

    def invoke(
        self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AIMessage:
        """Synchronous :meth:`ainvoke`, run on one long-lived background event loop.

        One loop for every sync call keeps clients that cache an async HTTP connection per
        process (``langchain_openai`` does) usable across calls, and never blocks a loop the
        caller may be running. When the wait ends early (Ctrl-C raises ``KeyboardInterrupt``
        in the caller's thread), the run on the background loop is cancelled with it.
        """
        future = asyncio.run_coroutine_threadsafe(
            self.ainvoke(input, config, **kwargs), _background_loop()
        )
        try:
            return future.result()
        finally:
            if not future.done():
                future.cancel()  # the background task gets CancelledError at its next await

    def stream(
        self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        """Synchronous :meth:`astream`: text chunks as the model writes them, then the report.

        The run goes on the same background event loop as :meth:`invoke`; chunks cross
        to the caller's thread through a queue as they arrive. Closing the iterator early
        cancels the run.
        """
        chunks: queue.Queue[tuple[str, Any]] = queue.Queue()

        async def pump() -> None:
            try:
                async for chunk in self.astream(input, config, **kwargs):
                    chunks.put(("chunk", chunk))
            except BaseException as exc:  # handed to the caller's thread, raised there
                chunks.put(("error", exc))
                raise
            chunks.put(("done", None))

        future = asyncio.run_coroutine_threadsafe(pump(), _background_loop())
        try:
            while True:
                kind, item = chunks.get()
                if kind == "chunk":
                    yield item
                elif kind == "error":
                    raise item
                else:
                    return
        finally:
            if not future.done():
                future.cancel()

    async def astream(
        self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        """Stream the answer: text chunks as the model writes them, then the report.

        Text of every reply is passed on as it arrives, except anything that could be
        part of a tool call (the start of a call marker is held back, a reply that turns
        out to be a call shows nothing more). The last chunk has no text and carries the
        run report in ``response_metadata["leanloop"]``; adding up all chunks gives an
        ``AIMessageChunk`` with the report attached. With an ``answer_schema`` nothing is
        streamed: one chunk carries the typed answer (its JSON, ``additional_kwargs
        ["parsed"]``) and the report.
        """
        queue: asyncio.Queue[AIMessageChunk | None] = asyncio.Queue()

        async def on_text(text: str) -> None:
            await queue.put(AIMessageChunk(content=text))

        typed = self.answer_schema is not None

        async def drive() -> None:
            try:
                # A typed answer is made after the run: the text the model streams is not
                # it, so the one chunk that carries it is the last.
                final = await self._acall_with_config(
                    self._arun, input, config, on_text=None if typed else on_text, **kwargs
                )
                await queue.put(
                    AIMessageChunk(
                        content=final.content if typed else "",
                        additional_kwargs=final.additional_kwargs if typed else {},
                        response_metadata=final.response_metadata,
                    )
                )
            finally:
                await queue.put(None)

        task = asyncio.create_task(drive())
        try:
            while (chunk := await queue.get()) is not None:
                yield chunk
        finally:
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task  # re-raises the run's own failure, if any

    async def _arun(
        self,
        input: AgentInput,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
        on_text: TextSink | None = None,
    ) -> AIMessage:
        messages = opening_messages(input, system_prompt=self.spec.system_prompt)
        child = cast(RunnableConfig, {**config, "callbacks": run_manager.get_child()})
        given: Mapping[str, Any] = config.get("configurable") or {}
        # A sub-agent's calls ask through its parent's approver: the parent's run sets it
        # for everything it awaits, the sub-agent's run among them (ADR 0037).
        approver = given.get("approver") or _RUN_APPROVER.get() or self.approver
        if approver is not None:
            child["configurable"] = {**given, "approver": approver}
        token = _RUN_APPROVER.set(approver)
        try:
            return await self._arun_with(messages, child, config, on_text)
        finally:
            _RUN_APPROVER.reset(token)

    async def _arun_with(
        self,
        messages: list[BaseMessage],
        child: RunnableConfig,
        config: RunnableConfig,
        on_text: TextSink | None,
    ) -> AIMessage:
        thread, resume = session_of(config)
        # One MCP session per server for the whole run, opened at its first call and
        # closed here however the run ends (an answer, a failure, a cancellation), so no
        # stdio server outlives it (ADR 0018). A sub-agent's run has its own.
        async with McpSessions() as sessions:

            def make_loop(spec: AgentSpec, extra: Sequence[BaseTool]) -> AgentLoop:
                return self._loop(spec, extra, sessions=sessions)

            if thread is None:
                final = await make_loop(self.spec, ()).run(messages, child, on_text=on_text)
            else:
                final = await run_turn(
                    spec=self.spec,
                    messages=messages,
                    config=child,
                    thread_id=thread,
                    resume=resume,
                    make_loop=make_loop,
                    on_text=on_text,
                )
        if self.spec.no_answer == "raise" and _ended_otherwise(final):
            raise NoAnswer(final)
        if self.answer_schema is None:
            return final
        if final.response_metadata.get("leanloop", {}).get("stop_reason") == "paused":
            # Waiting for a person: there is no answer to type yet.
            return final.model_copy(update={"additional_kwargs": {"parsed": None}})
        return await attach_structured(
            self.model, self.answer_schema, final, question=question_of(messages), config=child
        )


_RUN_APPROVER: contextvars.ContextVar[Approver | None] = contextvars.ContextVar(
    "leanloop_run_approver", default=None
)
"""The approver of the run in progress, which its sub-agents' runs ask through."""

_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    """The event loop that serves synchronous calls (started once, a daemon thread)."""
    global _loop  # noqa: PLW0603 - one loop per process, created on first use
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="leanloop-sync", daemon=True).start()
            _loop = loop
        return _loop


def _ended_otherwise(message: AIMessage) -> bool:
    """Whether a run's message is no answer: its report's stop reason says a limit or a
    non-answer ended it (:data:`leanloop.report.ENDED_OTHERWISE`)."""
    report = message.response_metadata.get("leanloop", {})
    return report.get("stop_reason") in ENDED_OTHERWISE


def load_agents(path: str | os.PathLike[str]) -> dict[str, LLMAgent]:
    """Load every agent declared in ``path``, keyed by name.

    Raises:
        SpecError: With every problem in the file, each located.
    """
    return {name: LLMAgent.from_spec(spec) for name, spec in load_specs(path).items()}


def _python_first(data: dict[str, Any]) -> dict[str, Any]:
    """The fields of a Python-first agent: ``model``, ``tools`` and agent keys → a spec.

    The keys go through the agents file's schema and checks as the document
    ``{"version": 1, "agents": {name: {...}}}``, so a wrong key or type is the same one
    located line a file gets (located at the caller's line instead of the file's).
    """
    options = dict(data)
    model = options.pop("model", None)
    name = options.pop("name", None) or "agent"
    given_tools = options.pop("tools", None) or []
    context_window = options.pop("context_window", None)
    approver = options.pop("approver", None)  # a callable, not an agents-file key
    shared_state = options.pop("shared_state", PROCESS_STATE)  # an object, likewise
    pruning_model = options.get("pruning_model")
    schema = options.get("output_schema")
    where = _caller()
    if model is None:
        raise _python_error(where, "model", "a chat model is needed (model=ChatOpenAI(...))")
    if not isinstance(given_tools, Sequence) or isinstance(given_tools, str):
        raise _python_error(where, "tools", "expected a list of tools")
    refs = [tool for tool in given_tools if isinstance(tool, str)]
    objects = [tool for tool in given_tools if not isinstance(tool, str)]
    document_model: Any = dict(model) if isinstance(model, Mapping) else {"provider": "openai"}
    if context_window is not None:
        document_model = {**document_model, "context_window": context_window}
    agent: dict[str, Any] = {**options, "model": document_model, "tools": refs}
    if isinstance(pruning_model, BaseChatModel):
        del agent["pruning_model"]
    if isinstance(schema, type):
        del agent["output_schema"]
    document = {"version": 1, "agents": {name: agent}}
    try:
        spec = load_specs_from_dict(document, source=where[0])[name]
    except SpecError as exc:
        raise SpecError([_relocated(issue, name, where) for issue in exc.issues]) from None
    if isinstance(model, BaseChatModel):
        spec = dataclasses.replace(spec, model=_model_spec_of(model, spec.model.context_window))
    built = LLMAgent.from_spec(
        spec,
        model=model if isinstance(model, BaseChatModel) else None,
        pruning_model=pruning_model if isinstance(pruning_model, BaseChatModel) else None,
        extra_tools=_tool_objects(objects, where="tools", caller=where),
        shared_state=shared_state,
        approver=approver,
    )
    fields = {key: getattr(built, key) for key in type(built).model_fields}
    if isinstance(schema, type):
        if not issubclass(schema, BaseModel):
            raise _python_error(where, "output_schema", f"{schema!r} is not a pydantic model")
        fields["answer_schema"] = schema
    return fields


def _tool_objects(
    given: Sequence[Any],
    *,
    where: str,
    spec: AgentSpec | None = None,
    caller: tuple[str, int | None] | None = None,
) -> list[BaseTool]:
    """Tools given as Python objects: tools, plain functions, ``LLMAgent`` objects."""
    if isinstance(given, (str, BaseTool)) or not isinstance(given, Sequence):
        given = [given]
    tools: list[BaseTool] = []
    for obj in given:
        if isinstance(obj, LLMAgent):
            tools.append(obj.as_tool())
            continue
        try:
            tools.append(tool_of(obj))
        except ToolError as exc:
            if spec is not None:
                raise _located(spec, where, str(exc)) from exc
            raise _python_error(caller or _caller(), where, str(exc)) from exc
    return tools


def _build_tools(
    spec: AgentSpec,
    *,
    extra: Sequence[BaseTool] = (),
    shared_state: SharedState = PROCESS_STATE,
) -> list[tuple[str, BaseTool]]:
    from leanloop.exceptions import ToolError  # noqa: PLC0415

    try:
        agent_tools = {
            f"{AGENT_PREFIX}{name}": agent_tool(
                sub.name, sub.description, LLMAgent.from_spec(sub, shared_state=shared_state)
            )
            for name, sub in spec.sub_agents.items()
        }
        return build_tools_by_ref(
            spec.tools,
            workspace=spec.workspace,
            # A run hands the tools its request's paths with each call (ToolRunner); outside
            # a run the request names nothing.
            path_hints=_names_nothing,
            # A run hands them its decision on repair too: the agent's setting, else the
            # run's profile, which may follow what the server serves and is not known
            # before the run asks it. Outside a run only an explicit setting repairs.
            repair_paths=spec.repair_paths is True,
            mcp_servers=spec.mcp_servers,
            extra=extra,
            prebuilt=agent_tools,
            near=_near(spec),
            # run_command's entry settings, and the call limit it stops a command under.
            tool_options={option.ref: option for option in spec.tool_options},
            tool_timeout=spec.tool_timeout,
        )
    except ToolError as exc:
        raise _located(spec, "tools", str(exc)) from exc


def _names_nothing() -> list[str]:
    return []


def _policies(spec: AgentSpec, built: list[tuple[str, BaseTool]]) -> dict[str, ToolPolicy]:
    """Each tool's own timeout and retries, from the ``tools`` entries written as mappings."""
    options = {option.ref: option for option in spec.tool_options}
    return {
        tool.name: ToolPolicy(timeout=options[ref].timeout, retries=options[ref].retries)
        for ref, tool in built
        if ref in options
    }


def _approval(
    spec: AgentSpec, built: Sequence[tuple[str, BaseTool]]
) -> dict[str, tuple[DecisionName, ...]]:
    """Per tool name whose calls ask a person first, the decisions allowed (ADR 0037)."""
    options = {option.ref: option for option in spec.tool_options}
    asks: dict[str, tuple[DecisionName, ...]] = {}
    for ref, tool in built:
        option = options.get(ref)
        if asks_approval(ref, option.approval if option is not None else None):
            asks[tool.name] = option.approve_decisions if option is not None else ALL_DECISIONS
    return asks


def _ask_when(
    spec: AgentSpec, built: Sequence[tuple[str, BaseTool]]
) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per tool name that asks only on a condition, its ``(argument, regex)`` pairs."""
    options = {option.ref: option for option in spec.tool_options}
    return {
        tool.name: option.ask_when
        for ref, tool in built
        if (option := options.get(ref)) is not None and option.ask_when
    }
