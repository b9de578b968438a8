"""The lean path (issue 40): the model's generation and a tool's coroutine called directly
when nothing is configured that would see the call, LangChain's path when something is.

A handler that records ``on_chat_model_start`` and ``on_tool_start`` shows the normal path
(callbacks fire) when it is configured in the run's config, on the model or on the tool;
spies on the lean calls show which path each call took. The run's outcome is the same
either way: the same replies reach the model, a failing tool is a message to the model.
"""

# No ``from __future__ import annotations``: pydantic resolves the tools' annotations.

import time
from dataclasses import asdict
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field, ValidationError

import leanloop.loop.requests as requests_module
from leanloop.agent import LLMAgent
from leanloop.loop import lean
from leanloop.report import RESULT_PREVIEW_CHARS, RunReport, ToolCallRecord, prompt_totals
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.tools import _lean, _watchdog
from leanloop.tools._lean import LeanTool, lean_tool


class Recorder(BaseCallbackHandler):
    """Records the starts LangChain's path sends."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.events.append("chat_model_start")

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.events.append(f"tool_start {serialized['name']}")


class AsyncRecorder(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.events: list[str] = []

    async def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.events.append("chat_model_start")

    async def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.events.append("tool_start")


async def _lookup(key: str) -> str:
    """Return the value stored under a key."""
    return f"value of {key}"


async def _lookup_with_config(key: str, config: RunnableConfig) -> str:
    """Return the value stored under a key, and whether the call's config came along."""
    return f"value of {key}; configurable: {sorted(config.get('configurable') or {})}"


async def _fails(key: str) -> str:
    """Always refuses."""
    raise ToolException(f"no entry named {key}")


def _tool(coroutine: Any = _lookup, name: str = "lookup") -> StructuredTool:
    return StructuredTool.from_function(coroutine=coroutine, name=name)


def _model(**fields: Any) -> ScriptedChatModel:
    call = {"name": "lookup", "args": {"key": "a"}, "id": "c1"}
    return ScriptedChatModel(
        replies=[{"tool_calls": [call]}, {"content": "The value is a."}], **fields
    )


def _agent(model: ScriptedChatModel, tools: list[StructuredTool] | None = None) -> LLMAgent:
    spec = AgentSpec(
        name="lean",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", context_window=100_000),
        max_rounds=4,
    )
    return LLMAgent.from_spec(spec, model=model, tools=tools or [_tool()])


class Spies:
    def __init__(self) -> None:
        self.models = 0
        self.tools = 0


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> Spies:
    """Counts the calls that took the lean path (model generations, tool coroutines)."""
    counted = Spies()
    generate, call = lean.lean_generate, LeanTool.call

    async def lean_generate(*args: Any, **kwargs: Any) -> Any:
        counted.models += 1
        return await generate(*args, **kwargs)

    async def lean_call(self: LeanTool, *args: Any, **kwargs: Any) -> Any:
        counted.tools += 1
        return await call(self, *args, **kwargs)

    monkeypatch.setattr(requests_module, "lean_generate", lean_generate)
    monkeypatch.setattr(LeanTool, "call", lean_call)
    return counted


def _configs() -> list[RunnableConfig]:
    """Nothing configured (the lean path), then a handler (LangChain's path)."""
    return [RunnableConfig(), RunnableConfig(callbacks=[Recorder()])]


def _tool_results(model: ScriptedChatModel) -> list[str]:
    return [str(m.content) for m in model.requests[-1].messages if isinstance(m, ToolMessage)]


async def test_with_nothing_configured_both_calls_take_the_lean_path(spies: Spies) -> None:
    model = _model()

    reply = await _agent(model).ainvoke("What is a?")

    assert reply.text == "The value is a."
    assert (spies.models, spies.tools) == (2, 1)
    assert _tool_results(model) == ["value of a"]
    assert reply.response_metadata["leanloop"]["stop_reason"] == "answer"


async def test_a_langchain_core_without_the_private_helpers_runs_on_langchains_path(
    spies: Spies, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lean, "_HELPERS", False)
    monkeypatch.setattr(_lean, "_HELPERS", False)
    model = _model()

    reply = await _agent(model).ainvoke("What is a?")

    assert reply.text == "The value is a."
    assert _tool_results(model) == ["value of a"]
    assert (spies.models, spies.tools) == (0, 0)


@pytest.mark.parametrize("handler", [Recorder, AsyncRecorder])
async def test_callbacks_in_the_config_take_langchains_path_and_fire(
    spies: Spies, handler: type[Recorder] | type[AsyncRecorder]
) -> None:
    recorder = handler()
    model = _model()

    reply = await _agent(model).ainvoke("What is a?", config={"callbacks": [recorder]})

    assert reply.text == "The value is a."
    assert (spies.models, spies.tools) == (0, 0)
    assert recorder.events.count("chat_model_start") == 2, recorder.events
    assert sum(e.startswith("tool_start") for e in recorder.events) == 1, recorder.events
    assert _tool_results(model) == ["value of a"]


async def test_callbacks_on_the_model_take_langchains_path_for_the_model(spies: Spies) -> None:
    recorder = Recorder()
    model = _model(callbacks=[recorder])

    reply = await _agent(model).ainvoke("What is a?")

    assert reply.text == "The value is a."
    assert recorder.events == ["chat_model_start", "chat_model_start"]
    # The model's own callbacks are the model's (LangChain's too): the tool stays lean.
    assert (spies.models, spies.tools) == (0, 1)


async def test_callbacks_on_the_tool_take_langchains_path_for_the_tool(spies: Spies) -> None:
    recorder = Recorder()
    tool = _tool()
    tool.callbacks = [recorder]

    reply = await _agent(_model(), [tool]).ainvoke("What is a?")

    assert reply.text == "The value is a."
    assert recorder.events == ["tool_start lookup"]
    assert (spies.models, spies.tools) == (2, 0)


async def test_a_failing_tool_is_a_message_to_the_model_on_either_path(spies: Spies) -> None:
    results = []
    for config in _configs():
        model = _model()
        await _agent(model, [_tool(_fails, "lookup")]).ainvoke("What is a?", config=config)
        results.append(_tool_results(model))

    assert results[0] == results[1] == ["error: no entry named a"]
    assert spies.tools == 1  # the first run's call was lean, the second's not


async def test_a_tool_that_takes_a_config_gets_the_calls_config_on_the_lean_path(
    spies: Spies,
) -> None:
    results = []
    for config in _configs():
        model = _model()
        tool = _tool(_lookup_with_config)
        await _agent(model, [tool]).ainvoke("What is a?", config=config)
        results.append(_tool_results(model))

    # The registry's context for the call reaches the tool on both paths.
    assert results[0] == results[1] == ["value of a; configurable: ['leanloop_tool_call']"]
    assert spies.tools == 1


async def test_the_lean_reply_is_the_reply_langchain_gives(spies: Spies) -> None:
    replies = []
    for config in _configs():
        model = _model()
        await _agent(model).ainvoke("What is a?", config=config)
        replies.append([m for m in model.requests[-1].messages if isinstance(m, AIMessage)][-1])

    lean, normal = replies
    assert lean.tool_calls == normal.tool_calls
    assert lean.response_metadata == normal.response_metadata
    assert str(lean.id).startswith("lc_run--") and str(normal.id).startswith("lc_run--")
    assert spies.models == 2


def test_a_tool_class_with_its_own_run_has_no_lean_path() -> None:
    class Own(StructuredTool):
        async def _arun(self, *args: Any, **kwargs: Any) -> Any:
            return "own"

    own = Own(name="own", description="d", args_schema=_tool().args_schema, coroutine=_lookup)

    assert lean_tool(own) is None
    assert lean_tool(_tool()) is not None


def test_what_a_tool_is_read_for_is_read_once_per_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = _lean._lean_tool

    def counting(tool: Any) -> Any:
        made.append(tool.name)
        return real(tool)

    monkeypatch.setattr(_lean, "_lean_tool", counting)
    tool = _tool()

    first, again = lean_tool(tool), lean_tool(tool)

    assert first is again and made == ["lookup"]
    tool.coroutine = _fails  # a new function: read again
    assert lean_tool(tool) is not first and made == ["lookup", "lookup"]


class Point(BaseModel):
    x: int
    y: int = 0


async def _many(
    name: str,
    count: int = 3,
    point: Point | None = None,
    tags: list[str] | None = None,
    flag: bool = False,
) -> str:
    """A tool with defaults, a nested model and coerced values."""
    return f"{name} {count} {point} {tags} {flag}"


async def _none() -> str:
    """A tool without arguments."""
    return "none"


class Aliased(BaseModel):
    path: str = Field(alias="file")
    limit: int = 10


async def _aliased(path: str, limit: int = 10) -> str:
    """A tool whose schema names an argument by an alias."""
    return f"{path} {limit}"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        (_tool(_many, "many"), {"name": "a"}),
        (_tool(_many, "many"), {"name": "a", "count": "7", "point": {"x": "1"}}),
        (_tool(_many, "many"), {"name": "a", "tags": ["t"], "flag": "true", "count": 2}),
        (_tool(_none, "none"), {}),
        (
            StructuredTool.from_function(coroutine=_aliased, name="al", args_schema=Aliased),
            {"file": "a.txt"},
        ),
    ],
)
def test_the_cached_argument_reading_is_langchains(
    tool: StructuredTool, args: dict[str, Any]
) -> None:
    lean = lean_tool(tool)
    assert lean is not None and lean.schema is not None

    assert lean.schema.parse(args) == tool._to_args_and_kwargs(dict(args), None)[1]


def test_a_value_the_schema_refuses_fails_as_under_langchain() -> None:
    tool = _tool(_many, "many")
    lean = lean_tool(tool)
    assert lean is not None and lean.schema is not None

    with pytest.raises(ValidationError) as ours:
        lean.schema.parse({"name": "a", "count": "many"})
    with pytest.raises(ValidationError) as theirs:
        tool._to_args_and_kwargs({"name": "a", "count": "many"}, None)
    assert ours.value.errors() == theirs.value.errors()


def _report_with_calls() -> RunReport:
    report = RunReport(question="q?")
    report.tool_calls.append(
        ToolCallRecord(
            step=1,
            name="lookup",
            args={"key": "a", "nested": {"x": [1, 2]}},
            chars_out=9_000,
            chars_raw=9_000,
            notes=["a note"],
            result_preview="x" * 9_000,
            sub_report={"steps": 1},
        )
    )
    report.events.append("an event")
    report.approvals.append({"step": 1, "decision": "approve"})
    return report


def test_the_hand_written_dict_is_the_dataclass_dump_with_the_preview_cut() -> None:
    report = _report_with_calls()
    record = report.tool_calls[0]

    data = report.to_dict()

    expected = asdict(report)
    expected["repaired_calls"] = report.repaired_calls
    expected.update(prompt_totals(expected["requests"]))
    expected["tool_calls"][0]["fate"] = record.fate
    expected["tool_calls"][0]["result_preview"] = "x" * RESULT_PREVIEW_CHARS
    del expected["pending_calls"], expected["edits"]
    assert data == expected
    # The record keeps the whole result (the history's string, no copy); the dump cuts it.
    assert len(record.result_preview or "") == 9_000
    # Lists and dicts are the dump's own: changing them leaves the report as it was.
    data["events"].append("more")
    data["tool_calls"][0]["notes"].append("more")
    assert report.events == ["an event"] and record.notes == ["a note"]


def test_the_watchdog_is_woken_only_by_a_deadline_that_comes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watchdog = _watchdog._Watchdog()  # a fresh one: its own thread, none of others' calls
    wakes: list[float] = []
    notify = watchdog._wake.notify

    def counting(n: int = 1) -> None:
        wakes.append(time.monotonic())
        notify(n)

    monkeypatch.setattr(watchdog._wake, "notify", counting)
    codes = frozenset({_lookup.__code__})
    first = _watchdog.Watch(60.0, codes)
    watchdog.add(first)  # starts the thread: it reads the deadline itself
    later = [_watchdog.Watch(60.0, codes) for _ in range(20)]
    for watched in later:  # one limit: each deadline after the first
        watchdog.add(watched)
    assert wakes == []

    watchdog.add(_watchdog.Watch(0.001, codes))  # comes first: the thread must wake
    assert len(wakes) == 1
    for watched in [first, *later]:
        assert watched.settle() is None
    assert watchdog._thread is not None and watchdog._thread.is_alive()


def test_the_watchdog_keeps_settled_calls_only_until_its_heap_doubles() -> None:
    watchdog = _watchdog._Watchdog()  # a fresh one: its own thread, none of others' calls
    codes = frozenset({_lookup.__code__})
    running = [_watchdog.Watch(60.0, codes) for _ in range(10)]
    for watched in running:
        watchdog.add(watched)
    for _ in range(1_000):  # calls that end at once, as most do
        ended = _watchdog.Watch(60.0, codes)
        watchdog.add(ended)
        ended.settle()

    held = [entry[2] for entry in watchdog._due]
    assert len(held) <= 2 * _watchdog._COMPACT_MIN  # not the 1,010 of every call's minute
    assert all(watched in held for watched in running)  # the live ones are still watched
