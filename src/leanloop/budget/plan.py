"""Share a context window out: the reply's reserve, the request ceiling, the trim target.

For a window ``W`` and a budget share ``p`` (``token_budget_percent``)::

    reply_reserve = max_tokens            when set, else min(20% of W, 2,048)
    ceiling       = p × W − reply_reserve   never under 512 (nor over W)
    trim_target   = 65% of the ceiling      trimming goes this far, so it is not needed
                                            again a step later
    warn_at       = 75% of the ceiling      the loop warns once per run past this
    result cap    = 20% of W in tokens, at the learned characters per token,
                    clamped to 2,000–30,000 characters

All figures are whole tokens, rounded down, so the plan errs towards sending less.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from leanloop.exceptions import InvalidArgument

__all__ = ["ContextPlan"]

REPLY_SHARE_PERCENT = 20
REPLY_RESERVE_MAX = 2_048
MIN_CEILING = 512
TRIM_TARGET_PERCENT = 65
WARN_PERCENT = 75
RESULT_SHARE_PERCENT = 20
RESULT_CAP_MIN_CHARS = 2_000
RESULT_CAP_MAX_CHARS = 30_000


@dataclass(frozen=True)
class ContextPlan:
    """How one context window is shared out; build it with :meth:`for_window`.

    Attributes:
        window: The context window, in tokens.
        budget_percent: The share of the window a request may use (0 < x ≤ 1).
        reply_reserve: Tokens held back for the reply.
        ceiling: The most tokens a request may be estimated at.
        trim_target: Where trimming stops once it has started.
        warn_at: Past this estimate the loop logs its once-per-run warning.
    """

    window: int
    budget_percent: float
    reply_reserve: int
    ceiling: int
    trim_target: int
    warn_at: int

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 1:
            msg = f"the context window must be a positive number of tokens, got {self.window!r}"
            raise InvalidArgument(msg)
        if not 0 < self.budget_percent <= 1:
            msg = f"token_budget_percent must be in (0, 1], got {self.budget_percent!r}"
            raise InvalidArgument(msg)
        if not 0 < self.trim_target <= self.warn_at <= self.ceiling:
            msg = f"inconsistent plan: {self.trim_target=} {self.warn_at=} {self.ceiling=}"
            raise InvalidArgument(msg)

    @classmethod
    def for_window(
        cls, window: int, *, budget_percent: float = 0.85, max_tokens: int | None = None
    ) -> ContextPlan:
        """Plan ``window`` by the shares in the module docstring.

        Args:
            window: The context window, in tokens (at least 1).
            budget_percent: The share of the window a request may use (0 < x ≤ 1).
            max_tokens: The model's reply limit; when set it is the reply reserve.

        Raises:
            InvalidArgument: A figure is out of range.
        """
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            msg = f"the context window must be a positive number of tokens, got {window!r}"
            raise InvalidArgument(msg)
        if not 0 < budget_percent <= 1:
            msg = f"token_budget_percent must be in (0, 1], got {budget_percent!r}"
            raise InvalidArgument(msg)
        if max_tokens is not None and max_tokens < 1:
            msg = f"max_tokens must be a positive number of tokens, got {max_tokens!r}"
            raise InvalidArgument(msg)
        if max_tokens is not None:
            reserve = max_tokens
        else:
            reserve = min(window * REPLY_SHARE_PERCENT // 100, REPLY_RESERVE_MAX)
        # The floor keeps tiny windows usable; the cap keeps it inside the window itself.
        # The epsilon keeps 0.85 × 1000 at 850, not at 849.99… rounded down.
        budget = math.floor(budget_percent * window + 1e-9)
        ceiling = min(max(budget - reserve, MIN_CEILING), window)
        return cls(
            window=window,
            budget_percent=budget_percent,
            reply_reserve=reserve,
            ceiling=ceiling,
            trim_target=max(ceiling * TRIM_TARGET_PERCENT // 100, 1),
            warn_at=max(ceiling * WARN_PERCENT // 100, 1),
        )

    def result_cap_chars(self, chars_per_token: float) -> int:
        """The most characters one tool result may keep, at ``chars_per_token``."""
        tokens = self.window * RESULT_SHARE_PERCENT / 100
        chars = int(tokens * chars_per_token)
        return min(max(chars, RESULT_CAP_MIN_CHARS), RESULT_CAP_MAX_CHARS)
