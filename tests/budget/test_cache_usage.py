"""prompt_usage (src/leanloop/cache_usage.py): evaluated vs cached prompt tokens of a reply.

The JSON figures are what llama-server (the one `leanloop local setup` builds) answered on
/v1/chat/completions to a request whose 985-token prefix its slot had cached.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage

from leanloop.cache_usage import PromptUsage, RequestTally, prompt_usage, prompt_usage_from
from leanloop.pruning.speed import processed_tokens

LLAMA_SERVER_ANSWER: dict[str, Any] = {
    "choices": [
        {
            "finish_reason": "stop",
            "index": 0,
            "message": {"role": "assistant", "content": "Item 7 weighs 21 grams."},
        }
    ],
    "created": 1796256073,
    "model": "local-test",
    "system_fingerprint": "b0-unknown",
    "object": "chat.completion",
    "usage": {
        "completion_tokens": 10,
        "prompt_tokens": 993,
        "total_tokens": 1003,
        "prompt_tokens_details": {"cached_tokens": 985},
    },
    "id": "chatcmpl-1tAIvYkeCv5V3TB47twg385PPIJ0gdir",
    "timings": {
        "cache_n": 985,
        "prompt_n": 8,
        "prompt_ms": 88.005,
        "prompt_per_token_ms": 11.000625,
        "prompt_per_second": 90.90392591330038,
        "predicted_n": 10,
        "predicted_ms": 233.439,
        "predicted_per_token_ms": 25.937666666666665,
        "predicted_per_second": 38.55396913112205,
    },
}


def _reply(input_tokens: int, output_tokens: int = 5, **details: int) -> AIMessage:
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }
    if details:
        usage["input_token_details"] = details
    return AIMessage(content="ok", usage_metadata=usage)


def test_cached_tokens_as_chat_openai_reports_them() -> None:
    assert prompt_usage(_reply(994, cache_read=986)) == PromptUsage(evaluated=8, cached=986)


def test_a_request_the_cache_did_not_help_reports_zero_cached() -> None:
    assert prompt_usage(_reply(993, cache_read=0)) == PromptUsage(evaluated=993, cached=0)


@pytest.mark.parametrize(
    "reply",
    [
        _reply(120),  # Ollama, a scripted model: no input_token_details
        _reply(120, audio=3),  # details, but none about a cache
        AIMessage(content="no usage at all"),
        "not a message",
        None,
    ],
)
def test_a_reply_that_says_nothing_about_a_cache_is_unknown(reply: object) -> None:
    assert prompt_usage(reply) is None


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": 10, "input_token_details": {"cache_read": 11}},  # more than the prompt
        {"input_tokens": 10, "input_token_details": {"cache_read": -1}},
        {"input_tokens": 10, "input_token_details": {"cache_read": True}},
        {"input_tokens": None, "input_token_details": {"cache_read": 4}},
        {"input_tokens": 10, "input_token_details": {"cache_read": 4.0}},
    ],
)
def test_figures_that_do_not_add_up_are_no_answer(usage: dict[str, Any]) -> None:
    assert prompt_usage_from(usage) is None


def test_anthropic_cache_writes_count_as_evaluated() -> None:
    # langchain-anthropic's input_tokens include the cache reads and the cache writes.
    reply = _reply(1_500, cache_read=1_000, cache_creation=300)
    assert prompt_usage(reply) == PromptUsage(evaluated=500, cached=1_000)


def test_llama_cpp_timings_are_read_when_a_client_keeps_them() -> None:
    reply = AIMessage(
        content="ok",
        response_metadata={"timings": LLAMA_SERVER_ANSWER["timings"]},
        usage_metadata={"input_tokens": 993, "output_tokens": 10, "total_tokens": 1003},
    )
    assert prompt_usage(reply) == PromptUsage(evaluated=8, cached=985)


def test_timings_come_first_and_broken_timings_are_passed_over() -> None:
    usage = {"input_tokens": 50, "input_token_details": {"cache_read": 40}}
    assert prompt_usage_from(usage, {"timings": {"prompt_n": 9, "cache_n": 41}}) == (9, 41)
    assert prompt_usage_from(usage, {"timings": {"prompt_n": 9}}) == (10, 40)


def test_the_raw_openai_usage_is_the_last_resort() -> None:
    metadata = {"token_usage": LLAMA_SERVER_ANSWER["usage"]}
    assert prompt_usage_from({"input_tokens": 993}, metadata) == PromptUsage(8, 985)
    assert prompt_usage_from(None, {"token_usage": {"prompt_tokens": 993}}) is None


def test_chat_openai_keeps_the_cached_tokens_of_llama_server() -> None:
    # The seam the report rests on: ChatOpenAI drops `timings` but maps `cached_tokens`.
    chat_openai = pytest.importorskip("langchain_openai").ChatOpenAI
    model = chat_openai(base_url="http://127.0.0.1:1/v1", api_key="none", model="local")
    result = model._create_chat_result(LLAMA_SERVER_ANSWER)
    reply = result.generations[0].message
    assert "timings" not in reply.response_metadata
    assert reply.usage_metadata["input_token_details"] == {"cache_read": 985}
    assert prompt_usage(reply) == PromptUsage(evaluated=8, cached=985)


def test_chat_openai_keeps_them_from_the_usage_chunk_of_a_stream() -> None:
    chat_openai = pytest.importorskip("langchain_openai").ChatOpenAI
    from langchain_core.messages import AIMessageChunk  # noqa: PLC0415

    model = chat_openai(base_url="http://127.0.0.1:1/v1", api_key="none", model="local")
    chunk = {
        "choices": [],
        "object": "chat.completion.chunk",
        "model": "local-test",
        "usage": LLAMA_SERVER_ANSWER["usage"],
        "timings": LLAMA_SERVER_ANSWER["timings"],
    }
    generation = model._convert_chunk_to_generation_chunk(chunk, AIMessageChunk, {})
    assert generation is not None
    assert prompt_usage(generation.message) == PromptUsage(evaluated=8, cached=985)


@pytest.mark.parametrize(
    ("input_tokens", "cached"),
    [(994, 986), (993, 0), (400, 1), (7, 6)],
)
def test_evaluated_is_what_the_pruning_speed_counts(input_tokens: int, cached: int) -> None:
    # pruning/speed.py's processed_tokens measures the server by the same figure.
    reply = _reply(input_tokens, cache_read=cached)
    split = prompt_usage(reply)
    assert split is not None
    assert split.evaluated + split.cached == input_tokens
    assert processed_tokens(reply.usage_metadata, default=-1.0) == split.evaluated


def test_a_tally_adds_up_answered_requests() -> None:
    tally = RequestTally()
    tally.add(_reply(300, 20), 1.25)
    assert (tally.prompt_evaluated, tally.prompt_cached) == (None, None)  # nothing said yet
    tally.add(_reply(400, 30, cache_read=250), 0.5)
    tally.add(AIMessage(content="no usage"), 0.25)
    assert tally == RequestTally(
        requests=3,
        prompt_tokens=700,
        prompt_evaluated=150,
        prompt_cached=250,
        completion_tokens=50,
        seconds=2.0,
    )
