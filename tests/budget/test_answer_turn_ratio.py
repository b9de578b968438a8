"""The ratio learned from a request whose tool list a template may have dropped."""

from __future__ import annotations

from leanloop.budget.tokens import TokenEstimator


def test_a_request_without_message_text_still_teaches_the_ratio() -> None:
    estimator = TokenEstimator(chars_per_token=3.0)
    ratio = estimator.observe_request(
        message_chars=0, tool_chars=900, answer_turn=True, input_tokens=300
    )
    assert ratio > 0


def test_the_reading_closer_to_what_is_known_wins() -> None:
    estimator = TokenEstimator(chars_per_token=3.0)
    estimator.observe_request(
        message_chars=900, tool_chars=3000, answer_turn=True, input_tokens=300
    )
    assert estimator.drops_tools_on_answer_turns
