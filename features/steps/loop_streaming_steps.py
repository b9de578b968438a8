"""Steps for features/loop/loop_streaming.feature: what ``astream`` shows of a run.

The agent (``stream_pieces N`` makes its scripted model really stream), its script and
the run are the shared ones (``features/steps/run_steps.py``); here are the checks of the
chunks the run yielded.
"""

from __future__ import annotations

from behave import then
from behave.runner import Context
from support import runs
from support.script import expand


def _streamed(context: Context) -> str:
    chunks = runs.current(context).chunks
    assert chunks, "nothing was streamed"
    return "".join(c.text for c in chunks)


@then('the stream shows "{text}" before the answer')
def step_stream_before(context: Context, text: str) -> None:
    shown, expected = _streamed(context), expand(text)
    assert shown.startswith(expected), f"the stream starts {shown[: len(expected) + 20]!r}"


@then("no stream chunk holds any part of a call")
def step_stream_no_call(context: Context) -> None:
    shown = _streamed(context)
    for marker in ("`", "{", '"name"', "tool", "lookup", '"key"'):
        assert marker not in shown, f"{marker!r} reached the user: {shown!r}"


@then('the streamed text ends with "{text}"')
def step_stream_ends(context: Context, text: str) -> None:
    shown = _streamed(context)
    assert shown.endswith(expand(text)), repr(shown)


@then('the streamed text is exactly "{text}"')
def step_stream_exact(context: Context, text: str) -> None:
    shown = _streamed(context)
    assert shown == expand(text), repr(shown)


@then("the stream came in more than {n:d} text chunks")
def step_stream_chunks(context: Context, n: int) -> None:
    chunks = [c.text for c in runs.current(context).chunks if c.text]
    assert len(chunks) > n, chunks


@then('the last stream chunk has no text and carries a report with stop_reason "{reason}"')
def step_stream_report(context: Context, reason: str) -> None:
    chunks = runs.current(context).chunks
    last = chunks[-1]
    assert last.text == "", repr(last.text)
    report = last.response_metadata.get("leanloop")
    assert isinstance(report, dict), last.response_metadata
    assert report["stop_reason"] == reason, report["stop_reason"]
    others = [c for c in chunks[:-1] if c.response_metadata.get("leanloop")]
    assert not others, "an earlier chunk already carried a report"


@then("the streamed text equals the twin's answer")
def step_stream_equals(context: Context) -> None:
    twin = runs.current(context).twin
    assert twin is not None and twin.answer is not None, "the twin has not answered"
    shown, answer = _streamed(context), twin.answer.text
    assert shown == answer, f"stream {shown!r} != {answer!r}"


@then('the stream shows "{text}" exactly once')
def step_stream_once(context: Context, text: str) -> None:
    shown = _streamed(context)
    count = shown.count(text)
    assert count == 1, (
        f"{text!r} was streamed {count} times: {shown!r}. The composed final "
        "answer repeats prose already streamed: AgentLoop._finish compares the answer with "
        "run.streamed, which still ends with the whitespace shown before the held-back call"
    )
