"""The cut-stream retry, alone through its hook: a cut stream is sent again, once."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessageChunk

from leanloop.exceptions import ModelError
from leanloop.loop import driver
from leanloop.loop.policies.cut_stream import (
    CutStreamConfig,
    CutStreamError,
    CutStreamRetry,
    cut_message,
    is_cut,
)
from leanloop.loop.policies.hooks import Attempt, Resend, StepView

ViewMaker = Callable[..., StepView]


class ChatOllama:
    """A stand-in with the name of a class whose streams always say how they ended."""


class SomeChatModel:
    """A stand-in for a model that may never report a finish reason."""


async def test_a_cut_stream_is_sent_again_and_the_report_says_so(make_view: ViewMaker) -> None:
    view = make_view(step=2)
    policy = CutStreamConfig().start()

    recovery = await policy.after_error(view, CutStreamError("cut off"), Attempt("step"))

    assert recovery == Resend()
    assert view.report.events == ["step 3: cut off; sent again"]


async def test_a_second_cut_of_the_same_request_is_not_recovered(make_view: ViewMaker) -> None:
    policy = CutStreamConfig().start()
    again = Attempt("final", recoveries=(CutStreamRetry.name,))

    assert await policy.after_error(make_view(), CutStreamError("cut"), again) is None


async def test_the_config_says_how_often_one_request_is_sent_again(make_view: ViewMaker) -> None:
    policy = CutStreamConfig(resends=2).start()
    once = Attempt("step", recoveries=("text_fallback", CutStreamRetry.name))
    twice = Attempt("step", recoveries=(CutStreamRetry.name, CutStreamRetry.name))

    assert await policy.after_error(make_view(), CutStreamError("cut"), once) == Resend()
    assert await policy.after_error(make_view(), CutStreamError("cut"), twice) is None


async def test_any_other_error_is_not_this_policys(make_view: ViewMaker) -> None:
    policy = CutStreamConfig().start()

    assert await policy.after_error(make_view(), RuntimeError("cut off"), Attempt("step")) is None


def test_only_a_model_that_always_reports_a_finish_is_judged_cut() -> None:
    finished = AIMessageChunk(content="4", response_metadata={"done_reason": "stop"})
    unfinished = AIMessageChunk(content="4")

    assert is_cut(ChatOllama(), unfinished)
    assert is_cut(ChatOllama(), None)
    assert not is_cut(ChatOllama(), finished)
    assert not is_cut(SomeChatModel(), unfinished)


def test_the_message_says_what_arrived_before_the_cut() -> None:
    calling = AIMessageChunk(
        content="ab", tool_call_chunks=[{"name": "read_file", "args": "{", "id": "1", "index": 0}]
    )

    assert cut_message(None) == (
        "the streamed reply was cut off (after nothing, with no finish reason)"
    )
    assert "after 2 characters and part of a tool call" in cut_message(calling)


def test_the_error_is_a_model_error_still_found_where_it_was() -> None:
    assert issubclass(CutStreamError, ModelError)
    assert issubclass(CutStreamError, RuntimeError)
    assert driver.CutStreamError is CutStreamError
