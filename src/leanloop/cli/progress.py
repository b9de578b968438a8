"""Progress lines for a person watching a run: one line per thing the loop did.

:class:`ProgressPrinter` is an :class:`~leanloop.events.EventRecorder` that turns the
loop's custom events into short lines on a text stream (stderr in the CLI)::

    [  0.0s] step 0 · read_file(path=handbook.md) · prefetched · 4,210 chars
    [  1.9s] step 1 · 1,432 / 6,553 tokens (22%) · window 8,192 (server:llama.cpp)
    [  4.2s] step 1 · read_file(path=app.log) · ok · cut 15,919 → 5,305 chars
    [  4.2s] step 1 · search(pattern=port) · failed · 36 chars
    [  9.8s] step 2 · trimmed 2 results · 5,120 → 3,010 tokens
    [ 12.0s] step 2 · pruning read_file fell back to the raw output (timeout)

Colour is used only on a terminal and never when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, TextIO

from leanloop import events

__all__ = ["ProgressPrinter", "use_colour"]

_DIM, _RED, _YELLOW, _RESET = "\033[2m", "\033[31m", "\033[33m", "\033[0m"


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class ProgressPrinter(events.EventRecorder):
    """Prints one line per step, call, trim, pruning pass and fallback to ``stream``."""

    def __init__(self, stream: TextIO, *, colour: bool | None = None) -> None:
        super().__init__()
        self.stream = stream
        self.colour = use_colour(stream) if colour is None else colour
        self.started = time.monotonic()
        self._window_told = False

    async def record(self, name: str, data: dict[str, Any]) -> None:
        """Keep the event and print its line(s)."""
        await super().record(name, data)
        for line, tone in self.lines(name, data):
            self._print(line, tone)

    def lines(self, name: str, data: dict[str, Any]) -> list[tuple[str, str]]:
        """The lines (and their tone: ``""``, ``dim``, ``warn``, ``bad``) for one event."""
        step = data.get("step", "-")
        if name == events.BUDGET:
            return [self._budget_line(step, data)]
        if name == events.STEP:
            return [
                _call_line(step, call, prefetch=bool(data.get("prefetch")))
                for call in data["calls"]
            ]
        if name == events.TRIMMED:
            text = (
                f"step {step} · trimmed {data['count']} results · "
                f"{data['tokens_before']:,} → {data['tokens_after']:,} tokens"
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
        if name == events.TOOL_MODE_CHANGED:
            reason = data.get("reason")
            return [(f"the server refused native tools: text mode from now on ({reason})", "warn")]
        return []

    def _budget_line(self, step: Any, data: dict[str, Any]) -> tuple[str, str]:
        estimate, ceiling = data["estimate"], max(data["ceiling"], 1)
        text = f"step {step} · {estimate:,} / {ceiling:,} tokens ({100 * estimate / ceiling:.0f}%)"
        if self._window_told or not data.get("window"):
            return text, "dim"
        # Once per run: the window the budget rests on, and whether it is only a guess.
        self._window_told = True
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


def _call_line(step: Any, call: dict[str, Any], *, prefetch: bool) -> tuple[str, str]:
    args = ", ".join(f"{k}={_short(v)}" for k, v in call["args"].items())
    head = f"step {step} · {call['name']}({args})"
    out = call["chars_out"]
    if call.get("repeated"):
        return f"{head} · repeat, not run", "warn"
    if not call.get("ok", True):
        return f"{head} · failed · {out:,} chars", "bad"
    status = "prefetched" if prefetch else "ok"
    if call.get("cut_from"):
        return f"{head} · {status} · cut {call['cut_from']:,} → {out:,} chars", "warn"
    if call.get("pruned"):
        return f"{head} · {status} · pruned {call.get('chars_raw', 0):,} → {out:,} chars", ""
    return f"{head} · {status} · {out:,} chars", ""


def _pruned_line(step: Any, data: dict[str, Any]) -> tuple[str, str]:
    tool = data.get("tool", "?")
    if data.get("fallback"):
        return (
            f"step {step} · pruning {tool} fell back to the raw output ({data['fallback']})",
            "warn",
        )
    unread = data.get("unread") or []
    text = (
        f"step {step} · pruned {tool} · {data['chars_raw']:,} → {data['chars_out']:,} chars"
        f" · {data.get('chunks', 1)} chunks · {data.get('seconds', 0):.1f} s"
    )
    if unread:
        shown = ", ".join(f"{first}-{last} ({why})" for first, last, why in unread)
        return f"{text} · lines {shown} not read", "warn"
    return text, ""


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
