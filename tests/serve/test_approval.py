"""Approval of tool calls through ``leanloop serve`` (issue 41, ADR 0037), as the official
``openai`` client sees it.

An agent on the scripted model server writes ``out.txt`` with ``write_file``, which asks a
person first. ``serve`` asks nobody: the run pauses, the completion ends with
``finish_reason: "stop"``, a text that says it waits, and the pending calls under the
``leanloop`` extension. The session's next request carries the decisions
(``extra_body={"leanloop": {"approvals": {...}}}``) and goes on with the paused turn.
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
QUESTION = "Write the port to out.txt."
DONE = "Wrote out.txt."
OTHER_WAY = "I will not write it, then."


def reply(request: ServerRequest) -> Reply:
    """Write ``out.txt`` (call ``c1``) unless a tool result came back; then answer."""
    tool = [m for m in request.messages if m.get("role") == "tool"]
    if not tool:
        call = {
            "id": "c1",
            "name": "write_file",
            "arguments": {"path": "out.txt", "content": "7431"},
        }
        return Reply(tool_calls=[call])
    if "rejected" in str(tool[-1].get("content")):
        return Reply(content=OTHER_WAY)
    return Reply(content=DONE)


@dataclass
class Served:
    model_server: FakeModelServer
    base_url: str
    workspace: Path

    def client(self, session: str | None = "s1") -> openai.OpenAI:
        headers = {"X-Leanloop-Session": session} if session else None
        return openai.OpenAI(
            base_url=self.base_url, api_key=TOKEN, max_retries=0, default_headers=headers
        )


@pytest.fixture
def served(tmp_path: Path, start_server: Callable[[FastAPI], str]) -> Iterator[Served]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FakeModelServer(handler=reply) as model_server:
        model = {
            "provider": "openai-compatible",
            "model": "fake-model",
            "base_url": model_server.base_url,
            "api_key": "none",
            "temperature": 0,
        }
        agent = {"model": "fake", "tools": ["write_file"], "workspace": str(workspace)}
        document = {"version": 1, "models": {"fake": model}, "agents": {"writer": agent}}
        path = tmp_path / "agents.yaml"
        path.write_text(yaml.safe_dump(document))
        app = create_app(load_served_agents(str(path)), ServeSettings(token=TOKEN))
        yield Served(model_server, start_server(app), workspace)


def ask(text: str = QUESTION) -> list[Any]:
    return [{"role": "user", "content": text}]


def decide(decisions: dict[str, Any]) -> dict[str, Any]:
    return {"leanloop": {"approvals": decisions}}


def _paused(report: dict[str, Any]) -> None:
    assert report["stop_reason"] == "paused"
    [pending] = report["pending_calls"]
    assert (pending["id"], pending["tool"]) == ("c1", "write_file")
    assert pending["args"] == {"path": "out.txt", "content": "7431"}


def test_a_paused_run_ends_with_the_pending_calls_and_the_decisions_go_on(
    served: Served,
) -> None:
    client = served.client()
    paused = client.chat.completions.create(model="writer", messages=ask())
    assert paused.choices[0].finish_reason == "stop"
    assert "waiting for approval of 1 tool call" in (paused.choices[0].message.content or "")
    _paused((paused.model_extra or {})["leanloop"])
    assert not (served.workspace / "out.txt").exists()

    answer = client.chat.completions.create(
        model="writer", messages=ask(), extra_body=decide({"c1": "approve"})
    )
    assert answer.choices[0].message.content == DONE
    assert answer.choices[0].finish_reason == "stop"
    report = (answer.model_extra or {})["leanloop"]
    assert report["stop_reason"] == "answer"
    assert [(a["call_id"], a["decision"]) for a in report["approvals"]] == [("c1", "approve")]
    assert (served.workspace / "out.txt").read_text() == "7431"


def test_a_rejection_is_told_to_the_model(served: Served) -> None:
    client = served.client()
    client.chat.completions.create(model="writer", messages=ask())
    rejected = {"c1": {"decision": "reject", "reason": "not now"}}
    answer = client.chat.completions.create(
        model="writer", messages=ask(), extra_body=decide(rejected)
    )
    assert answer.choices[0].message.content == OTHER_WAY
    told = served.model_server.chat_bodies()[-1]["messages"][-1]
    assert told["role"] == "tool"
    assert "the user rejected this call: not now" in told["content"]
    assert not (served.workspace / "out.txt").exists()


def test_a_streamed_pause_brings_the_pending_calls_in_the_last_chunk(served: Served) -> None:
    client = served.client()
    stream = client.chat.completions.create(model="writer", messages=ask(), stream=True)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "waiting for approval of 1 tool call" in text
    assert chunks[-1].choices[0].finish_reason == "stop"
    _paused((chunks[-1].model_extra or {})["leanloop"])

    resumed = client.chat.completions.create(
        model="writer", messages=ask(), extra_body=decide({"c1": "approve"}), stream=True
    )
    chunks = list(resumed)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == DONE
    assert (chunks[-1].model_extra or {})["leanloop"]["stop_reason"] == "answer"


def test_a_new_question_while_a_turn_waits_is_a_409_naming_the_calls(served: Served) -> None:
    client = served.client()
    client.chat.completions.create(model="writer", messages=ask())
    with pytest.raises(openai.ConflictError) as refused:
        client.chat.completions.create(model="writer", messages=ask("Something else?"))
    assert refused.value.code == "approval_pending"
    assert "c1" in refused.value.message and "leanloop.approvals" in refused.value.message
    # The paused turn is still there: the decisions go on with it.
    answer = client.chat.completions.create(
        model="writer", messages=ask(), extra_body=decide({"c1": "approve"})
    )
    assert answer.choices[0].message.content == DONE


def test_decisions_without_a_paused_turn_or_a_session_are_refused(served: Served) -> None:
    with pytest.raises(openai.ConflictError) as nothing:
        served.client("fresh").chat.completions.create(
            model="writer", messages=ask(), extra_body=decide({"c1": "approve"})
        )
    assert nothing.value.code == "nothing_to_resume"
    with pytest.raises(openai.BadRequestError) as sessionless:
        served.client(None).chat.completions.create(
            model="writer", messages=ask(), extra_body=decide({"c1": "approve"})
        )
    assert sessionless.value.code == "invalid_request"
    assert "session" in sessionless.value.message


@pytest.mark.parametrize(
    ("extension", "where"),
    [
        ({"approvals": {"c1": "maybe"}}, "leanloop.approvals.c1"),
        ({"approvals": ["c1"]}, "leanloop.approvals"),
        ({"approve": {"c1": "approve"}}, "leanloop.approve"),
        ("yes", "leanloop"),
    ],
)
def test_a_bad_extension_is_a_400_naming_the_field(
    served: Served, extension: object, where: str
) -> None:
    with pytest.raises(openai.BadRequestError) as bad:
        served.client().chat.completions.create(
            model="writer", messages=ask(), extra_body={"leanloop": extension}
        )
    assert bad.value.param == where, bad.value.message


def test_without_a_session_a_paused_run_says_it_cannot_be_resumed(served: Served) -> None:
    paused = served.client(None).chat.completions.create(model="writer", messages=ask())
    assert paused.choices[0].finish_reason == "stop"
    assert "with a session" in (paused.choices[0].message.content or "")
    _paused((paused.model_extra or {})["leanloop"])
