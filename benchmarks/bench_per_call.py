"""Per model call of leanloop's loop beside LangChain v1 ``create_agent`` (issue 40).

The ``time_`` figures are one run of each agent (``ROUNDS + 1`` = 5 model calls) at 9,
99, 999 and 4,999 messages of history; the ``track_`` figure is issue 40's acceptance ratio,
leanloop ÷ ``create_agent``, the median of paired, interleaved runs
(``benchmarks/per_call.py``, which also prints the table: ``python
benchmarks/per_call.py``). Goal: at most 0.5 at every level. Skipped without
``langchain`` (v1).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable as ASV does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_fixtures import quiet_logs
from benchmarks.per_call import LEVELS, create_agent_run, history, leanloop_run, measure

_SIDES = {"leanloop": leanloop_run, "create_agent": create_agent_run}


class PerCall:
    """One run: ``ROUNDS`` tool calls, then the answer."""

    params = (list(LEVELS), list(_SIDES))
    param_names = ("messages", "agent")
    timeout = 300

    def setup(self, messages: int, agent: str) -> None:
        quiet_logs()
        try:
            self.run = _SIDES[agent]()
        except ImportError as exc:  # no langchain v1: nothing to compare with
            raise NotImplementedError(str(exc)) from exc
        self.history = history(messages)
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.run(list(self.history)))  # warm

    def teardown(self, *_: Any) -> None:
        self.loop.close()

    def time_run(self, messages: int, agent: str) -> None:
        """One run: ``ROUNDS + 1`` model calls (divide by them for the figure per call)."""
        self.loop.run_until_complete(self.run(list(self.history)))


class PerCallRatio:
    """Issue 40's figure: leanloop ÷ ``create_agent`` per call, paired and interleaved."""

    params = (list(LEVELS),)
    param_names = ("messages",)
    timeout = 600

    def setup(self, messages: int) -> None:
        quiet_logs()
        try:
            import langchain.agents  # noqa: F401, PLC0415 - only to skip without it
        except ImportError as exc:
            raise NotImplementedError(str(exc)) from exc

    def track_ratio_vs_create_agent(self, messages: int) -> float:
        return float(asyncio.run(measure(messages, 20))["ratio"])

    track_ratio_vs_create_agent.unit = "ratio"  # type: ignore[attr-defined]
