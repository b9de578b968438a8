"""Steps for cut_streams.feature: a real ChatOpenAI against a server that cuts streams."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult

from leanloop import LLMAgent
from leanloop.exceptions import RunFailed
from leanloop.testing.server import FakeModelServer, Reply


def _reply(fault: str, text: str) -> Reply:
    """One planned streamed reply: ``cut`` stops before its finish and ``[DONE]``,
    ``cut-call`` halfway through a tool call's arguments, ``-`` is whole."""
    if fault == "cut-call":
        call = {"name": "read_file", "arguments": {"path": "notes.txt"}}
        return Reply(tool_calls=[call], fault="cut_call")
    return Reply(content=text, chunk_size=5, fault="cut" if fault == "cut" else "")


def _agents_file(context: Context, base_url: str) -> Path:
    (context.tmp / "workspace").mkdir(exist_ok=True)
    path = context.tmp / "agents.yaml"
    path.write_text(
        "version: 1\n"
        "models:\n"
        "  m:\n"
        "    provider: openai-compatible\n"
        "    model: m\n"
        f"    base_url: {base_url}\n"
        "    api_key: none\n"
        "    timeout: 5\n"
        "    context_window: 8192\n"
        "    kwargs: {max_retries: 0}\n"
        "agents:\n"
        "  a:\n"
        "    model: m\n"
        "    system_prompt: Answer.\n"
        "    tools: [read_file]\n"
        "    workspace: ./workspace\n"
        "    max_rounds: 3\n",
        encoding="utf-8",
    )
    return path


@given("a cut-stream server that replies:")
def given_server(context: Context) -> None:
    assert context.table is not None
    plan = [_reply(row["fault"], row["text"]) for row in context.table]
    # No /tokenize or /apply-template (404): the run counts its prompts itself. After the
    # plan, its last reply again.
    server = FakeModelServer(replies=plan, when_empty="repeat", tokenizer=None, template=None)
    context.cleanups.append(server.start().stop)
    context.cut_server = server
    context.cut_agent = LLMAgent.from_file(_agents_file(context, server.base_url))


@given('a cut-stream agent on a streaming test model that answers "{text}"')
def given_fake_model(context: Context, text: str) -> None:
    spec_agent = LLMAgent.from_file(_agents_file(context, "http://127.0.0.1:9/v1"))
    model = GenericFakeChatModel(messages=iter([AIMessage(content=text)]))
    context.cut_agent = LLMAgent.from_spec(spec_agent.spec, model=model, tools=[])


class _WaitingModel(BaseChatModel):
    """Waits forever for its reply; says when the request started and when it was cancelled."""

    started: Any
    cancelled: Any

    @property
    def _llm_type(self) -> str:
        return "waiting"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.started.set()
        try:
            await asyncio.Event().wait()  # nobody sets it: only the Ctrl-C's cancel ends it
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")


_WaitingModel.model_rebuild()


@given("a cut-stream agent whose model waits forever")
def given_waiting_model(context: Context) -> None:
    spec_agent = LLMAgent.from_file(_agents_file(context, "http://127.0.0.1:9/v1"))
    context.waiting = _WaitingModel(started=threading.Event(), cancelled=threading.Event())
    context.cut_agent = LLMAgent.from_spec(spec_agent.spec, model=context.waiting, tools=[])


@when('the cut-stream agent is asked "{question}" through astream')
def when_astream(context: Context, question: str) -> None:
    shown: list[str] = []
    context.cut_answer = None
    context.cut_failure = None

    async def run() -> None:
        async for chunk in context.cut_agent.astream(question):
            shown.append(chunk.text)
            if "leanloop" in chunk.response_metadata:
                context.cut_report = chunk.response_metadata["leanloop"]

    try:
        asyncio.run(run())
    except RunFailed as exc:
        context.cut_failure = exc
    context.cut_shown = "".join(shown)


@when("Ctrl-C reaches the caller's thread while invoke waits for the model")
def when_ctrl_c(context: Context) -> None:
    waiting = context.waiting
    main = threading.main_thread().ident
    assert main is not None and threading.current_thread() is threading.main_thread()

    def interrupt() -> None:
        if waiting.started.wait(10):
            time.sleep(0.1)
            signal.pthread_kill(main, signal.SIGINT)

    # A process started in the background of a non-interactive shell ignores SIGINT: the
    # step sets Python's own handler, so the Ctrl-C arrives wherever the suite runs.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt, daemon=True).start()
    context.interrupted = False
    try:
        context.cut_agent.invoke("Anything?")
    except KeyboardInterrupt:
        context.interrupted = True
        context.interrupted_at = time.monotonic()
    finally:
        signal.signal(signal.SIGINT, before)


@then('the cut-stream run answered "{text}"')
def then_answered(context: Context, text: str) -> None:
    assert context.cut_failure is None, f"the run failed: {context.cut_failure}"
    assert context.cut_report["stop_reason"] == "answer", context.cut_report["stop_reason"]
    assert context.cut_shown.strip() == text, repr(context.cut_shown)


@then('the cut-stream text shown was exactly "{text}"')
def then_shown(context: Context, text: str) -> None:
    assert context.cut_shown == text, repr(context.cut_shown)


@then("the cut-stream server saw {count:d} requests")
def then_requests(context: Context, count: int) -> None:
    requests = len(context.cut_server.exchanges)
    assert requests == count, requests


@then('the cut-stream report has an event mentioning "{text}"')
def then_event(context: Context, text: str) -> None:
    events = context.cut_report["events"]
    assert any(text in e for e in events), events


@then('the cut-stream run failed with an error mentioning "{text}"')
def then_failed(context: Context, text: str) -> None:
    failure = context.cut_failure
    assert failure is not None, f"the run answered: {context.cut_shown!r}"
    assert text in str(failure), str(failure)


@then('the cut-stream failure report has stop_reason "{reason}"')
def then_failure_reason(context: Context, reason: str) -> None:
    report = context.cut_failure.report
    assert report.stop_reason == reason, report.stop_reason
    assert "cut off" in (report.error or ""), report.error


@then("the cut-stream failure report has no tool calls")
def then_no_calls(context: Context) -> None:
    assert not context.cut_failure.report.tool_calls, context.cut_failure.report.tool_calls


@then("invoke raised KeyboardInterrupt")
def then_interrupted(context: Context) -> None:
    assert context.interrupted, "invoke returned without KeyboardInterrupt"


@then("the model's request was cancelled on the background loop within {seconds:d} s")
def then_cancelled(context: Context, seconds: int) -> None:
    assert context.waiting.cancelled.wait(seconds), "the run still goes on the background loop"
