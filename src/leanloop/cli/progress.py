"""Progress lines for a person watching a run: one line per thing the loop did.

:class:`ProgressPrinter` is an :class:`~leanloop.events.EventRecorder` that turns the
loop's custom events into short lines on a text stream (stderr in the CLI)::

    [  0.0s] step 0 · read_file(path=handbook.md) · prefetched · 4,210 chars
    [  1.9s] step 1 · 1,432 / 6,553 tokens (22%) · window 8,192 (server:llama.cpp)
    [  4.2s] step 1 · read_file(path=app.log) · ok · cut 15,919 → 5,305 chars
    [  4.2s] step 1 · search(pattern=port) · failed · 36 chars
    [  9.8s] step 2 · trimmed 2 results · 5,120 → 3,010 tokens
    [ 12.0s] step 2 · pruning read_file fell back to the raw output (timeout)

The lines of a sub-agent's run (an ``agent:NAME`` tool) are indented, two spaces a level,
and start with the sub-agent's name, so they stand apart from the caller's::

    [  2.0s]   researcher › step 1 · read_file(path=notes.txt) · ok · 18 chars
    [  2.3s] step 1 · researcher(task=find the port) · ok · 17 chars

Colour is used only on a terminal and never when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from typing import Any, TextIO
from uuid import UUID

from leanloop import events
from leanloop.tools.agents import sub_agents_of

__all__ = ["ProgressPrinter", "use_colour"]

_DIM, _RED, _YELLOW, _RESET = "\033[2m", "\033[31m", "\033[33m", "\033[0m"


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


_CHECK_WORDS = {
    "grounded": "found where the question points",
    "asked_again": "asked again alone: the second answer stands",
    "kept": "asked again alone: the first answer stands",
    "doubtful": "in doubt (not asked again)",
}
"""The answer check's verdicts (the report's ``answer_check``) as the progress line says them."""


class ProgressPrinter(events.EventRecorder):
    """Prints one line per step, call, trim, pruning pass and fallback to ``stream``.

    A sub-agent's lines are indented and prefixed with its name (see the module).
    """

    def __init__(self, stream: TextIO, *, colour: bool | None = None) -> None:
        super().__init__()
        self.stream = stream
        self.colour = use_colour(stream) if colour is None else colour
        self.started = time.monotonic()
        self._window_told: set[tuple[str, ...]] = set()

    async def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Receive one custom event; its metadata says which sub-agent's run sent it."""
        await self.record(name, dict(data), agents=sub_agents_of(metadata))

    async def record(self, name: str, data: dict[str, Any], *, agents: Sequence[str] = ()) -> None:
        """Keep the event and print its line(s).

        Args:
            name: The event's name (:mod:`leanloop.events`).
            data: The event's payload.
            agents: The sub-agents whose run sent it, outermost first; empty for the
                caller's own run.
        """
        await super().record(name, data)
        for line, tone in self.lines(name, data, agents=agents):
            self._print(_nested(line, agents), tone)

    def lines(
        self, name: str, data: dict[str, Any], *, agents: Sequence[str] = ()
    ) -> list[tuple[str, str]]:
        """The lines (and their tone: ``""``, ``dim``, ``warn``, ``bad``) for one event.

        ``agents`` names the sub-run that sent it (its window is told once, as the
        caller's is); the lines come without the sub-agent's indent and name.
        """
        step = data.get("step", "-")
        if name == events.BUDGET:
            return [self._budget_line(step, data, tuple(agents))]
        if name == events.STEP:
            return [
                _call_line(step, call, prefetch=bool(data.get("prefetch")))
                for call in data["calls"]
            ]
        if name == events.TRIMMED:
            text = (
                f"step {step} · trimmed {_count(data['count'], 'result')} · "
                f"{data['tokens_before']:,} → {_count(data['tokens_after'], 'token')}"
            )
            return [(text, "warn")]
        if name == events.PRUNED:
            return [_pruned_line(step, data)]
        if name == events.PRUNE_PROGRESS:
            text = f"step {step} · pruning {data['tool']} · chunk {data['done']}/{data['chunks']}"
            return [(text, "dim")]
        if name == events.SYNTHESIS:
            return [(f"budget spent ({data.get('reason')}): asking for the final answer", "warn")]
        if name == events.OVERFLOW_RECOVERED:
            return [("the server refused a request for its size: trimmed and retried", "warn")]
        if name == events.ANSWER_CHECKED:
            verdict = str(data.get("verdict"))
            said = _CHECK_WORDS.get(verdict, verdict)
            tone = "dim" if verdict == "grounded" else "warn"
            return [(f"step {step} · answer check · {data.get('check')} · {said}", tone)]
        if name == events.TOOL_MODE_CHANGED:
            reason = data.get("reason")
            return [(f"the server refused native tools: text mode from now on ({reason})", "warn")]
        return []

    def _budget_line(
        self, step: Any, data: dict[str, Any], agents: tuple[str, ...]
    ) -> tuple[str, str]:
        estimate, ceiling = data["estimate"], max(data["ceiling"], 1)
        text = f"step {step} · {estimate:,} / {ceiling:,} tokens ({100 * estimate / ceiling:.0f}%)"
        if agents in self._window_told or not data.get("window"):
            return text, "dim"
        # Once per agent: the window the budget rests on, and whether it is only a guess
        # (a sub-agent has a model, and so a window, of its own).
        self._window_told.add(agents)
        source = str(data.get("window_source") or "?")
        guess = source.startswith("default")
        text += f" · window {data['window']:,} ({source}{', a guess' if guess else ''})"
        return text, "warn" if guess else "dim"

    def _print(self, line: str, tone: str) -> None:
        stamp = f"[{time.monotonic() - self.started:6.1f}s] "
        if self.colour and tone:
            code = {"dim": _DIM, "warn": _YELLOW, "bad": _RED}[tone]
            line = f"{code}{line}{_RESET}"
        print(stamp + line, file=self.stream, flush=True)


def _nested(line: str, agents: Sequence[str]) -> str:
    """``line`` as a sub-agent's: indented two spaces a level, after the agent's name."""
    if not agents:
        return line
    return f"{'  ' * len(agents)}{agents[-1]} › {line}"


def _call_line(step: Any, call: dict[str, Any], *, prefetch: bool) -> tuple[str, str]:
    args = ", ".join(f"{k}={_short(v)}" for k, v in call["args"].items())
    head = f"step {step} · {call['name']}({args})"
    if call.get("repaired_from"):  # the model asked for another name: the line says so
        head += f" [was {call['repaired_from']}]"
    out = call["chars_out"]
    if call.get("repeated"):
        return f"{head} · repeat, not run", "warn"
    if not call.get("ok", True):
        return f"{head} · failed · {_count(out, 'char')}", "bad"
    status = "prefetched" if prefetch else "ok"
    if call.get("cut_from"):
        return f"{head} · {status} · cut {call['cut_from']:,} → {_count(out, 'char')}", "warn"
    if call.get("pruned"):
        raw = call.get("chars_raw", 0)
        return f"{head} · {status} · pruned {raw:,} → {_count(out, 'char')}", ""
    return f"{head} · {status} · {_count(out, 'char')}", ""


def _pruned_line(step: Any, data: dict[str, Any]) -> tuple[str, str]:
    tool = data.get("tool", "?")
    if data.get("fallback"):
        return (
            f"step {step} · pruning {tool} fell back to the raw output ({data['fallback']})",
            "warn",
        )
    unread = data.get("unread") or []
    text = (
        f"step {step} · pruned {tool} · {data['chars_raw']:,} → {_count(data['chars_out'], 'char')}"
        f" · {_count(data.get('chunks', 1), 'chunk')} · {data.get('seconds', 0):.1f} s"
    )
    if unread:
        shown = ", ".join(f"{first}-{last} ({why})" for first, last, why in unread)
        return f"{text} · lines {shown} not read", "warn"
    return text, ""


def _count(number: int, noun: str) -> str:
    """``1 char``, ``2 chars``: a count with its noun, singular for one."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
