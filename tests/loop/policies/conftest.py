"""A policy's tests build the view it reads by hand: no model, no budget, no run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from leanloop.budget.plan import ContextPlan
from leanloop.loop.policies.hooks import StepView
from leanloop.loop.profiles import DEFAULT, PromptProfile
from leanloop.protocol import Mode
from leanloop.report import RunReport

ViewMaker = Callable[..., StepView]


def _view(
    *,
    step: int = 0,
    history: Sequence[BaseMessage] = (),
    question: str = "what port does the API use?",
    profile: PromptProfile = DEFAULT,
    mode: Mode = "native",
    tools_ran: bool = False,
    report: RunReport | None = None,
    named: Sequence[str] = (),
    resumed_reads: Sequence[BaseMessage] = (),
) -> StepView:
    return StepView(
        step=step,
        history=history,
        question=question,
        profile=profile,
        mode=mode,
        tools_ran=tools_ran,
        report=report if report is not None else RunReport(),
        config={},
        plan=ContextPlan.for_window(8_192),
        named=lambda: list(named),
        resumed_reads=resumed_reads,
    )


@pytest.fixture
def make_view() -> ViewMaker:
    """Builds a :class:`StepView`; every field has a plain default."""
    return _view


@pytest.fixture
def emitted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """The custom events the policies emit, in order (``leanloop.events.emit`` replaced)."""
    seen: list[tuple[str, dict[str, Any]]] = []

    async def emit(name: str, data: dict[str, Any], config: object) -> None:
        del config
        seen.append((name, dict(data)))

    monkeypatch.setattr("leanloop.events.emit", emit)
    return seen
