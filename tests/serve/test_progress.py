"""Progress of a streamed run: SSE comments always, chunks on request (ADR 0025 amendment 1)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from leanloop.serve.progress import Progress, comment

AUTH = {"Authorization": "Bearer test-token-0123456789"}
PROGRESS = {"X-Leanloop-Progress": "events"}


def ask(client: TestClient, headers: dict[str, str] | None = None) -> str:
    body = {
        "model": "looker",
        "stream": True,
        "messages": [{"role": "user", "content": "Which port?"}],
    }
    response = client.post("/v1/chat/completions", headers={**AUTH, **(headers or {})}, json=body)
    assert response.status_code == 200, response.text
    return response.text


def comments(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The ``: leanloop <event> <json>`` comments of a stream, in order."""
    found = []
    for block in text.split("\n\n"):
        if block.startswith(":"):
            assert "\n" not in block, block  # one comment line per event
            assert block.startswith(": leanloop "), block
            event, data = block.removeprefix(": leanloop ").split(" ", 1)
            found.append((event, json.loads(data)))
    return found


def chunks(text: str) -> list[dict[str, Any]]:
    blocks = [b.removeprefix("data: ") for b in text.split("\n\n") if b.startswith("data: ")]
    assert blocks[-1] == "[DONE]"
    return [json.loads(b) for b in blocks[:-1]]


def answer(events: list[dict[str, Any]]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in events)


@pytest.fixture
def client(make_app: Callable[..., FastAPI]) -> Iterator[TestClient]:
    with TestClient(make_app("tools.yaml")) as test_client:
        yield test_client


def test_progress_is_sent_as_comments_that_clients_skip(client: TestClient) -> None:
    text = ask(client)
    progress = comments(text)
    names = [event for event, _ in progress]
    # The answer check's verdict comes last: the answer's value, found where it was read.
    assert names == ["tool_start", "step", "answer_checked"]
    assert progress[2][1]["verdict"] == "grounded"
    assert progress[0][1]["name"] == "look_up"
    assert "port" in progress[0][1]["input"]
    step = progress[1][1]
    assert step["step"] == 1
    assert [(c["name"], c["args"], c["ok"]) for c in step["calls"]] == [
        ("look_up", {"key": "port"}, True)
    ]
    # The per-request budget estimate is not progress.
    assert "budget" not in names
    # Without the opt-in, the data events are exactly OpenAI's chunks.
    events = chunks(text)
    assert not any("leanloop_progress" in c for c in events)
    assert answer(events) == "Found: port is 42"
    # The comments come before the answer they led to.
    assert text.index(": leanloop step") < text.index("Found")


def test_the_opt_in_header_adds_progress_chunks(client: TestClient) -> None:
    events = chunks(ask(client, PROGRESS))
    progress = [c for c in events if "leanloop_progress" in c]
    assert [c["leanloop_progress"]["event"] for c in progress] == [
        "tool_start",
        "step",
        "answer_checked",
    ]
    assert progress[1]["leanloop_progress"]["calls"][0]["name"] == "look_up"
    for chunk in progress:
        # An empty delta: a client that ignores the key builds the same answer.
        assert chunk["object"] == "chat.completion.chunk"
        assert chunk["choices"] == [
            {"index": 0, "delta": {}, "logprobs": None, "finish_reason": None}
        ]
    assert len({c["id"] for c in events}) == 1
    assert answer(events) == "Found: port is 42"


@pytest.mark.parametrize("headers", [{}, PROGRESS])
def test_the_last_chunk_carries_usage_and_the_report(
    client: TestClient, headers: dict[str, str]
) -> None:
    last = chunks(ask(client, headers))[-1]
    assert last["choices"][0]["finish_reason"] == "stop"
    report = last["leanloop"]
    assert report["stop_reason"] == "answer"
    assert [c["name"] for c in report["tool_calls"]] == ["look_up"]
    usage = last["usage"]
    assert usage["completion_tokens"] == sum(r["output_tokens"] for r in report["requests"])
    assert usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_other_header_values_do_not_opt_in(client: TestClient) -> None:
    events = chunks(ask(client, {"X-Leanloop-Progress": "yes"}))
    assert not any("leanloop_progress" in c for c in events)


def test_a_comment_is_one_line_whatever_the_payload() -> None:
    line = comment(Progress("step", {"text": "two\nlines", "odd": object()}))
    assert line.startswith(b": leanloop step {")
    assert line.endswith(b"\n\n")
    assert line.count(b"\n") == 2
    assert json.loads(line.decode().split(" ", 3)[3])["text"] == "two\nlines"


def test_the_openai_client_reads_progress_chunks_and_the_same_answer(
    make_app: Callable[..., FastAPI], start_server: Callable[[FastAPI], str]
) -> None:
    base_url = start_server(make_app("tools.yaml"))
    client = openai.OpenAI(base_url=base_url, api_key=AUTH["Authorization"][7:], max_retries=0)
    question: list[Any] = [{"role": "user", "content": "Which port?"}]
    plain = list(client.chat.completions.create(model="looker", messages=question, stream=True))
    opted = list(
        client.chat.completions.create(
            model="looker", messages=question, stream=True, extra_headers=PROGRESS
        )
    )

    def text(stream: list[Any]) -> str:
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    assert text(plain) == text(opted) == "Found: port is 42"
    progress = [(c.model_extra or {}).get("leanloop_progress") for c in opted]
    assert [p["event"] for p in progress if p] == ["tool_start", "step", "answer_checked"]
    assert not any((c.model_extra or {}).get("leanloop_progress") for c in plain)
    assert (opted[-1].model_extra or {})["leanloop"]["stop_reason"] == "answer"
