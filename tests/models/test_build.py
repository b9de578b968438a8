"""Chat models are built from model specs (src/leanloop/models.py), moved from
features/models.feature (issue 26).

Each provider maps to its LangChain class with the options that make it work well: usage
reporting for OpenAI-compatible servers, a real num_ctx for Ollama.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from leanloop.exceptions import SpecError
from leanloop.models import build_chat_model
from leanloop.spec import load_specs
from leanloop.spec.types import ModelSpec, SourceLocation


def _has(model: Any, attr: str, value: str) -> None:
    """The built model's ``attr``, as text, is ``value`` (secrets shown)."""
    actual: Any = getattr(model, attr)
    if isinstance(actual, SecretStr):
        actual = actual.get_secret_value()
    assert str(actual) == value, f"{attr}={actual!r}"


def _fails(spec: ModelSpec) -> str:
    with pytest.raises(SpecError) as failed:
        build_chat_model(spec)
    return str(failed.value)


def test_openai_compatible_builds_chat_openai_with_the_base_url_and_usage_reporting() -> None:
    spec = ModelSpec(
        provider="openai-compatible", model="local-test", base_url="http://127.0.0.1:9/v1"
    )

    model = build_chat_model(spec)

    assert type(model).__name__ == "ChatOpenAI", type(model)
    _has(model, "model_name", "local-test")
    _has(model, "openai_api_base", "http://127.0.0.1:9/v1")
    _has(model, "stream_usage", "True")
    # A request never waits forever: a model without a timeout gets the default.
    _has(model, "request_timeout", "120.0")


def test_openai_builds_chat_openai_with_the_key_and_limits() -> None:
    spec = ModelSpec(
        provider="openai", model="gpt-4o-mini", api_key="sk-test-secret", max_tokens=256, timeout=30
    )

    model = build_chat_model(spec)

    assert type(model).__name__ == "ChatOpenAI", type(model)
    _has(model, "max_tokens", "256")
    _has(model, "request_timeout", "30.0")


def test_ollama_gets_num_ctx_from_the_configured_context_window() -> None:
    model = build_chat_model(
        ModelSpec(provider="ollama", model="qwen2.5:0.5b", context_window=8192)
    )

    assert type(model).__name__ == "ChatOllama", type(model)
    _has(model, "num_ctx", "8192")


def test_a_class_model_is_imported_and_built_with_its_kwargs() -> None:
    spec = ModelSpec(
        class_path="leanloop.testing:ScriptedChatModel",
        kwargs={"replies": ["hi"], "report_usage": True},
    )

    model = build_chat_model(spec)

    assert type(model).__name__ == "ScriptedChatModel", type(model)
    _has(model, "report_usage", "True")


def test_a_class_that_is_not_a_chat_model_is_a_located_model_config_error() -> None:
    location = SourceLocation("agents.yaml", 4, 12, "models.custom")
    spec = ModelSpec(name="custom", class_path="collections:OrderedDict", location=location)

    assert _fails(spec) == (
        "agents.yaml:4:12: models.custom: collections:OrderedDict is not a LangChain chat "
        "model class"
    )


def test_a_constructor_failure_never_shows_the_api_key() -> None:
    spec = ModelSpec(
        class_path="langchain_openai:ChatOpenAI",
        kwargs={"max_retries": "sk-test-secret"},
        api_key="sk-test-secret",
    )

    error = _fails(spec)

    assert "cannot build the model" in error
    assert "sk-test-secret" not in error


def _load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Any:
    """Load agents.yaml from inside ``tmp_path``, so that messages show relative names."""
    (tmp_path / "agents.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return load_specs("agents.yaml", environ={})


_CLASS_FILE = """\
version: 1
agents:
  a:
    model:
      class: "{cls}"
      model: m-1
      base_url: http://127.0.0.1:8791/v1
      api_key: sk-from-yaml
      timeout: 5
      temperature: 0.25
      max_retries: 4
"""


@pytest.mark.parametrize(
    ("cls", "field", "value"),
    [
        ("langchain_openai:ChatOpenAI", "model_name", "m-1"),
        ("langchain_openai:ChatOpenAI", "openai_api_base", "http://127.0.0.1:8791/v1"),
        ("langchain_openai:ChatOpenAI", "openai_api_key", "sk-from-yaml"),
        ("langchain_openai:ChatOpenAI", "request_timeout", "5.0"),
        ("langchain_openai:ChatOpenAI", "temperature", "0.25"),
        ("langchain_anthropic:ChatAnthropic", "model", "m-1"),
        ("langchain_anthropic:ChatAnthropic", "anthropic_api_url", "http://127.0.0.1:8791/v1"),
        ("langchain_anthropic:ChatAnthropic", "anthropic_api_key", "sk-from-yaml"),
        ("langchain_anthropic:ChatAnthropic", "default_request_timeout", "5.0"),
        ("langchain_anthropic:ChatAnthropic", "temperature", "0.25"),
        ("langchain_openai:ChatOpenAI", "max_retries", "4"),
        ("langchain_anthropic:ChatAnthropic", "max_retries", "4"),
    ],
)
def test_every_option_of_a_class_model_reaches_the_model_it_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cls: str, field: str, value: str
) -> None:
    specs = _load(tmp_path, monkeypatch, _CLASS_FILE.format(cls=cls))

    _has(build_chat_model(specs["a"].model), field, value)


@pytest.mark.parametrize(
    ("provider", "option", "url_key", "url_field", "extra", "extra_value"),
    [
        ("openai", "api_key: k", "openai_api_base", "openai_api_base", "max_retries", "7"),
        ("anthropic", "api_key: k", "base_url", "anthropic_api_url", "max_retries", "3"),
        ("ollama", "temperature: 0.5", "base_url", "base_url", "keep_alive", "5m"),
    ],
)
def test_the_built_in_providers_take_kwargs_and_a_kwargs_base_url_is_the_server_asked(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    provider: str,
    option: str,
    url_key: str,
    url_field: str,
    extra: str,
    extra_value: str,
) -> None:
    text = (
        "version: 1\nagents:\n  a:\n    model:\n"
        f"      provider: {provider}\n      model: m-1\n      {option}\n"
        f'      kwargs: {{{url_key}: "http://127.0.0.1:8792/v1", {extra}: {extra_value}}}\n'
    )
    specs = _load(tmp_path, monkeypatch, text)

    model = build_chat_model(specs["a"].model)

    assert specs["a"].model.base_url == "http://127.0.0.1:8792/v1"
    _has(model, url_field, "http://127.0.0.1:8792/v1")
    _has(model, extra, extra_value)


def test_an_option_the_provider_class_has_no_field_for_is_an_error_not_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "version: 1\nagents:\n  a:\n    model: {provider: ollama, model: m-1, api_key: k}\n"

    with pytest.raises(SpecError) as failed:
        _load(tmp_path, monkeypatch, text)

    assert (
        "agents.yaml:4:43: agents.a.model.api_key: ChatOllama has no option 'api_key' "
        "(Ollama takes no key; send headers under kwargs.client_kwargs)"
    ) in str(failed.value)


def test_a_model_built_by_hand_with_an_option_its_class_lacks_is_an_error() -> None:
    spec = ModelSpec(provider="ollama", model="m-1", api_key="k", max_tokens=10, timeout=5.0)

    assert "ChatOllama has no option 'api_key'" in _fails(spec)


@pytest.fixture
def without_langchain_anthropic() -> Iterator[None]:
    """``import langchain_anthropic`` raises ImportError, as when it is not installed."""
    saved = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "langchain_anthropic"}
    for name in saved:
        del sys.modules[name]
    sys.modules["langchain_anthropic"] = None  # type: ignore[assignment]
    yield
    sys.modules.pop("langchain_anthropic", None)
    sys.modules.update(saved)


@pytest.mark.usefixtures("without_langchain_anthropic")
def test_the_anthropic_provider_without_its_package_says_what_to_install() -> None:
    spec = ModelSpec(
        provider="anthropic", model="claude-test", api_key="k", max_tokens=100, timeout=10.0
    )

    assert (
        "the 'anthropic' provider needs leanloop[anthropic]: pip install 'leanloop[anthropic]'"
        in _fails(spec)
    )
