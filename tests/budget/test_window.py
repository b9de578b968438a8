"""Budget window discovery (src/leanloop/budget/window.py), moved from
features/budget_window.feature (issue 26).

leanloop asks the server that loaded the model how big its context window is, before
trusting a model profile or a default, and records where the figure came from. The window
test server and the resolver on a fake clock are in tests/budget/conftest.py.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from leanloop.budget import PROCESS_STATE, WindowResolver, small_window_warning

Windows = Any  # tests/budget/conftest.py's Windows


async def test_a_configured_window_wins_and_no_server_is_asked(windows: Windows) -> None:
    windows.server.answer("GET", "/props", {"default_generation_settings": {"n_ctx": 4096}})

    window = await windows.at_server("openai-compatible", "m", configured=2048)

    windows.check(window, 2048, "config")
    assert windows.server.count() == 0, windows.server.seen


async def test_a_zero_configured_window_is_a_clear_error(windows: Windows) -> None:
    with pytest.raises(ValueError, match="context_window must be a positive number of tokens"):
        await windows.at_server("openai-compatible", "m", configured=0)


@pytest.mark.parametrize(
    ("provider", "model", "method", "path", "answer", "tokens", "source"),
    [
        (
            "openai-compatible",
            "qwen",
            "GET",
            "/props",
            '{"default_generation_settings": {"n_ctx": 4096}}',
            4096,
            "server:llama.cpp",
        ),
        ("openai-compatible", "qwen", "GET", "/props", '{"n_ctx": 3072}', 3072, "server:llama.cpp"),
        (
            "openai-compatible",
            "qwen",
            "GET",
            "/v1/models",
            '{"data": [{"id": "/models/qwen.gguf", '
            '"meta": {"n_ctx": 2048, "n_ctx_train": 32768}}]}',
            2048,
            "server:openai-models",
        ),
        (
            "openai-compatible",
            "mistral",
            "GET",
            "/v1/models",
            '{"data": [{"id": "llama", "max_model_len": 8192}, '
            '{"id": "mistral", "max_model_len": 16384}]}',
            16384,
            "server:openai-models",
        ),
        (
            "openai-compatible",
            "phi",
            "GET",
            "/api/v0/models",
            '{"data": [{"id": "phi", "state": "loaded", "max_context_length": 131072, '
            '"loaded_context_length": 6144}]}',
            6144,
            "server:lm-studio",
        ),
        (
            "ollama",
            "llama3",
            "GET",
            "/api/ps",
            '{"models": [{"name": "llama3:latest", "model": "llama3:latest", '
            '"context_length": 8192}]}',
            8192,
            "server:ollama-ps",
        ),
        (
            "ollama",
            "llama3",
            "POST",
            "/api/show",
            '{"parameters": "stop <eot>\\nnum_ctx 12288\\ntemperature 0.2"}',
            12288,
            "server:ollama-show",
        ),
        (
            "ollama",
            "llama3",
            "POST",
            "/api/show",
            '{"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}}',
            8192,
            "default:ollama",
        ),
        (
            "openai-compatible",
            "llama3",
            "GET",
            "/api/ps",
            '{"models": [{"name": "llama3:latest", "context_length": 4096}]}',
            4096,
            "server:ollama-ps",
        ),
    ],
)
async def test_each_kind_of_local_server_tells_its_window(
    windows: Windows,
    *,
    provider: str,
    model: str,
    method: str,
    path: str,
    answer: str,
    tokens: int,
    source: str,
) -> None:
    windows.server.answer(method, path, json.loads(answer))

    windows.check(await windows.at_server(provider, model), tokens, source)


async def test_ollama_model_show_request_names_the_model(windows: Windows) -> None:
    windows.server.answer("POST", "/api/show", {"parameters": "num_ctx 4096"})

    windows.check(await windows.at_server("ollama", "llama3"), 4096, "server:ollama-show")

    seen = windows.server.seen
    bodies = [s.body for s in seen if (s.method, s.path) == ("POST", "/api/show")]
    assert any(json.loads(b or b"{}").get("model") == "llama3" for b in bodies), bodies


async def test_the_running_ollama_model_wins_over_its_modelfile(windows: Windows) -> None:
    windows.server.answer(
        "GET",
        "/api/ps",
        {
            "models": [
                {"name": "other:7b", "context_length": 2048},
                {"name": "llama3:latest", "context_length": 8192},
            ]
        },
    )
    windows.server.answer("POST", "/api/show", {"parameters": "num_ctx 4096"})

    windows.check(await windows.at_server("ollama", "llama3"), 8192, "server:ollama-ps")


async def test_an_ollama_that_only_takes_post_on_its_process_list_is_still_read(
    windows: Windows,
) -> None:
    windows.server.answer("GET", "/api/ps", b"{}", status=405)
    windows.server.answer(
        "POST", "/api/ps", {"models": [{"name": "llama3:latest", "context_length": 6000}]}
    )

    windows.check(await windows.at_server("ollama", "llama3"), 6000, "server:ollama-ps")


async def test_llama_cpp_props_wins_over_its_model_listing(windows: Windows) -> None:
    windows.server.answer("GET", "/props", {"default_generation_settings": {"n_ctx": 2048}})
    windows.server.answer("GET", "/v1/models", {"data": [{"id": "qwen", "meta": {"n_ctx": 4096}}]})

    window = await windows.at_server("openai-compatible", "qwen")

    windows.check(window, 2048, "server:llama.cpp")


async def test_a_model_listing_that_does_not_name_the_model_is_not_guessed_from(
    windows: Windows,
) -> None:
    windows.server.answer(
        "GET",
        "/v1/models",
        {
            "data": [
                {"id": "llama", "max_model_len": 8192},
                {"id": "mistral", "max_model_len": 16384},
            ]
        },
    )

    windows.check(await windows.at_server("openai-compatible", "phi"), 32768, "default:local")


@pytest.mark.parametrize(
    ("status", "raw"),
    [
        (200, "this is not json"),
        (200, "[1, 2, 3]"),
        (200, '{"default_generation_settings": {"n_ctx": "lots"}}'),
        (200, '{"n_ctx": -1}'),
        (200, '{"n_ctx": true}'),
        (500, '{"n_ctx": 4096}'),
    ],
)
async def test_a_server_answering_garbage_is_unknown_never_an_error(
    windows: Windows, status: int, raw: str
) -> None:
    windows.server.answer("GET", "/props", raw.encode(), status=status)
    windows.says_max_input(20000)

    windows.check(await windows.at_server("openai-compatible", "qwen"), 20000, "profile")


async def test_a_server_that_will_not_say_falls_back_to_the_local_default(
    windows: Windows,
) -> None:
    assert windows.server.routes == {}

    windows.check(await windows.at_server("openai-compatible", "qwen"), 32768, "default:local")


@pytest.mark.parametrize(
    ("base_url", "tokens", "source"),
    [
        ("http://127.0.0.1:1/v1", 32768, "default:local"),
        ("http://127.0.0.1:99999/v1", 32768, "default:local"),
        ("ftp://127.0.0.1/v1", 32768, "default:local"),
        ("http://[::1/v1", 128000, "default:hosted"),
    ],
)
async def test_a_base_url_nothing_answers_at_falls_back_without_an_error(
    windows: Windows, base_url: str, tokens: int, source: str
) -> None:
    window = await windows.resolve(
        provider="openai-compatible", base_url=base_url, model_name="gpt-4o"
    )

    windows.check(window, tokens, source)


def _unreachable() -> httpx.AsyncClient:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no route", request=request)

    return httpx.AsyncClient(transport=httpx.MockTransport(refuse))


@pytest.mark.parametrize(
    ("base_url", "tokens", "source", "note"),
    [
        ("http://127.0.0.1:8080/v1", 32768, "default:local", "did not say its window"),
        ("http://10.1.2.3:8000/v1", 32768, "default:local", "set context_window"),
        ("http://llama:8080/v1", 32768, "default:local", "the server at http://llama:8080/v1"),
        ("http://gpu-box.local:8080/v1", 32768, "default:local", "did not say its window"),
        (
            "https://api.groq.com/openai/v1",
            128000,
            "default:hosted",
            "(a hosted API) did not say its window",
        ),
        (
            "https://openrouter.ai/api/v1",
            128000,
            "default:hosted",
            "set context_window if it is smaller",
        ),
        ("http://8.8.8.8:8000/v1", 128000, "default:hosted", "(a hosted API)"),
    ],
)
async def test_a_default_window_says_it_is_one_and_a_public_host_is_labelled_hosted(
    windows: Windows, base_url: str, tokens: int, source: str, note: str
) -> None:
    windows.resolver = WindowResolver(client_factory=_unreachable)

    window = await windows.resolve(
        provider="openai-compatible", base_url=base_url, model_name="gpt-4o"
    )

    windows.check(window, tokens, source)
    assert window.note and note in window.note, window


async def test_a_hanging_server_is_given_up_on_after_the_probe_timeout(windows: Windows) -> None:
    windows.on_fake_clock(timeout=0.2)
    windows.server.hang_all = 2.0
    windows.says_max_input(24000)

    windows.check(await windows.at_server("openai-compatible", "qwen"), 24000, "profile")


async def test_the_default_probe_timeout_gives_up_on_a_server_slower_than_1_5_seconds(
    windows: Windows,
) -> None:
    windows.server.hang_all = 3.0

    window = await windows.at_server("openai-compatible", "llama3")

    windows.check(window, 32768, "default:local")


async def test_a_server_answer_is_reused_for_30_seconds(windows: Windows) -> None:
    windows.server.answer("GET", "/props", {"n_ctx": 4096})
    await windows.at_server("openai-compatible", "qwen")
    windows.advance(29.0)

    window = await windows.at_server("openai-compatible", "qwen")

    windows.check(window, 4096, "server:llama.cpp")
    assert windows.sent_nothing_new(), windows.server.seen
    windows.advance(2.0)
    window = await windows.at_server("openai-compatible", "qwen")
    assert not windows.sent_nothing_new()
    windows.check(window, 4096, "server:llama.cpp")


async def test_a_server_silence_is_reused_for_3_seconds_only(windows: Windows) -> None:
    await windows.at_server("openai-compatible", "qwen")
    windows.advance(2.5)

    await windows.at_server("openai-compatible", "qwen")

    assert windows.sent_nothing_new(), windows.server.seen
    windows.advance(1.0)
    await windows.at_server("openai-compatible", "qwen")
    assert not windows.sent_nothing_new()


async def test_an_ollama_modelfile_answer_is_asked_again_soon(windows: Windows) -> None:
    windows.server.answer("POST", "/api/show", {"parameters": "num_ctx 4096"})
    await windows.at_server("ollama", "llama3")
    windows.advance(3.5)

    await windows.at_server("ollama", "llama3")

    assert not windows.sent_nothing_new()


async def test_the_cache_is_kept_per_model(windows: Windows) -> None:
    windows.server.answer("GET", "/props", {"n_ctx": 4096})
    await windows.at_server("openai-compatible", "qwen")

    await windows.at_server("openai-compatible", "phi")

    assert not windows.sent_nothing_new()


async def test_probes_carry_the_api_key_as_a_bearer_token(windows: Windows) -> None:
    windows.server.answer("GET", "/props", {"n_ctx": 4096})

    window = await windows.at_server("openai-compatible", "qwen", api_key="sk-local")

    windows.check(window, 4096, "server:llama.cpp")
    seen = windows.server.seen
    assert seen
    assert all(s.headers.get("Authorization") == "Bearer sk-local" for s in seen), seen
    assert {s.method for s in seen if s.path == "/props"} == {"GET"}


def _never_built() -> Any:
    raise AssertionError("the window resolver tried to probe a hosted API")


@pytest.mark.parametrize("base_url", ["https://api.openai.com/v1", "https://api.openai.com"])
async def test_hosted_openai_is_never_probed(windows: Windows, base_url: str) -> None:
    windows.resolver = WindowResolver(client_factory=_never_built)

    window = await windows.resolve(provider="openai", base_url=base_url, model_name="gpt-4o")

    windows.check(window, 128000, "default:hosted")


async def test_a_hosted_model_profile_gives_its_window(windows: Windows) -> None:
    windows.resolver = WindowResolver(client_factory=_never_built)
    windows.says_max_input(200000)

    window = await windows.resolve(provider="openai", model_name="gpt-4o")

    windows.check(window, 200000, "profile")


async def test_a_class_model_with_no_server_falls_back_to_the_hosted_default(
    windows: Windows,
) -> None:
    windows.resolver = WindowResolver(client_factory=_never_built)

    window = await windows.resolve(provider=None, model_name="gpt-4o")

    windows.check(window, 128000, "default:hosted")


async def test_a_window_under_8192_tokens_gets_a_one_line_warning(windows: Windows) -> None:
    window = await windows.at_server("openai-compatible", "m", configured=2048)

    warning = small_window_warning(window)

    assert warning is not None
    assert "\n" not in warning
    for word in ("2,048", "--ctx-size", "num_ctx"):
        assert word in warning, (word, warning)


async def test_a_window_of_8192_tokens_gets_no_warning(windows: Windows) -> None:
    window = await windows.at_server("openai-compatible", "m", configured=8192)

    assert small_window_warning(window) is None
    assert isinstance(PROCESS_STATE.windows, WindowResolver)
