"""The fake model server (src/leanloop/testing/server.py, issue 26): every dialect, every
fault, the recording and the command line, against the real server on 127.0.0.1."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessageChunk
from langchain_openai import ChatOpenAI

from leanloop.budget import parse_overflow
from leanloop.testing.server import (
    FakeModelServer,
    Reply,
    ServerRequest,
    chars_per_token,
    context_overflow,
    echo,
    http_error,
    main,
    render_template,
    tools_refused,
)

USER = [{"role": "user", "content": "What is the code word?"}]
CALL = {"name": "read_file", "arguments": {"path": "notes.txt"}}


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(model="m") as running:
        yield running


def _openai(server: FakeModelServer, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model="m", base_url=server.base_url, api_key="sk-test", max_retries=0, **kwargs
    )


def _chat(server: FakeModelServer, timeout: float = 5, **body: Any) -> httpx.Response:
    return httpx.post(
        f"{server.base_url}/chat/completions", json={"model": "m", "messages": USER, **body},
        timeout=timeout,
    )  # fmt: skip


def _events(response: httpx.Response) -> list[Any]:
    """The data of each server-sent event (``[DONE]`` as the string)."""
    lines = [line[6:] for line in response.text.split("\n\n") if line.startswith("data: ")]
    return [line if line == "[DONE]" else json.loads(line) for line in lines]


# ---- OpenAI dialect -----------------------------------------------------------------------


def test_the_server_answers_chat_openai_with_text_then_tool_calls_and_usage(
    server: FakeModelServer,
) -> None:
    server.queue(Reply(content="Reading.", tool_calls=[CALL]), Reply(content="river"))
    model = _openai(server)

    first = model.invoke("Code word?")
    second = model.invoke("Code word?")

    assert first.tool_calls[0]["name"] == "read_file"  # type: ignore[attr-defined]
    assert first.tool_calls[0]["args"] == {"path": "notes.txt"}  # type: ignore[attr-defined]
    assert second.content == "river"
    assert second.usage_metadata is not None  # type: ignore[attr-defined]
    assert server.remaining() == 0


async def test_a_stream_ends_with_a_usage_chunk_holding_cached_tokens(
    server: FakeModelServer,
) -> None:
    server.queue(Reply(content="The code word is river.", prompt_tokens=90, cached_tokens=80))
    model = _openai(server, stream_usage=True)

    pieces = [chunk async for chunk in model.astream("Code word?")]

    assert "".join(str(p.content) for p in pieces) == "The code word is river."
    assert len([p for p in pieces if p.content]) == 2  # 16 characters a piece
    total = sum(pieces[1:], pieces[0])
    assert isinstance(total, AIMessageChunk) and total.usage_metadata is not None
    assert total.usage_metadata["input_tokens"] == 90
    assert total.usage_metadata.get("input_token_details", {}).get("cache_read") == 80


def test_a_stream_without_include_usage_has_no_usage_chunk(server: FakeModelServer) -> None:
    server.queue(Reply(content="hi", chunk_size=1))

    events = _events(_chat(server, stream=True))

    assert events[-1] == "[DONE]"
    assert [e["choices"][0]["delta"].get("content") for e in events[1:3]] == ["h", "i"]
    assert all(e == "[DONE]" or e["choices"] for e in events)


def test_models_lists_the_model_with_its_window(server: FakeModelServer) -> None:
    listed = httpx.get(f"{server.base_url}/models").json()

    assert listed["data"][0]["id"] == "m"
    assert listed["data"][0]["meta"]["n_ctx"] == 4096


# ---- faults ---------------------------------------------------------------------------


def test_cut_ends_the_stream_before_the_finish_and_done(server: FakeModelServer) -> None:
    server.queue(Reply(content="half an ans", fault="cut"))

    events = _events(_chat(server, stream=True))

    assert "[DONE]" not in events
    assert all(e["choices"][0]["finish_reason"] is None for e in events)
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events) == "half an ans"


def test_cut_call_ends_the_stream_halfway_through_the_tool_arguments(
    server: FakeModelServer,
) -> None:
    server.queue(Reply(tool_calls=[CALL], fault="cut_call"))

    events = _events(_chat(server, stream=True))

    call = events[-1]["choices"][0]["delta"]["tool_calls"][0]
    assert call["function"]["name"] == "read_file"
    assert call["function"]["arguments"] == '{"path": "'  # 10 of 21 characters
    assert events[-1]["choices"][0]["finish_reason"] is None


def test_cut_after_finish_sends_the_finish_but_no_usage_and_no_done(
    server: FakeModelServer,
) -> None:
    server.queue(Reply(content="done", fault="cut_after_finish"))

    events = _events(_chat(server, stream=True, stream_options={"include_usage": True}))

    assert events[-1]["choices"][0]["finish_reason"] == "stop"


def test_a_cut_json_answer_is_shorter_than_its_length(server: FakeModelServer) -> None:
    server.queue(Reply(content="whole", fault="cut"))

    with pytest.raises(httpx.RemoteProtocolError):
        _chat(server)


def test_malformed_sends_broken_json(server: FakeModelServer) -> None:
    server.queue(Reply(fault="malformed"), Reply(fault="malformed"))

    assert _chat(server).status_code == 200
    with pytest.raises(json.JSONDecodeError):
        _chat(server).json()


def test_an_http_error_has_its_status_json_body_and_headers(server: FakeModelServer) -> None:
    server.queue(http_error(429, "slow down", Retry_After="7"))

    with pytest.raises(openai.RateLimitError) as refused:
        _openai(server).invoke("hi")

    assert refused.value.response.headers["Retry-After"] == "7"
    assert refused.value.body == {
        "message": "slow down", "type": "invalid_request_error", "code": 429,
    }  # fmt: skip


def test_the_llama_cpp_context_refusal_is_an_overflow_with_its_figures(
    server: FakeModelServer,
) -> None:
    server.queue(context_overflow(2500, 2048))

    with pytest.raises(openai.BadRequestError) as refused:
        _openai(server).invoke("hi")

    found = parse_overflow(refused.value)
    assert found is not None
    assert (found.prompt_tokens, found.window) == (2500, 2048)


@pytest.mark.parametrize(
    ("status", "kind"), [(500, "server_error"), (400, "invalid_request_error")]
)
def test_tools_refused_is_llama_servers_jinja_message(
    server: FakeModelServer, status: int, kind: str
) -> None:
    server.queue(tools_refused(status))

    response = _chat(server)

    assert response.status_code == status
    assert response.json()["error"]["message"] == "tools param requires --jinja flag"
    assert response.json()["error"]["type"] == kind


def test_hang_never_answers_until_the_server_stops() -> None:
    running = FakeModelServer(replies=[Reply(fault="hang")]).start()

    with pytest.raises(httpx.ReadTimeout):
        _chat(running, timeout=0.05)
    started = time.monotonic()
    running.stop()

    assert time.monotonic() - started < 1  # the hung reply let go


def test_delay_and_chunk_delay_slow_the_answer(server: FakeModelServer) -> None:
    server.queue(
        Reply(content="ab", delay=0.02), Reply(content="abc", chunk_delay=0.01, chunk_size=1)
    )

    started = time.monotonic()
    _chat(server)
    between = time.monotonic()
    _chat(server, stream=True)
    ended = time.monotonic()

    assert between - started >= 0.02
    assert ended - between >= 0.04  # role, three pieces and the finish, 10 ms each


def test_stall_sends_the_start_then_nothing_then_closes(server: FakeModelServer) -> None:
    server.queue(Reply(content="start", fault="stall", stall=0.02))

    events = _events(_chat(server, stream=True))

    assert events[-1]["choices"][0]["delta"] == {"content": "start"}


def test_drop_closes_the_connection_without_an_answer(server: FakeModelServer) -> None:
    server.queue(Reply(fault="drop"), Reply(content="after"))

    with pytest.raises(httpx.RemoteProtocolError):
        _chat(server)
    assert _chat(server).json()["choices"][0]["message"]["content"] == "after"


def test_kill_closes_the_port() -> None:
    running = FakeModelServer(replies=[Reply(fault="kill")]).start()
    url = running.base_url

    with pytest.raises(httpx.TransportError):
        _chat(running)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models")
    running.stop()  # after kill: nothing left to do


def test_an_empty_queue_answers_500_or_repeats_the_last_reply() -> None:
    with FakeModelServer() as strict, FakeModelServer(when_empty="repeat") as lenient:
        lenient.queue(Reply(content="again"))

        assert _chat(strict).status_code == 500
        replies = [_chat(lenient).json()["choices"][0]["message"]["content"] for _ in "12"]

    assert replies == ["again", "again"]


# ---- handler ------------------------------------------------------------------------------


def test_a_handler_computes_each_reply_from_the_request() -> None:
    with FakeModelServer(handler=echo(limit=8)) as running:
        answer = _openai(running).invoke("What is the code word?")

    assert answer.content == "echo: What is "


def test_count_prompts_refuses_what_the_template_makes_too_long() -> None:
    seen: list[ServerRequest] = []

    def handler(request: ServerRequest) -> Reply:
        seen.append(request)
        return Reply(content="fits")

    with FakeModelServer(handler=handler, n_ctx=60, count_prompts=True) as running:
        small = _chat(running, messages=[{"role": "user", "content": "hi"}])
        large = _chat(running, messages=[{"role": "user", "content": "x" * 100}])
        exchanges = running.exchanges

    assert small.json()["usage"]["prompt_tokens"] == len("<|user|>hi<|assistant|>")
    assert large.status_code == 400
    assert large.json()["error"]["type"] == "exceed_context_size_error"
    assert large.json()["error"]["n_ctx"] == 60
    assert len(seen) == 1  # a refused prompt never reaches the handler
    assert [e.prompt_tokens for e in exchanges] == [23, 121]
    assert exchanges[1].reply is not None and exchanges[1].reply.status == 400


# ---- llama.cpp extras --------------------------------------------------------------------


def test_llama_cpp_props_health_tokenize_and_apply_template() -> None:
    body = {"messages": USER, "tools": [{"type": "function", "function": {"name": "f"}}]}
    with FakeModelServer(n_ctx=2048, tokenizer=chars_per_token(2)) as running:
        props = httpx.get(f"{running.url}/props").json()
        health = httpx.get(f"{running.url}/health")
        tokens = httpx.post(f"{running.url}/tokenize", json={"content": "abcdef"}).json()
        prompt = httpx.post(f"{running.url}/apply-template", json=body).json()

    assert props["default_generation_settings"]["n_ctx"] == 2048
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert tokens == {"tokens": [0, 1, 2]}
    assert prompt["prompt"] == render_template(body)
    assert prompt["prompt"].startswith("<|user|>What is the code word?[{")


def test_without_tokenizer_or_template_those_endpoints_are_404() -> None:
    with FakeModelServer(tokenizer=None, template=None, health_status=503) as running:
        tokenize = httpx.post(f"{running.url}/tokenize", json={"content": "a"})
        template = httpx.post(f"{running.url}/apply-template", json={"messages": USER})
        health = httpx.get(f"{running.url}/health")

    assert (tokenize.status_code, template.status_code, health.status_code) == (404, 404, 503)


def test_a_route_overrides_an_endpoint_and_may_hang(server: FakeModelServer) -> None:
    server.route("GET", "/props", b"not json", status=200)
    server.route("GET", "/v1/models", hang=True)

    assert httpx.get(f"{server.url}/props").content == b"not json"
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(f"{server.base_url}/models", timeout=0.05)


# ---- Ollama dialect ------------------------------------------------------------------------


def test_chat_ollama_streams_and_calls_tools_and_loads_at_its_num_ctx() -> None:
    langchain_ollama = pytest.importorskip("langchain_ollama")
    with FakeModelServer(model="qwen3:4b") as running:
        running.queue(Reply(tool_calls=[CALL]), Reply(content="The code word is river."))
        model = langchain_ollama.ChatOllama(model="qwen3:4b", base_url=running.url, num_ctx=8192)

        called = model.invoke("Code word?")
        streamed = "".join(str(c.content) for c in model.stream("Code word?"))
        ps = httpx.get(f"{running.url}/api/ps").json()
        bodies = running.chat_bodies()

    assert called.tool_calls[0]["args"] == {"path": "notes.txt"}
    assert streamed == "The code word is river."
    assert ps["models"][0]["context_length"] == 8192
    assert [b["options"]["num_ctx"] for b in bodies] == [8192, 8192]


def test_ollama_show_tags_and_a_plain_json_answer() -> None:
    with FakeModelServer(model="qwen3:4b", trained=40960, parameters="num_ctx 8192") as running:
        running.queue(Reply(content="hi", prompt_tokens=7))
        shown = httpx.post(f"{running.url}/api/show", json={"model": "qwen3:4b"}).json()
        unknown = httpx.post(f"{running.url}/api/show", json={"model": "other"})
        tags = httpx.get(f"{running.url}/api/tags").json()
        body = {"model": "qwen3:4b", "messages": USER, "stream": False}
        answer = httpx.post(f"{running.url}/api/chat", json=body).json()
        missing = httpx.post(f"{running.url}/api/chat", json=body)

    assert shown["model_info"]["qwen3.context_length"] == 40960
    assert shown["parameters"] == "num_ctx 8192"
    assert unknown.status_code == 404
    assert tags["models"][0]["name"] == "qwen3:4b"
    assert (answer["message"]["content"], answer["done"], answer["prompt_eval_count"]) == (
        "hi", True, 7,
    )  # fmt: skip
    assert missing.status_code == 500
    assert isinstance(missing.json()["error"], str)  # Ollama's error shape


def test_an_ollama_stream_cut_has_no_done_line() -> None:
    with FakeModelServer(model="q") as running:
        running.queue(Reply(content="abcdef", chunk_size=3, fault="cut"))
        body = {"model": "q", "messages": USER}
        lines = httpx.post(f"{running.url}/api/chat", json=body).text.splitlines()

    assert [json.loads(line)["done"] for line in lines] == [False, False]


# ---- recording --------------------------------------------------------------------------


def test_every_request_is_recorded_in_order_with_headers_and_body(
    server: FakeModelServer,
) -> None:
    server.queue(Reply(content="a"))
    httpx.get(f"{server.url}/health")
    _openai(server).invoke("Code word?")

    health, chat = server.requests

    assert (health.index, health.method, health.path) == (0, "GET", "/health")
    assert (chat.index, chat.method, chat.path, chat.dialect) == (
        1, "POST", "/v1/chat/completions", "openai",
    )  # fmt: skip
    assert chat.headers["authorization"] == "Bearer sk-test"
    assert chat.last_user_text == "Code word?"
    assert health.time <= chat.time
    server.reset()
    assert (server.requests, server.exchanges, server.remaining()) == ([], [], 0)


def test_a_hundred_clients_at_once_are_all_answered_and_recorded() -> None:
    body = {"messages": USER}
    # One client, a hundred connections: building a client per request costs seconds here.
    with FakeModelServer(handler=echo()) as running, httpx.Client(timeout=10) as client:
        url = f"{running.base_url}/chat/completions"
        with ThreadPoolExecutor(max_workers=100) as pool:
            codes = list(pool.map(lambda _: client.post(url, json=body).status_code, range(100)))
        indexes = sorted(r.index for r in running.requests)

    assert codes == [200] * 100
    assert indexes == list(range(100))


def test_the_package_leaves_the_server_to_its_module() -> None:
    # Importing the package must not import the server: `python -m leanloop.testing.server`
    # would warn, and a module __getattr__ would hide the package's names from the check
    # of agents files (refs.py reads them without importing).
    code = "import sys, leanloop.testing; print('leanloop.testing.server' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_script_reply_with_an_unknown_key_or_fault_is_refused() -> None:
    assert Reply.from_json({"content": "a", "fault": "cut"}).fault == "cut"
    with pytest.raises(ValueError, match="unknown reply keys"):
        Reply.from_json({"text": "a"})
    with pytest.raises(ValueError, match="unknown fault"):
        Reply.from_json({"fault": "explode"})


# ---- command line --------------------------------------------------------------------------


def _launch(*args: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "leanloop.testing.server", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:  # the banner, then the port it bound
        if " listening on " in line:
            return process, int(line.rsplit(" ", 1)[1])
    raise AssertionError(process.communicate())


def test_the_command_line_serves_a_script_and_exits_0_on_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"content": "from the file"}], "n_ctx": 9}))
    # llama-server's flags, as leanloop's local model starts it.
    llama_flags = ["-m", "model.gguf", "--ctx-size", "2048", "-np", "1", "--no-webui"]
    process, port = _launch(*llama_flags, "--alias", "local", "--jinja", "--script", str(script))
    try:
        props = httpx.get(f"http://127.0.0.1:{port}/props").json()
        body = {"messages": USER}
        answer = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body).json()
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=10)

    assert props["default_generation_settings"]["n_ctx"] == 2048  # the flag beats the file
    assert answer["model"] == "local"
    assert answer["choices"][0]["message"]["content"] == "from the file"
    assert process.returncode == 0, err
    assert "Traceback" not in err


def test_the_command_line_prints_a_version_and_fails_to_load_on_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--version"]) == 0
    assert main(["--fail-to-load", "-m", "x.gguf", "--name", "fake llama-server"]) == 1

    out = capsys.readouterr().out
    assert "version: 0" in out
    assert "fake llama-server model x.gguf" in out.splitlines()
    assert "error: failed to load model" in out
