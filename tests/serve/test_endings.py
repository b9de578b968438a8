"""How a run ended, as the official ``openai`` client sees it (issue 37, issue 38 N9).

Agents on the scripted model server (:class:`~leanloop.testing.server.FakeModelServer`)
behind a real uvicorn: an answer is ``finish_reason: "stop"``; a run the context budget
ended is ``"length"``; a run that stopped for its rounds or for repeated calls is an
error the client raises (no finish reason would be true), with the text and the report in
it; the report's ``stop_reason`` is in the ``leanloop`` extension every time. A lone
surrogate is the client's 400 and never reaches the model server.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml
from fastapi import FastAPI

from leanloop.serve import ServeSettings, create_app
from leanloop.serve.main import load_served_agents
from leanloop.serve.streaming import finish_reason
from leanloop.testing.server import FakeModelServer, Reply, ServerRequest

TOKEN = "test-token-0123456789"  # noqa: S105 - a test token
FIXTURES = Path(__file__).parent / "fixtures"
GUESS = "The port might be 42."
# The scripted server counts a token a character: over the budget (85% of 6,000), in the window.
LONG_QUESTION = "Background: " + "the service has many parts. " * 150 + "Which port?"


def reply(request: ServerRequest) -> Reply:
    """Each agent's model, told apart by the marker in its system prompt."""
    system = str(request.messages[0].get("content")) if request.messages else ""
    offered_tools = bool(request.body.get("tools"))
    if "[calls]" in system:
        # Always the same call while tools are offered, then a guess without them.
        if offered_tools:
            return Reply(tool_calls=[{"name": "look_up", "arguments": {"key": "port"}}])
        return Reply(content=GUESS)
    if "[window]" in system:
        return Reply(content="The background says enough.")
    return Reply(content="The port is 8080.")


def agents_document(base_url: str) -> dict[str, Any]:
    model = {
        "provider": "openai-compatible",
        "model": "fake-model",
        "base_url": base_url,
        "api_key": "none",
        "temperature": 0,
    }
    tools = ["serve_models:look_up"]
    return {
        "version": 1,
        "models": {"fake": model, "narrow": {**model, "context_window": 6000}},
        "agents": {
            "answerer": {"model": "fake", "system_prompt": "[answer]"},
            "rounds": {
                "model": "fake",
                "system_prompt": "[calls]",
                "tools": tools,
                "max_rounds": 1,
            },
            "repeats": {
                "model": "fake",
                "system_prompt": "[calls]",
                "tools": tools,
                "max_repeated_calls": 1,
            },
            "window": {"model": "narrow", "system_prompt": "[window]"},
        },
    }


@dataclass
class Served:
    model_server: FakeModelServer
    base_url: str

    def client(self, **options: Any) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.base_url, api_key=TOKEN, **options)

    def chat_requests(self) -> int:
        return sum(1 for r in self.model_server.requests if r.path.endswith("/chat/completions"))


@pytest.fixture
def served(tmp_path: Path, start_server: Callable[[FastAPI], str]) -> Iterator[Served]:
    shutil.copy(FIXTURES / "serve_models.py", tmp_path / "serve_models.py")
    with FakeModelServer(handler=reply) as model_server:
        path = tmp_path / "agents.yaml"
        path.write_text(yaml.safe_dump(agents_document(model_server.base_url)))
        app = create_app(load_served_agents(str(path)), ServeSettings(token=TOKEN))
        yield Served(model_server, start_server(app))


def ask(text: str = "Which port?") -> list[Any]:
    return [{"role": "user", "content": text}]


# -- the mapping -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [
        ("answer", "stop"),
        ("budget_exhausted", "length"),
        ("max_rounds", None),
        ("repeated_calls", None),
        ("no_answer", None),
        ("a_reason_added_later", None),  # never passed off as an answer
    ],
)
def test_the_finish_reason_of_each_stop_reason(stop_reason: str, expected: str | None) -> None:
    assert finish_reason({"stop_reason": stop_reason}) == expected


def test_an_answer_is_stop(served: Served) -> None:
    client = served.client(max_retries=0)
    completion = client.chat.completions.create(model="answerer", messages=ask())
    assert completion.choices[0].message.content == "The port is 8080."
    assert completion.choices[0].finish_reason == "stop"
    assert (completion.model_extra or {})["leanloop"]["stop_reason"] == "answer"
    chunks = list(client.chat.completions.create(model="answerer", messages=ask(), stream=True))
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert (chunks[-1].model_extra or {})["leanloop"]["stop_reason"] == "answer"


def test_a_spent_context_budget_is_length(served: Served) -> None:
    client = served.client(max_retries=0)
    completion = client.chat.completions.create(model="window", messages=ask(LONG_QUESTION))
    assert completion.choices[0].finish_reason == "length"
    assert completion.choices[0].message.content == "The background says enough."
    assert (completion.model_extra or {})["leanloop"]["stop_reason"] == "budget_exhausted"
    chunks = list(
        client.chat.completions.create(model="window", messages=ask(LONG_QUESTION), stream=True)
    )
    assert chunks[-1].choices[0].finish_reason == "length"
    assert (chunks[-1].model_extra or {})["leanloop"]["stop_reason"] == "budget_exhausted"


@pytest.mark.parametrize(
    ("agent", "stop_reason"), [("rounds", "max_rounds"), ("repeats", "repeated_calls")]
)
def test_a_run_without_an_answer_is_an_error_the_client_raises(
    served: Served, agent: str, stop_reason: str
) -> None:
    # The client's default retries: the server's x-should-retry: false keeps it from
    # running the agent again (its model would be asked again), and from sleeping.
    client = served.client()
    with pytest.raises(openai.InternalServerError) as raised:
        client.chat.completions.create(model=agent, messages=ask())
    error = raised.value
    assert error.status_code == 502
    assert error.code == "ended_without_answer"
    assert error.response.headers["x-should-retry"] == "false"
    body = error.body
    assert isinstance(body, dict)
    assert body["leanloop"]["stop_reason"] == stop_reason
    assert f"stop reason {stop_reason}" in body["message"]
    assert body["content"]  # what the run ended with, for a client that wants to show it
    one_run = served.chat_requests()
    assert one_run >= 2  # a tool round and the tool-less request: one run, not three
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model=agent, messages=ask())
    assert served.chat_requests() == 2 * one_run


@pytest.mark.parametrize(
    ("agent", "stop_reason"), [("rounds", "max_rounds"), ("repeats", "repeated_calls")]
)
def test_a_streamed_run_without_an_answer_ends_in_an_error_event(
    served: Served, agent: str, stop_reason: str
) -> None:
    client = served.client(max_retries=0)
    stream = client.chat.completions.create(model=agent, messages=ask(), stream=True)
    texts: list[str] = []
    with pytest.raises(openai.APIError) as raised:
        for chunk in stream:
            assert chunk.choices[0].finish_reason is None  # no chunk calls it an answer
            texts.append(chunk.choices[0].delta.content or "")
    body = raised.value.body
    assert isinstance(body, dict)
    assert body["code"] == "ended_without_answer"
    assert body["leanloop"]["stop_reason"] == stop_reason
    assert body["content"] == "".join(texts)


# -- N9: a lone surrogate ----------------------------------------------------------------------


def test_a_lone_surrogate_is_the_clients_400_not_the_model_servers_502(served: Served) -> None:
    # The openai package cannot even encode one; JSON's escape carries it (curl, browsers).
    body = json.dumps({"model": "answerer", "messages": ask("Which port \ud800?")})
    assert "\\ud800" in body
    response = httpx.post(
        f"{served.base_url}/chat/completions",
        content=body,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_text", "messages.0.content")
    assert served.model_server.base_url not in response.text
    assert served.chat_requests() == 0
