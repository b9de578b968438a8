"""The prefetch, alone through its hook: the opening step reads what the request names."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, tool

from leanloop.loop.policies.hooks import Round, StepView
from leanloop.loop.policies.prefetch import Prefetch, PrefetchConfig
from leanloop.report import RunReport, ToolCallRecord

ViewMaker = Callable[..., StepView]


@tool
def read_file(path: str) -> str:
    """Read a file of the workspace."""
    return path


@tool
def read_doc(name: str) -> str:
    """Read a document by its name."""
    return name


@tool
def open_page(page: str) -> str:
    """Open a page of the wiki."""
    return page


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class FakeRound:
    """Runs step-0 calls as the tool round would: one record and one result each."""

    def __init__(self, report: RunReport, *, ok: bool = True) -> None:
        self.report, self.ok = report, ok
        self.calls: list[ToolCall] = []

    async def __call__(self, calls: Sequence[ToolCall]) -> Round:
        self.calls.extend(calls)
        messages: list[BaseMessage] = []
        for call in calls:
            record = ToolCallRecord(
                step=0, name=call["name"], args=call["args"], chars_out=4, chars_raw=4, ok=self.ok
            )
            self.report.tool_calls.append(record)
            messages.append(ToolMessage(content="text", tool_call_id=call["id"] or ""))
        return Round(messages, exhausted=False)


def _policy(tools: Sequence[BaseTool]) -> Prefetch:
    config = PrefetchConfig.for_tools(tools)
    assert config is not None
    return config.start()


async def test_the_files_the_request_names_are_read_as_step_zero(make_view: ViewMaker) -> None:
    view = make_view(named=["app.yaml", "logs/api.log"])
    ran = FakeRound(view.report)

    messages = await _policy([read_file, add]).at_start(view, ran)

    assert [c["args"] for c in ran.calls] == [{"path": "app.yaml"}, {"path": "logs/api.log"}]
    assert [c["id"] for c in ran.calls] == ["prefetch_0", "prefetch_1"]
    reply, *results = messages
    assert isinstance(reply, AIMessage) and reply.tool_calls == ran.calls
    assert all(isinstance(m, ToolMessage) for m in results) and len(results) == 2
    assert view.report.prefetched == ["app.yaml", "logs/api.log"]


async def test_in_text_mode_the_reply_writes_the_calls(make_view: ViewMaker) -> None:
    view = make_view(named=["app.yaml"], mode="text")

    reply, _ = await _policy([read_file]).at_start(view, FakeRound(view.report))

    assert isinstance(reply, AIMessage) and not reply.tool_calls
    assert "read_file" in reply.text and "app.yaml" in reply.text


async def test_a_request_that_names_nothing_makes_no_step(make_view: ViewMaker) -> None:
    view = make_view(named=[])
    ran = FakeRound(view.report)

    assert await _policy([read_file]).at_start(view, ran) == []
    assert ran.calls == []


async def test_a_reader_reads_the_words_that_look_like_files(make_view: ViewMaker) -> None:
    view = make_view(question="what does bio.txt say?")
    ran = FakeRound(view.report)

    messages = await _policy([read_doc, add]).at_start(view, ran)

    assert [c["args"] for c in ran.calls] == [{"name": "bio.txt"}]
    assert len(messages) == 2 and view.report.prefetched == ["bio.txt"]


async def test_a_reader_that_found_nothing_is_left_out(make_view: ViewMaker) -> None:
    view = make_view(question="what does bio.txt say?")

    messages = await _policy([read_doc]).at_start(view, FakeRound(view.report, ok=False))

    assert messages == []
    assert view.report.events == [
        "prefetch: read_doc found none of bio.txt; left out of the conversation"
    ]
    assert view.report.prefetched == []


def test_which_tool_prefetches() -> None:
    assert PrefetchConfig.for_tools([read_doc, read_file]) == PrefetchConfig()
    assert PrefetchConfig.for_tools([read_doc]) == PrefetchConfig(
        tool="read_doc", parameter="name", workspace=False
    )
    assert PrefetchConfig.for_tools([read_doc, open_page]) is None  # which one is a guess
    assert PrefetchConfig.for_tools([add]) is None
