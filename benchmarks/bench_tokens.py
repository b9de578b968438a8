"""Token estimation: counting a conversation cold, and incrementally after one new message."""

from __future__ import annotations

from langchain_core.messages import BaseMessage

from benchmarks.bench_fixtures import history, new_step
from leanloop.budget import MessageCounter, TokenEstimator


class TokenEstimation:
    """``MessageCounter.estimate`` of a conversation of 10 to 10,000 messages.

    ``cold``: a fresh counter measures every message. ``incremental``: the counter has
    already counted all but the last message (the loop's case: one new message since the
    last request), so only that message is measured.
    """

    params = ([10, 100, 1_000, 10_000], ["cold", "incremental"])
    param_names = ("messages", "counter")

    def setup(self, messages: int, counter: str) -> None:
        base = list(history(messages))
        # A fresh last message, so the incremental counter has really not seen it.
        self.messages: list[BaseMessage] = [*base[:-1], new_step(messages)[1]]
        self.counter = MessageCounter(TokenEstimator())
        if counter == "incremental":
            self.counter.estimate(self.messages[:-1])

    def time_estimate(self, messages: int, counter: str) -> None:
        self.counter.estimate(self.messages)
