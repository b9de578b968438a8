"""The end of a run: the final, tool-less request, and the answer with its report.

A run ends in one of two ways. A reply without calls is the answer, judged first
(:func:`~leanloop.endings.judge_reply`: the loop's instruction or the question written
back is no answer). A limit (rounds, budget, repeats: a policy's
:class:`~leanloop.loop.policies.hooks.FinalRequest`) ends it with one request that offers
no tools and asks for what was found and what is left; a run whose every call failed
ends without asking, in the ending's own words (ADR 0032). Either way the report is
filled in and rides on the answer's ``response_metadata["leanloop"]``.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from leanloop import endings, events
from leanloop.budget.run import Prepared
from leanloop.loop import prompts
from leanloop.loop.policies.answer_after_repeats import reads_in_view
from leanloop.loop.policies.hooks import FinalRequest
from leanloop.loop.requests import Requests
from leanloop.loop.run_state import RunState, StillTooLarge, view
from leanloop.protocol import answer_text
from leanloop.report import StopReason

__all__ = ["final_answer", "finish", "rests_on"]


async def final_answer(requests: Requests, run: RunState, final: FinalRequest) -> AIMessage:
    """One request without tools (see :class:`FinalRequest`), and the run's end."""
    reason, prompt, unanswered, note = final.reason, final.prompt, final.unanswered, final.note
    otherwise = unanswered or reason
    if run.report.tool_calls and not rests_on(run):
        # Every call of the run failed: a reply could only guess (a made-up port, in
        # the run). The ending says so without asking, and nothing is streamed.
        run.report.events.append(
            f"step {run.step + 1}: no final request: no tool call returned data; stop: {otherwise}"
        )
        ending = endings.ending_text(otherwise, read=[])
        return await finish(run, AIMessage(content=ending), otherwise)
    text = run.profile.with_question(prompt or run.profile.final_answer, run.question)
    run.history.append(HumanMessage(content=text))
    prepared = await requests.prepare(run, tools=False)
    trimmed = ""
    if unanswered is not None and not reads_in_view(
        run.report.tool_calls, run.resumed_reads, prepared.messages
    ):
        # The trimming of this very view took the last read out of it: the reply
        # cannot be an answer from what was read.
        reason, trimmed = unanswered, " (but this request's view trimmed every read)"
    if not prepared.fits_window:
        _note_end(run, note, "the request does not fit the window", otherwise)
        return await finish(run, _out_of_context(run, prepared), otherwise)
    try:
        reply = (await requests.send(run, prepared, kind="final")).reply
    except StillTooLarge:
        _note_end(run, note, "refused for its size", otherwise)
        return await finish(run, _out_of_context(run, prepared), otherwise)
    # A call written on the final request is never run; only its text counts.
    text = answer_text(reply, run.protocol.parameters)
    if not text:
        reason = otherwise
        text = endings.ending_text(
            reason, read=rests_on(run), why="its last reply held only a tool call"
        )
        _note_end(run, note, "no answer (the reply held no text, only a call)", reason)
        answer = AIMessage(content=text, usage_metadata=reply.usage_metadata, id=reply.id)
        return await finish(run, answer, reason)
    _note_end(run, note, f"answered{trimmed}", reason)
    answer = AIMessage(content=text, usage_metadata=reply.usage_metadata, id=reply.id)
    return await finish(run, answer, reason, judge=True, unanswered=otherwise, check=requests)


def _out_of_context(run: RunState, prepared: Prepared) -> AIMessage:
    text = prompts.OUT_OF_CONTEXT_TEXT.format(tokens=prepared.tokens, window=run.budget.plan.window)
    return AIMessage(content=f"{text} {endings.read_clause(rests_on(run))}")


def _judged(
    run: RunState,
    reply: AIMessage,
    reason: StopReason,
    read: list[str],
    unanswered: StopReason | None,
) -> tuple[AIMessage, StopReason]:
    """The reply as the run's answer, or the ending's own words (see :meth:`_finish`)."""
    verdict = endings.judge_reply(
        reply.text,
        question=run.question,
        instructions=_instructions(run),
        read_something=bool(read),
    )
    # A run that stopped for a limit after calls that all failed has nothing to
    # answer from; without any call, its reply rests on the conversation itself.
    grounded = reason == "answer" or bool(read) or not run.report.tool_calls
    if verdict.is_answer and grounded:
        if verdict.text == reply.text:
            return reply, reason
        run.report.events.append(
            f"step {run.step + 1}: the reply was the request's JSON shape; "
            "its finding is the answer"
        )
        return reply.model_copy(update={"content": verdict.text}), reason
    if not verdict.is_answer:
        reason = unanswered or ("no_answer" if reason == "answer" else reason)
        why = verdict.why
        said = f"the reply was not an answer ({why}); stop: {reason}"
    else:  # a run stopped for a limit, and every tool call it made failed
        why = ""
        said = f"the reply rests on no tool result (every call failed); stop: {reason}"
    run.report.events.append(f"step {run.step + 1}: {said}")
    run.report.set_aside = reply.text
    text = endings.ending_text(reason, read=read, why=why)
    return AIMessage(content=text, usage_metadata=reply.usage_metadata, id=reply.id), reason


async def finish(
    run: RunState,
    reply: AIMessage,
    reason: StopReason,
    *,
    judge: bool = False,
    unanswered: StopReason | None = None,
    check: Requests | None = None,
) -> AIMessage:
    """End the run with ``reply``: stream what the caller has not seen, fill the report.

    With ``judge``, ``reply`` is the model's text and is judged first
    (:func:`~leanloop.loop.endings.judge_reply`): a reply that is not an answer (the
    loop's instruction or the question written back, the request's JSON shape with
    nothing found) ends the run by ``unanswered`` (``no_answer`` when the run was
    answering), in words; so does the text of a run that stopped for a limit when no
    tool call of the run returned data (it rests on nothing). With ``check`` too, an
    answer goes to the policies before it stands
    (:meth:`~leanloop.loop.policies.hooks.Policy.before_answer`: the answer check), which
    may ask once more through ``check``.
    """
    read = rests_on(run)
    if judge:
        reply, reason = _judged(run, reply, reason, read, unanswered)
        if check is not None and reason == "answer":
            reply = await _checked(check, run, reply)
            await _tell_check(run)
    if reason != "answer":
        run.report.ending = endings.STOP_WORDS.get(reason)
    run.report.rests_on = read
    if run.stream.on_text is not None:
        # Answers leanloop composed (or cleaned of a written call) were not streamed as
        # they are: pass on whatever of the final text the caller has not seen yet.
        text, shown = reply.text, run.stream.streamed
        if not text.startswith(shown) and text.startswith(shown.rstrip()):
            shown = shown.rstrip()  # whitespace shown before a held-back call
        await run.stream.show(text[len(shown) :] if text.startswith(shown) else f"\n\n{text}")
    run.report.stop_reason = reason
    if run.edits is not None:
        run.report.edits = run.edits()
    # A step is a request and the round it asked for: the request that answered is
    # the last step (a prefetched file answered at once is one step, not zero).
    run.report.steps = max(run.step, *(r.step for r in run.report.requests), 0)
    run.report.elapsed_s = run.elapsed()
    metadata = {**reply.response_metadata, "leanloop": run.report.to_dict()}
    # The usage of the whole run (every request); per-request figures are in the report.
    return AIMessage(
        content=reply.content,
        response_metadata=metadata,
        usage_metadata=run.usage or reply.usage_metadata,
        id=reply.id,
    )


async def _checked(requests: Requests, run: RunState, reply: AIMessage) -> AIMessage:
    """The answer after the policies' check: ``reply``, or the reply to one more request."""
    asked = run.policies.before_answer(view(run), reply.text)
    if asked is None:
        return reply
    policy, ask = asked
    second = await requests.ask_alone(run, ask.prompt)
    text = policy.answer_asked(view(run), reply.text, None if second is None else second.text)
    if text == reply.text:
        return reply
    return AIMessage(content=text, usage_metadata=reply.usage_metadata, id=reply.id)


async def _tell_check(run: RunState) -> None:
    """The answer check's event, when the run's answer was checked (the CLI's line)."""
    check = run.report.answer_check
    if check is not None:
        data = {"step": run.step + 1, "verdict": check["verdict"], "check": check["check"]}
        await events.emit(events.ANSWER_CHECKED, data, run.config)


def rests_on(run: RunState) -> list[str]:
    """What the run read: the calls that returned data (:func:`endings.rests_on`)."""
    return endings.rests_on(run.report.tool_calls, resumed=bool(run.resumed_reads))


def _instructions(run: RunState) -> list[str]:
    """The texts the loop itself may have put into the run's conversation."""
    profile = run.profile
    texts = (
        profile.final_answer,
        profile.answer_after_repeats,
        profile.answer_turn,
        profile.synthesis,
        prompts.FINAL_ANSWER_PROMPT,
    )
    return [profile.with_question(text, run.question) for text in texts if text]


def _note_end(run: RunState, note: str, outcome: str, reason: StopReason) -> None:
    """Add the report's event line for a final request opened by ``note``."""
    if note:
        run.report.events.append(f"step {run.step}: {note}: {outcome}; stop: {reason}")
