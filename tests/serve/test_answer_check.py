"""The answer check through ``leanloop serve`` (issue 37), as the official ``openai`` client
sees it.

An agent on the scripted model server (:class:`~leanloop.testing.server.FakeModelServer`)
behind a real uvicorn reads ``inventory.json`` and answers with the keyboards' count where
the laptops' was asked; the check asks once more, alone, and the second answer stands. The
client gets only the answer that stands, streamed or not, never the first; the ``leanloop``
extension carries the check's verdict with the first answer, and the progress the client
opted into carries the ``answer_checked`` event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from fastapi import FastAPI

from leanloop.serve import ServeSettings, create_app
from leanloop.serve.main import load_served_agents
from leanloop.testing.server import FakeModelServer, Reply, ServerRequest

TOKEN = "test-token-0123456789"  # noqa: S105 - a test token
QUESTION = "How many laptops are in inventory.json?"
FIRST = "120"
STANDS = "There are 42 laptops in inventory.json."
INVENTORY = """{
  "warehouse": "Lyon-2",
  "items": [
    {"name": "laptop", "count": 42},
    {"name": "monitor", "count": 17},
    {"name": "keyboard", "count": 120}
  ]
}
"""


def reply(request: ServerRequest) -> Reply:
    """Read the file, answer with the neighbour's value, and answer right when asked alone."""
    messages = request.messages
    last = str(messages[-1].get("content")) if messages else ""
    if len(messages) == 1 and last.startswith("Two lines of inventory.json:"):
        return Reply(content=STANDS)
    if any(m.get("role") == "tool" for m in messages):
        return Reply(content=FIRST)
    return Reply(tool_calls=[{"name": "read_file", "arguments": {"path": "inventory.json"}}])


@dataclass
class Served:
    model_server: FakeModelServer
    base_url: str

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.base_url, api_key=TOKEN, max_retries=0)

    def chat_bodies(self) -> list[dict[str, Any]]:
        return self.model_server.chat_bodies()


@pytest.fixture
def served(tmp_path: Path, start_server: Callable[[FastAPI], str]) -> Iterator[Served]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "inventory.json").write_text(INVENTORY, encoding="utf-8")
    with FakeModelServer(handler=reply) as model_server:
        model = {
            "provider": "openai-compatible",
            "model": "fake-model",
            "base_url": model_server.base_url,
            "api_key": "none",
            "temperature": 0,
        }
        agent = {
            "model": "fake",
            "tools": ["read_file"],
            "workspace": str(workspace),
            "answer_check": "ask_again",
        }
        document = {"version": 1, "models": {"fake": model}, "agents": {"reader": agent}}
        path = tmp_path / "agents.yaml"
        path.write_text(yaml.safe_dump(document))
        app = create_app(load_served_agents(str(path)), ServeSettings(token=TOKEN))
        yield Served(model_server, start_server(app))


def ask() -> list[Any]:
    return [{"role": "user", "content": QUESTION}]


def _check_of(report: dict[str, Any]) -> None:
    check = report["answer_check"]
    assert (check["verdict"], check["first_answer"]) == ("asked_again", FIRST), check
    assert report["stop_reason"] == "answer"
    assert [r["kind"] for r in report["requests"]][-1] == "check"


def test_the_client_gets_the_answer_that_stands_and_the_checks_verdict(served: Served) -> None:
    completion = served.client().chat.completions.create(model="reader", messages=ask())
    assert completion.choices[0].message.content == STANDS
    assert completion.choices[0].finish_reason == "stop"
    _check_of((completion.model_extra or {})["leanloop"])
    # The request alone went to the model server: the lines in doubt and the question.
    alone = served.chat_bodies()[-1]
    assert [m["role"] for m in alone["messages"]] == ["user"]
    assert "inventory.json line 4:" in alone["messages"][0]["content"]
    assert "tools" not in alone


def test_a_streamed_run_streams_only_the_answer_that_stands_with_the_event(
    served: Served,
) -> None:
    stream = served.client().chat.completions.create(
        model="reader",
        messages=ask(),
        stream=True,
        extra_headers={"X-Leanloop-Progress": "events"},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == STANDS  # the first answer was never streamed
    progress = [(c.model_extra or {}).get("leanloop_progress") for c in chunks]
    checked = [p for p in progress if p and p["event"] == "answer_checked"]
    assert len(checked) == 1 and checked[0]["verdict"] == "asked_again", progress
    assert chunks[-1].choices[0].finish_reason == "stop"
    _check_of((chunks[-1].model_extra or {})["leanloop"])
