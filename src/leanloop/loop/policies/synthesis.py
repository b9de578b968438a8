"""When trimming cannot bring a request under the budget, the synthesis flow (ADR 0005).

The first request that is over the budget even after trimming gets the profile's
synthesis instruction added as a turn: at most one more round of calls, then the answer.
If the request with it does not fit the window, or a later request is over the budget
again, or the round it allowed has run, the run ends with the final, tool-less request
(``budget_exhausted``); a reply without calls on the way is the answer, but the run still
ended for its budget.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import ClassVar

from langchain_core.messages import HumanMessage

from leanloop import events
from leanloop.budget.run import Prepared
from leanloop.loop.policies.hooks import (
    AddTurn,
    FinalRequest,
    Policy,
    RequestShape,
    Round,
    StepView,
)
from leanloop.report import StopReason

__all__ = ["Synthesis", "SynthesisConfig"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SynthesisConfig:
    """What the synthesis flow adds.

    Attributes:
        prompt: The instruction added once the budget is spent; ``None``: the run's
            profile's ``synthesis``.
    """

    prompt: str | None = None

    def start(self) -> Synthesis:
        """The policy for one run (the flow has not started)."""
        return Synthesis(self)


class Synthesis(Policy):
    """The synthesis flow of one run; its state is whether the flow has started."""

    name: ClassVar[str] = "synthesis"

    def __init__(self, config: SynthesisConfig) -> None:
        self.config = config
        self.started = False
        """The budget was spent and the instruction added: one more round at most."""

    def shape_request(self, view: StepView, shape: RequestShape) -> RequestShape:
        """In text mode, under a profile with an answer turn, a request of the flow leaves
        the tool list out: once an answer turn left it out, putting it back would rewrite
        the system prompt (the server's cached prefix) under the appended instruction."""
        if self.started and view.profile.answer_turn and shape.tool_list:
            return dataclasses.replace(shape, tool_list=False)
        return shape

    async def before_request(
        self, view: StepView, prepared: Prepared
    ) -> AddTurn | FinalRequest | None:
        """Start the flow on the first request over the budget; end the run on the next."""
        if not prepared.over_budget:
            return None
        if self.started:
            return FinalRequest("budget_exhausted")
        self.started = True
        plan = view.plan
        _log.error(
            "context budget spent after trimming: estimate=%d ceiling=%d window=%d; "
            "starting the synthesis flow",
            prepared.tokens,
            plan.ceiling,
            plan.window,
        )
        view.event("budget spent, synthesis flow started")
        await events.emit(
            events.SYNTHESIS,
            {"reason": "budget_exhausted", "estimate": prepared.tokens, "ceiling": plan.ceiling},
            view.config,
        )
        prompt = self.config.prompt if self.config.prompt is not None else view.profile.synthesis
        return AddTurn(HumanMessage(content=prompt), otherwise="budget_exhausted")

    def after_round(self, view: StepView, done: Round) -> FinalRequest | None:
        """The round the flow allowed has run: the final request."""
        del view, done
        return FinalRequest("budget_exhausted") if self.started else None

    def at_end(self, view: StepView, reason: StopReason) -> StopReason:
        """A reply without calls during the flow answers, but the budget ended the run."""
        del view
        return "budget_exhausted" if self.started and reason == "answer" else reason
