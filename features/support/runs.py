"""Agents around a scripted model, run and recorded: the shared state of the loop scenarios.

A scenario sets up what its agent needs (:func:`setup`: the workspace, an extraction
model, settings for every agent, agents loaded from a file), builds one agent from
settings and a reply script (:func:`start`, see :mod:`support.script` for the script),
asks it (:func:`ask` and its kin) and checks ``context.agent_run`` (:class:`AgentRun`):
the requests the scripted model saw, the answer, the report, the events, the chunks.

Settings are ``key value`` pairs separated by commas, values in JSON where they parse
(``tools "lookup, read_file", window 8000, tool_mode "text", trim_tool_results false``).
Besides the fields of :class:`~leanloop.spec.types.AgentSpec` they are:

- ``tools "a, b"``: the tools, in order: the built-in workspace tools (built from the spec,
  as ``LLMAgent.from_file`` builds them) and the test tools of :data:`TEST_TOOLS`.
- ``window N`` / ``model "name"``: the model's context window / name (else a name of its
  own, so that the process-wide token estimator of each agent starts fresh).
- ``report_usage true``: the model reports token usage with each reply.
- ``stream_pieces N``: the model really streams, each reply in ``N``-character pieces.
- ``bind_tools false``: a model that cannot bind tools (LangChain's generic fake model);
  ``bind_tools "raises"``: one whose ``bind_tools`` override raises NotImplementedError.
- ``repeat_last true``: the script repeats its last reply once used up.
- ``peers N``: ``wait_for_peers`` returns only once ``N`` calls of it have started.
- ``spec "name"``: start from the agent ``name`` of the loaded agents file (its own
  tools and model; the settings for every agent do not apply).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from behave.runner import Context
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from leanloop.agent import LLMAgent
from leanloop.events import EventRecorder
from leanloop.exceptions import LeanloopError
from leanloop.protocol.modes import is_tools_refusal
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.tools import BUILTIN_TOOLS
from support import script
from support.aio import run as run_async
from support.aio import run_virtual

__all__ = [
    "TEST_TOOLS",
    "AgentRun",
    "Setup",
    "ask",
    "ask_failing",
    "ask_streaming",
    "ask_through_events",
    "current",
    "long_question",
    "parse_settings",
    "setup",
    "start",
    "start_twin",
]

_CLASS = "leanloop.testing:ScriptedChatModel"
_names = itertools.count(1)
_OWN_KEYS = {
    "tools",
    "window",
    "model",
    "report_usage",
    "stream_pieces",
    "bind_tools",
    "repeat_last",
    "peers",
    "spec",
}
PRUNE_RUN = "leanloop.prune"
"""The run name of the extraction calls (what tells them from the main model's)."""


# --- settings ------------------------------------------------------------------------

_SETTING = re.compile(r'\s*(?P<key>\w+)\s+(?P<value>"(?:[^"\\]|\\.)*"|[^,]+?)\s*(?:,|$)')


def parse_settings(text: str) -> dict[str, Any]:
    """``tools "lookup", window 8000, trim_tool_results false`` as a dict."""
    settings: dict[str, Any] = {}
    at = 0
    while at < len(text.rstrip()):
        item = _SETTING.match(text, at)
        if item is None:
            msg = f"cannot read the settings from {text[at:]!r} (want: key value, key value)"
            raise ValueError(msg)
        try:
            value = json.loads(item["value"])
        except ValueError:
            value = item["value"]
        if item["key"] == "tools":
            value = [name.strip() for name in str(value).split(",") if name.strip()]
        settings[item["key"]] = value
        at = item.end()
    return settings


# --- what a scenario sets up before its agent ----------------------------------------


@dataclass
class Setup:
    """What the Givens before an agent prepared for it."""

    context: Context
    workspace_dir: Path | None = None
    extractor: BaseChatModel | None = None
    """The extraction model of agents with ``allow_tool_output_pruning``."""
    presets: dict[str, Any] = field(default_factory=dict)
    """Settings for every agent built from scratch (a scenario's own settings win)."""
    specs: dict[str, AgentSpec] = field(default_factory=dict)
    """Agents loaded from a file, for the ``spec`` setting."""
    virtual_time: bool = False
    """Ask the agents on virtual time (:func:`support.aio.run_virtual`, ADR 0027). For Givens
    whose models answer after a ``delay`` or ``hang``: a timeout then costs no real time, and
    one no longer honoured fails at once. Not for runs whose work waits in threads the loop
    does not know (a session store's connection thread)."""

    @property
    def workspace(self) -> Path:
        """The scenario's workspace folder (made on first use)."""
        if self.workspace_dir is None:
            self.workspace_dir = self.context.tmp / "ws"
            self.workspace_dir.mkdir()
            # A file just outside the workspace, for the scenarios that try to escape it.
            (self.context.tmp / "secret.txt").write_text("outside\n", encoding="utf-8")
        return self.workspace_dir


def setup(context: Context) -> Setup:
    """The scenario's :class:`Setup` (made on first use)."""
    found = getattr(context, "agent_setup", None)
    if found is None:
        found = context.agent_setup = Setup(context)
    return found


# --- tools ---------------------------------------------------------------------------


@dataclass
class ToolCall:
    """One call a tool received: exactly its arguments, and what it returned."""

    name: str
    args: dict[str, Any]
    output: str | None = None


@dataclass
class ToolBox:
    """What the tools of one agent received and returned, in the order they were called."""

    peers: int = 0
    calls: list[ToolCall] = field(default_factory=list)
    _started: int = 0
    _all_started: asyncio.Event | None = None

    def received(self, name: str) -> list[dict[str, Any]]:
        return [call.args for call in self.calls if call.name == name]

    def outputs(self, name: str) -> list[str]:
        return [c.output for c in self.calls if c.name == name and c.output is not None]

    async def wait_for_peers(self) -> None:
        """Return once ``peers`` calls have started (proves that they overlap)."""
        if self._all_started is None:
            self._all_started = asyncio.Event()
        self._started += 1
        if self._started >= self.peers:
            self._all_started.set()
        await asyncio.wait_for(self._all_started.wait(), timeout=5)


class RecordingTool(BaseTool):
    """A tool that records exactly the arguments it is called with, before any defaults.

    Its schema is a plain JSON Schema, so LangChain hands the arguments over untouched
    (a pydantic schema would fill in defaults and hide what the caller really sent).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any
    """``async (args) -> result``: what the tool does."""
    box: Any
    """The :class:`ToolBox` to record into."""

    def _run(self, **kwargs: Any) -> str:
        raise NotImplementedError("the test tools run asynchronously only")

    async def _arun(self, **kwargs: Any) -> Any:
        call = ToolCall(self.name, dict(kwargs))
        self.box.calls.append(call)
        result = await self.inner(dict(kwargs))
        call.output = str(result)
        return result


def _recording(tool: BaseTool, box: ToolBox) -> BaseTool:
    """``tool`` behind the same name, description and schema, recording its exact input."""
    parameters = convert_to_openai_tool(tool)["function"]["parameters"]
    return RecordingTool(
        name=tool.name,
        description=tool.description,
        args_schema=parameters,
        inner=tool.ainvoke,
        box=box,
    )


def _test_tool(
    name: str, description: str, properties: dict[str, Any], inner: Callable[..., Awaitable[str]]
) -> Callable[[ToolBox], BaseTool]:
    schema = {"type": "object", "properties": properties, "required": [next(iter(properties))]}

    def make(box: ToolBox) -> BaseTool:
        async def call(args: dict[str, Any]) -> str:
            return await inner(box, **args)

        return RecordingTool(
            name=name, description=description, args_schema=schema, inner=call, box=box
        )

    return make


async def _lookup(box: ToolBox, key: str, **rest: Any) -> str:
    return f"value of {key}"


async def _bulky(box: ToolBox, key: str) -> str:
    lines = [f"{key} detail {i:02d} " + "z" * 36 for i in range(50)]
    return "\n".join([f"bulky {key} begins", *lines])


async def _huge(box: ToolBox, key: str) -> str:
    return "\n".join(f"{key} row {i} " + "y" * 60 for i in range(800))


async def _wait_for_peers(box: ToolBox, label: str) -> str:
    await box.wait_for_peers()
    return f"done {label}"


async def _explode(box: ToolBox, reason: str) -> str:
    raise RuntimeError(f"it broke: {reason}")


_DOCS = {
    "bio.txt": "Ada Lovelace (1815-1852) published the first algorithm for a computing machine.",
    "notes.txt": "Meeting notes: the launch moved to Tuesday.",
    # A document as large as a bulky result (about 2,500 characters), for trimming.
    "manual.txt": "\n".join(
        [
            "Pump manual: the pump restarts on its own after a power cut.",
            *(f"manual section {i:02d} " + "m" * 32 for i in range(50)),
        ]
    ),
}
"""What ``read_doc`` reads: a user's own reader, not a workspace (issue 37)."""


async def _read_doc(box: ToolBox, name: str) -> str:
    if name not in _DOCS:
        raise FileNotFoundError(f"no document named {name!r}")
    return _DOCS[name]


_KEY = {"key": {"type": "string"}}
TEST_TOOLS: dict[str, Callable[[ToolBox], BaseTool]] = {
    "lookup": _test_tool(
        "lookup",
        "Look up a key in the test table.",
        {**_KEY, "limit": {"type": "integer"}},
        _lookup,
    ),
    # A tool that declares properties named like the pruning meta-arguments.
    "lookup_with_meta_names": _test_tool(
        "lookup_with_meta_names",
        "Look up a key in the test table.",
        {
            **_KEY,
            "output_prune": {"type": "boolean"},
            "output_prune_context": {"type": "string"},
        },
        _lookup,
    ),
    "bulky": _test_tool(
        "bulky", "Return a long report about key (about 2,500 characters).", _KEY, _bulky
    ),
    "huge": _test_tool(
        "huge", "Return a very long dump about key (about 57,000 characters).", _KEY, _huge
    ),
    "wait_for_peers": _test_tool(
        "wait_for_peers",
        "Returns only once every expected call has started (proves they overlap).",
        {"label": {"type": "string"}},
        _wait_for_peers,
    ),
    "explode": _test_tool("explode", "Always fails.", {"reason": {"type": "string"}}, _explode),
    # A user's own function that reads a named document (leanloop.tools.readers).
    "read_doc": _test_tool(
        "read_doc", "Read a document by its name.", {"name": {"type": "string"}}, _read_doc
    ),
}
"""The test tools a scenario can name in ``tools``, besides the built-in ones."""


def _tools(spec: AgentSpec, model: BaseChatModel, names: list[str], box: ToolBox) -> list[BaseTool]:
    # The built-in tools as an agent built from a file has them (path help, repair_paths).
    wired = {t.name: t for t in LLMAgent.from_spec(spec, model=model).tools}
    unknown = [n for n in names if n not in wired and n not in TEST_TOOLS]
    assert not unknown, f"no test tool {unknown}: pick from {sorted(TEST_TOOLS)}"
    made = [wired[n] if n in wired else TEST_TOOLS[n](box) for n in names]
    return [t if isinstance(t, RecordingTool) else _recording(t, box) for t in made]


# --- models --------------------------------------------------------------------------


class StreamingScriptedModel(ScriptedChatModel):
    """A scripted model that really streams: each reply arrives in ``piece``-sized chunks.

    ``ScriptedChatModel`` does not stream (LangChain would hand over the whole reply as
    one chunk), which would hide every hold-back decision the loop makes mid-reply.
    """

    piece: int = 3
    """Characters per streamed chunk."""

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        message = self._generate(messages, stop, None, **kwargs).generations[0].message
        text = message.text
        for start in range(0, len(text), self.piece):
            chunk = AIMessageChunk(content=text[start : start + self.piece])
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=None)
            yield ChatGenerationChunk(message=chunk)
        calls = getattr(message, "tool_calls", None) or []
        if calls:
            chunks = [
                {
                    "name": c["name"],
                    "args": json.dumps(c["args"]),
                    "id": c["id"],
                    "index": i,
                    "type": "tool_call_chunk",
                }
                for i, c in enumerate(calls)
            ]
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=chunks))


class _BindRefusingModel(GenericFakeChatModel):
    """Overrides ``bind_tools`` only to call BaseChatModel's, which raises NotImplementedError."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return super().bind_tools(tools, **kwargs)


def _model(own: dict[str, Any], replies: list[Any]) -> BaseChatModel:
    if own.get("bind_tools", True) in (False, "raises"):
        assert all(isinstance(r, str) for r in replies), "a generic fake model only says text"
        kind = _BindRefusingModel if own["bind_tools"] == "raises" else GenericFakeChatModel
        return kind(messages=iter([AIMessage(content=r) for r in replies]))
    kind = StreamingScriptedModel if "stream_pieces" in own else ScriptedChatModel
    extra = {"piece": own["stream_pieces"]} if "stream_pieces" in own else {}
    return kind(
        replies=replies,
        report_usage=bool(own.get("report_usage", False)),
        repeat_last=bool(own.get("repeat_last", False)),
        **extra,
    )


# --- the run -------------------------------------------------------------------------


@dataclass
class Seen:
    """One chat-model request as the callbacks saw it (for models that keep no log)."""

    model: str
    """``main`` or ``prune`` (an extraction call)."""
    messages: list[BaseMessage]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = None


class RunRecorder(EventRecorder):
    """The custom events and the chat-model requests of runs, in the order they came.

    ``events`` holds ``("request", {"model": "main" | "prune", ...})`` for every request
    besides the custom events.
    """

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Seen] = []

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        who = "prune" if kwargs.get("name") == PRUNE_RUN else "main"
        params = kwargs.get("invocation_params") or {}
        self.requests.append(Seen(who, list(messages[0]), list(params.get("tools") or [])))
        self.events.append(("request", {"model": who, "messages": len(messages[0])}))


@dataclass
class AgentRun:
    """One agent around a scripted model, and what happened when it was asked."""

    agent: LLMAgent
    model: BaseChatModel
    box: ToolBox
    settings: dict[str, Any]
    script: list[str]
    tools_before: list[dict[str, Any]]
    """The tool schemas as built, before any run."""
    recorder: RunRecorder = field(default_factory=RunRecorder)
    answer: AIMessage | None = None
    failure: Exception | None = None
    chunks: list[AIMessageChunk] = field(default_factory=list)
    """What ``astream`` yielded."""
    stream_events: list[dict[str, Any]] = field(default_factory=list)
    """What ``astream_events`` (v2) yielded."""
    answers: list[Any] = field(default_factory=list)
    """Answers of batched or chained runs."""
    caller_messages: list[BaseMessage] = field(default_factory=list)
    caller_snapshot: list[BaseMessage] = field(default_factory=list)
    twin: AgentRun | None = None
    """A second agent with the same script (see :func:`start_twin`)."""
    virtual_time: bool = False
    """:func:`ask` runs it on virtual time (from :attr:`Setup.virtual_time`)."""

    @property
    def config(self) -> RunnableConfig:
        return {"callbacks": [self.recorder]}

    @property
    def report(self) -> dict[str, Any]:
        """The run report of the answer, or of the last streamed chunk."""
        if self.answer is not None:
            return dict(self.answer.response_metadata["leanloop"])
        assert self.chunks, "the agent has not answered"
        report = self.chunks[-1].response_metadata.get("leanloop")
        assert isinstance(report, dict), self.chunks[-1].response_metadata
        return report

    @property
    def requests(self) -> list[Any]:
        """The main model's requests (``messages``, ``tools``, ``tool_choice``), oldest first."""
        if isinstance(self.model, ScriptedChatModel):
            return list(self.model.requests)
        return [seen for seen in self.recorder.requests if seen.model == "main"]

    def request(self, n: int) -> Any:
        requests = self.requests
        assert len(requests) >= n, f"the model received only {len(requests)} requests"
        return requests[n - 1]

    @property
    def extraction_requests(self) -> list[Any]:
        """The requests of the separate extraction (pruning) model."""
        extractor = self.agent.pruning_model
        assert isinstance(extractor, ScriptedChatModel), "the agent has no scripted extractor"
        return list(extractor.requests)

    @property
    def timeline(self) -> list[tuple[str, dict[str, Any]]]:
        """Custom events and ``request`` entries, in the order the run produced them."""
        return self.recorder.events

    def events(self, name: str) -> list[dict[str, Any]]:
        """The payloads of the custom events called ``name``."""
        return self.recorder.named(name)

    @property
    def window(self) -> int | None:
        return self.agent.spec.model.context_window


def _spec(setup: Setup, own: dict[str, Any], fields: dict[str, Any]) -> AgentSpec:
    builtin = tuple(name for name in own.get("tools", ()) if name in BUILTIN_TOOLS)
    if "spec" in own:
        base = setup.specs[own["spec"]]
        model = base.model
        if "window" in own or "model" in own:
            model = dataclasses.replace(
                model,
                context_window=own.get("window", model.context_window),
                model=own.get("model", model.model),
            )
        if "tools" in own:
            fields = {**fields, "tools": builtin}
        return dataclasses.replace(base, model=model, **fields)
    model = ModelSpec(
        class_path=_CLASS,
        # A name of its own: the token estimator is shared per (endpoint, model) in the process.
        model=own.get("model") or f"scripted-{next(_names)}",
        context_window=own.get("window"),
    )
    return AgentSpec(
        name="tester", model=model, tools=builtin, workspace=setup.workspace_dir, **fields
    )


def _build(setup: Setup, settings: dict[str, Any], cells: list[str]) -> AgentRun:
    own = {k: v for k, v in settings.items() if k in _OWN_KEYS}
    fields = {k: v for k, v in settings.items() if k not in _OWN_KEYS}
    model = _model(own, script.replies(cells, workspace=setup.workspace_dir))
    spec = _spec(setup, own, fields)
    box = ToolBox(peers=int(own.get("peers", 0)))
    names = own["tools"] if "tools" in own else list(spec.tools)
    tools = _tools(spec, model, names, box)
    extractor = setup.extractor if spec.allow_tool_output_pruning else None
    agent = LLMAgent.from_spec(spec, model=model, tools=tools, pruning_model=extractor)
    before = [convert_to_openai_tool(t) for t in tools]
    run = AgentRun(agent, model, box, settings, cells, before)
    run.virtual_time = setup.virtual_time
    return run


def start(
    context: Context, settings: Mapping[str, Any], cells: list[str] | None = None
) -> AgentRun:
    """Build the scenario's agent from ``settings`` and the script (the step's table)."""
    bench = setup(context)
    merged = dict(settings) if "spec" in settings else {**bench.presets, **settings}
    if cells is None:
        cells = [row["reply"] for row in context.table]
    context.agent_run = _build(bench, merged, cells)
    return context.agent_run


def start_twin(context: Context, overrides: Mapping[str, Any]) -> AgentRun:
    """A second agent with the scenario agent's script and settings, ``overrides`` applied."""
    first = current(context)
    first.twin = _build(setup(context), {**first.settings, **overrides}, first.script)
    return first.twin


def current(context: Context) -> AgentRun:
    """The scenario's agent run."""
    found = getattr(context, "agent_run", None)
    assert found is not None, "the scenario has built no agent"
    return found


# --- asking --------------------------------------------------------------------------


def long_question(size: int) -> str:
    """A question of exactly ``size`` characters."""
    line = "Please consider this background carefully before you answer. "
    return (line * (size // len(line) + 1))[:size]


def _unexpected(run: AgentRun, exc: LeanloopError) -> AssertionError:
    msg = f"the run failed instead of answering: {type(exc).__name__}: {exc}"
    refused = [c.removeprefix("refuse ") for c in run.script if c.startswith("refuse tools ")]
    cause = exc.__cause__
    if refused and cause is not None and not is_tools_refusal(cause):
        msg += (
            f"\nleanloop.protocol.modes.is_tools_refusal does not recognise the refusal of "
            f"{refused[0]!r}, so auto mode did not fall back to text"
        )
    elif refused:
        msg += (
            f"\nis_tools_refusal recognises the refusal of {refused[0]!r}, yet the loop did not "
            "fall back: AgentLoop._can_fall_back_to_text saw tools_ran (set by the prefetch of "
            "files named in the request)"
        )
    return AssertionError(msg)


def ask(run: AgentRun, question: Any, *, sync: bool = False, virtual: bool | None = None) -> None:
    """Run the agent to its answer (``ainvoke``, or ``invoke`` with ``sync``).

    ``virtual``: run ``ainvoke`` on virtual time (``None``: as the run's ``virtual_time``
    says); a run still going after an hour of it fails.
    """
    try:
        if sync:
            run.answer = run.agent.invoke(question, run.config)
        elif run.virtual_time if virtual is None else virtual:
            run.answer = run_virtual(run.agent.ainvoke(question, run.config))
        else:
            run.answer = run_async(run.agent.ainvoke(question, run.config))
    except LeanloopError as exc:
        raise _unexpected(run, exc) from exc


def ask_failing(run: AgentRun, question: str) -> None:
    """Run the agent on a message list expected to fail; keep the failure and the list."""
    run.caller_messages = [HumanMessage(content=question)]
    run.caller_snapshot = [m.model_copy(deep=True) for m in run.caller_messages]
    try:
        answer = run_async(run.agent.ainvoke(run.caller_messages, run.config))
    except LeanloopError as exc:
        run.failure = exc
    else:
        raise AssertionError(f"the run was expected to fail but answered {answer.text!r}")


def ask_streaming(run: AgentRun, question: str, *, sync: bool = False) -> None:
    """Read the agent's ``astream`` (or ``stream``) to the end."""

    async def collect() -> list[AIMessageChunk]:
        return [chunk async for chunk in run.agent.astream(question, run.config)]

    chunks = list(run.agent.stream(question, run.config)) if sync else run_async(collect())
    assert chunks, "the stream yielded nothing"
    run.chunks = chunks


def ask_through_events(run: AgentRun, question: str) -> None:
    """Run the agent through ``astream_events`` (v2); keep the events and the answer."""

    async def collect() -> list[dict[str, Any]]:
        stream = run.agent.astream_events(question, run.config, version="v2")
        return [dict(event) async for event in stream]

    run.stream_events = run_async(collect())
    ends = [e for e in run.stream_events if e["event"] == "on_chain_end" and not e["parent_ids"]]
    assert len(ends) == 1, [e["event"] for e in run.stream_events]
    answer = ends[0]["data"]["output"]
    assert isinstance(answer, AIMessage), f"the run ended without an answer: {answer!r}"
    run.answer = answer
