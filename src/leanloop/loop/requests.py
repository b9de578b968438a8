"""One request to the model: its view inside the budget, and sending it with recoveries.

:meth:`Requests.prepare` builds a request's view (the budget fits it, the text mode's
tool list in or out); :meth:`Requests.send` sends it, streamed or not, and recovers: a
refusal for size is the budget's (one smaller plan, ADR 0028), any other failure is the
policies' to answer (:meth:`~leanloop.loop.policies.hooks.Policy.after_error`: a cut
stream, a refusal of native tools), and a final request refused for its calls is sent
again with the calls flattened to text. What none recovers fails the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.ai import add_usage

from leanloop.budget import parse_overflow
from leanloop.budget.run import Prepared
from leanloop.exceptions import RunFailed
from leanloop.loop.lean import lean_generate, lean_target
from leanloop.loop.policies.hooks import (
    Attempt,
    RequestKind,
    RequestShape,
    SwitchToText,
    error_line,
)
from leanloop.loop.run_state import (
    Answered,
    RunState,
    StillTooLarge,
    install_system,
    schemas_of,
    view,
)
from leanloop.loop.streaming import stream_reply
from leanloop.loop.tool_round import ANSWER_TURN
from leanloop.protocol import flatten_tool_history
from leanloop.pruning import processed_tokens
from leanloop.redact import redact_text, redact_url
from leanloop.spec.types import AgentSpec

__all__ = ["Requests"]


class Requests:
    """Prepares and sends the requests of an agent's runs; holds no per-run state."""

    def __init__(self, *, spec: AgentSpec, model: BaseChatModel, needs_room: bool) -> None:
        self.spec = spec
        self.model = model
        """The chat model as the agent holds it (its class says how its streams end)."""
        self.needs_room = needs_room
        """Whether the pruning trigger reads the room the next request leaves."""

    async def prepare(self, run: RunState, *, tools: bool) -> Prepared:
        """The next request of ``run`` inside the budget, offering tools or not.

        A request without tools (the final one) leaves out the rounds made only of
        repeats; the request's shape (:class:`RequestShape`) is the policies' to adjust.
        """
        schemas = run.schemas[tools]
        history = run.history
        repeats = run.runner.repeat_rounds
        if not tools and repeats:
            history = [m for m in history if id(m) not in repeats]
        # In text mode the tool list lives in the system prompt: a request without tools
        # (the final answer) and a small model's answer turn leave it out, and so may a
        # policy (the synthesis flow, once an answer turn has left it out).
        shape = RequestShape(tools=tools, tool_list=tools and not _is_answer_turn(run))
        shape = run.policies.shape_request(view(run), shape)
        if (
            not shape.tool_list
            and run.protocol.mode == "text"
            and history
            and isinstance(history[0], SystemMessage)
        ):
            history = [run.protocol.system_without_tools(run.base_system), *history[1:]]
        return await run.budget.prepare_step(history, tools=schemas, step=run.step + 1)

    async def send(self, run: RunState, prepared: Prepared, *, kind: RequestKind) -> Answered:
        """Send one request and record it; recover as the module docstring says.

        Raises:
            StillTooLarge: When the request was refused for its size again, or cannot shrink.
            RunFailed: When no recovery answers the failure (the run's partial report on it).
        """
        attempt, recovered_size, flattened = prepared, False, False
        recoveries: tuple[str, ...] = ()  # the policies that recovered this request so far
        # The loop's clock, the one of every timing decision (ADR 0027): on virtual time
        # in tests, a scripted model's delay is the seconds measured.
        clock = asyncio.get_running_loop()
        while True:
            sent = clock.time()
            try:
                reply = await self._invoke(run, attempt)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                overflow = parse_overflow(exc)
                if overflow is not None:
                    if recovered_size:
                        raise StillTooLarge from exc
                    recovered_size = True
                    retry = await run.budget.prepare_step(
                        run.history,
                        tools=list(attempt.tools),
                        step=run.step + 1,
                        refused=(attempt, overflow),
                    )
                    if not retry.fits_window or retry.chars >= attempt.chars:
                        raise StillTooLarge from exc  # a retry that cannot shrink fails too
                    attempt = retry
                elif recovered := await run.policies.after_error(
                    view(run), exc, Attempt(kind, recoveries)
                ):
                    name, recovery = recovered
                    recoveries += (name,)
                    if isinstance(recovery, SwitchToText):
                        _switch_to_text(run)
                        attempt = await self.prepare(run, tools=True)
                elif kind == "final" and not flattened and _has_tool_history(attempt.messages):
                    flattened = True
                    attempt = _flattened(attempt)
                else:
                    raise self._failed(run, exc) from exc
                continue
            seconds = clock.time() - sent  # of the attempt that was answered
            # A step sent again after a refusal is recorded as a retry (the refused attempt
            # has no reply to record); the final request stays "final".
            retried = attempt is not prepared and kind == "step"
            # A step's reply is read before the budget sees it: the room of the round that
            # follows is worked out for the reply as it enters the history.
            read = run.protocol.read(reply) if kind != "final" else None
            entering = read.reply if read is not None else reply
            self._record(
                run,
                attempt,
                reply,
                "retry" if retried else kind,
                entering=entering,
                seconds=seconds,
            )
            if run.learn_speed is not None:
                tokens = processed_tokens(reply.usage_metadata, default=attempt.tokens)
                run.learn_speed(tokens, seconds)
            return Answered(reply, read)

    async def ask_alone(self, run: RunState, prompt: str) -> AIMessage | None:
        """One request of ``prompt`` alone: no history, no tools, not streamed (a policy's
        :class:`~leanloop.loop.policies.hooks.AskAlone`); recorded as a ``check``.

        Returns:
            The reply, or ``None`` when the request failed (the report's events say why):
            the answer it would have checked stands.
        """
        prepared = await run.budget.prepare_step([HumanMessage(content=prompt)], step=run.step + 1)
        clock = asyncio.get_running_loop()
        sent = clock.time()
        try:
            reply = await run.model.ainvoke(prepared.messages, config=run.config)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the answer stands; the check says it could not ask
            run.report.events.append(
                f"step {run.step + 1}: the request alone failed: {redact_text(error_line(exc))}"
            )
            return None
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        self._record(run, prepared, reply, "check", entering=reply, seconds=clock.time() - sent)
        return reply

    def _failed(self, run: RunState, exc: BaseException) -> RunFailed:
        """The run's failure, with the partial report and a hint at the server."""
        msg = f"the request to the model failed at step {run.step + 1}: {error_line(exc)}"
        msg += _server_hint(self.spec.model.base_url, exc)
        # Shown by the CLI, the report and serve's replies: never base_url's credentials
        # (the provider's own text may repeat the URL too).
        msg = redact_text(msg)
        run.report.stop_reason = "failed"
        run.report.error = msg
        run.report.elapsed_s = run.elapsed()
        return RunFailed(msg, report=run.report, messages=run.history)

    async def _invoke(self, run: RunState, prepared: Prepared) -> AIMessage:
        model: Any = run.model
        if prepared.tools:
            choice = "required" if self._require_tool(run) else None
            model = _bound(run, prepared.tools, choice)
        reply: BaseMessage
        if run.stream.on_text is not None and not run.stream.hold:
            reply = await stream_reply(
                run.stream,
                model,
                prepared.messages,
                run.config,
                protocol=run.protocol,
                judged=self.model,
            )
        elif (lean := lean_target(model, run.config)) is not None:
            # Nothing configured would see the call: the model's generation, directly.
            reply = await lean_generate(lean[0], prepared.messages, lean[1])
        else:
            reply = await model.ainvoke(prepared.messages, config=run.config)
        if not isinstance(reply, AIMessage):  # a custom model returning a plain message
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        return reply

    def _require_tool(self, run: RunState) -> bool:
        """``first_tool_choice: required`` applies to the first model request only."""
        first = run.step == 0 and not any(r.kind != "final" for r in run.report.requests)
        return self.spec.first_tool_choice == "required" and first

    def _record(
        self,
        run: RunState,
        prepared: Prepared,
        reply: AIMessage,
        kind: str,
        *,
        entering: AIMessage,
        seconds: float,
    ) -> None:
        if reply.usage_metadata:
            run.usage = add_usage(run.usage, reply.usage_metadata)
        # The budget learns from the reply, records the request and sets the limits of the
        # round that follows: its one word after the request.
        run.budget.observe(
            prepared,
            reply,
            step=run.step + 1,
            kind=kind,
            room=self.needs_room,
            entering=entering,
            seconds=seconds,
        )


def _server_hint(base_url: str | None, exc: BaseException) -> str:
    """Where the request went and, when nothing answered there, how to start a server."""
    if not base_url:
        return ""
    hint = f" (server: {redact_url(base_url)})"
    if _is_connection_error(exc):
        hint += "; nothing answered there"
        authority = base_url.split("//", 1)[-1].split("/", 1)[0].rpartition("@")[2]
        host, colon, port = authority.rpartition(":")
        if not colon or not port.isdigit():  # no port ("[::1]" has colons of its own)
            host, port = authority, "443" if base_url.startswith("https:") else "80"
        if host in {"127.0.0.1", "localhost", "[::1]"}:
            from leanloop.localmodel import DEFAULT_PORT  # noqa: PLC0415 - only for this hint

            # `local start` serves on its default port unless told: name the file's port.
            flag = "" if int(port) == DEFAULT_PORT else f" --port {int(port)}"
            hint += f" — for the embedded model, start it with `leanloop local start{flag}`"
    return hint


def _is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it came from) is a failure to connect at all."""
    seen: BaseException | None = exc
    while seen is not None:
        name = type(seen).__name__
        if "Connect" in name or isinstance(seen, ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _is_answer_turn(run: RunState) -> bool:
    """Whether the history ends with a result turn marked :data:`ANSWER_TURN`."""
    return bool(run.history) and bool(run.history[-1].additional_kwargs.get(ANSWER_TURN))


def _bound(run: RunState, tools: Sequence[Mapping[str, Any]], choice: str | None) -> Any:
    """The run's model with ``tools`` bound; the binding is made once per schema list."""
    key = (id(tools), choice)
    cached = run.bindings.get(key)
    if cached is not None and cached[0] is tools:
        return cached[1]
    bound = run.model.bind_tools([dict(t) for t in tools], tool_choice=choice)
    run.bindings[key] = (tools, bound)
    return bound


def _switch_to_text(run: RunState) -> None:
    """Go on in text mode: the calls written in replies, the tool list in the system prompt."""
    run.protocol.mode = "text"
    run.report.tool_mode = "text"
    run.schemas = schemas_of(run.protocol)
    # Only prefetched reads can be in the history yet: give them the text form.
    run.history = flatten_tool_history(run.history)
    install_system(run)


def _has_tool_history(messages: Sequence[BaseMessage]) -> bool:
    return any(isinstance(m, AIMessage) and m.tool_calls for m in messages)


def _flattened(prepared: Prepared) -> Prepared:
    return replace(prepared, messages=flatten_tool_history(prepared.messages))
