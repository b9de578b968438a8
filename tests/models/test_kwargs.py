"""A model's ``kwargs`` are checked against the chat model class's keywords (issue 29, item 6).

An unknown key is a located error with a did-you-mean, raised wherever the model is built
(``validate --check-models``, a run, ``LLMAgent.from_file``), never a pydantic warning or
a key sent in every request body. Aliases and the class's own pass-through fields
(``model_kwargs``, ``extra_body``) pass. The CLI line is in features/spec/model_kwargs.feature.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from pydantic import ConfigDict

from leanloop import LLMAgent
from leanloop.exceptions import SpecError
from leanloop.models import build_chat_model
from leanloop.spec import load_specs
from leanloop.spec.types import ModelSpec, SourceLocation

_FILE = """\
version: 1
agents:
  a:
    model:
      provider: {provider}
      model: m-1
      kwargs:
        {key}: {value}
"""


def _load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str, key: str, value: str
) -> Any:
    (tmp_path / "agents.yaml").write_text(
        _FILE.format(provider=provider, key=key, value=value), encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return load_specs("agents.yaml", environ={})["a"].model


def _build_error(spec: ModelSpec) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a leaked pydantic/LangChain warning fails the test
        with pytest.raises(SpecError) as failed:
            build_chat_model(spec)
    return str(failed.value)


@pytest.mark.parametrize(
    ("provider", "key", "expected"),
    [
        (
            "openai",
            "frequency_penalti",
            "agents.yaml:8:9: agents.a.model.kwargs.frequency_penalti: ChatOpenAI has no "
            "option 'frequency_penalti' (did you mean 'frequency_penalty'?); a setting the "
            "class does not declare goes under kwargs.model_kwargs or kwargs.extra_body",
        ),
        (
            "ollama",
            "top_kk",
            "agents.yaml:8:9: agents.a.model.kwargs.top_kk: ChatOllama has no option "
            "'top_kk' (did you mean 'top_k'?); remove it, or use one of the class's own "
            "fields",
        ),
    ],
)
def test_an_unknown_kwarg_is_a_located_error_with_a_did_you_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str, key: str, expected: str
) -> None:
    spec = _load(tmp_path, monkeypatch, provider, key, "1")

    assert _build_error(spec) == expected


def test_a_key_with_no_close_match_names_the_escape_hatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _load(tmp_path, monkeypatch, "openai", "frobnicate", "1")

    assert _build_error(spec) == (
        "agents.yaml:8:9: agents.a.model.kwargs.frobnicate: ChatOpenAI has no option "
        "'frobnicate'; a setting the class does not declare goes under kwargs.model_kwargs "
        "or kwargs.extra_body"
    )


@pytest.mark.parametrize(
    ("provider", "key", "value", "field", "shown"),
    [
        ("openai", "frequency_penalty", "0.5", "frequency_penalty", "0.5"),
        ("openai", "stop_sequences", "[END]", "stop", "['END']"),  # alias of ChatOpenAI.stop
        ("openai", "organization", "org-1", "openai_organization", "org-1"),  # alias
        ("openai", "model_kwargs", "{frobnicate: 1}", "model_kwargs", "{'frobnicate': 1}"),
        ("openai", "extra_body", "{frobnicate: 1}", "extra_body", "{'frobnicate': 1}"),
        ("ollama", "top_k", "7", "top_k", "7"),
    ],
)
def test_valid_keywords_aliases_and_the_escape_hatch_pass_without_a_warning(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    provider: str,
    key: str,
    value: str,
    field: str,
    shown: str,
) -> None:
    # Beside an unknown key, only the unknown key is refused ...
    spec = _load(tmp_path, monkeypatch, provider, key, value)
    mixed = dataclasses.replace(spec, kwargs={**spec.kwargs, "frobnicat": 1})
    refused = _build_error(mixed).splitlines()
    assert [line.split(": ")[1] for line in refused] == ["agents.a.model.kwargs.frobnicat"]

    # ... and on its own the key builds, with no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = build_chat_model(spec)

    assert str(getattr(model, field)) == shown


def test_every_unknown_key_is_reported_at_once() -> None:
    location = SourceLocation("agents.yaml", 4, 12, "models.fast")
    spec = ModelSpec(
        name="fast",
        class_path="langchain_openai:ChatOpenAI",
        api_key="sk-test",
        kwargs={"frobnicate": 1, "temperture": 0.1},
        location=location,
    )

    lines = _build_error(spec).splitlines()

    assert [line.split(": ")[1] for line in lines] == [
        "models.fast.kwargs.frobnicate",
        "models.fast.kwargs.temperture",
    ]
    # Not found in a file: at the model's own place.
    assert lines[0].startswith("agents.yaml:4:12: ")
    assert "(did you mean 'temperature'?)" in lines[1]


def test_a_class_model_with_an_unknown_kwarg_is_refused_too() -> None:
    spec = ModelSpec(class_path="leanloop.testing:ScriptedChatModel", kwargs={"replys": ["hi"]})

    assert _build_error(spec) == (
        "<model>: model.kwargs.replys: ScriptedChatModel has no option 'replys' (did you mean "
        "'replies'?); remove it, or use one of the class's own fields"
    )


def test_building_the_agent_in_python_raises_the_same_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(tmp_path, monkeypatch, "ollama", "top_kk", "1")

    with pytest.raises(SpecError) as failed:
        LLMAgent.from_file("agents.yaml")

    assert str(failed.value) == (
        "agents.yaml:8:9: agents.a.model.kwargs.top_kk: ChatOllama has no option "
        "'top_kk' (did you mean 'top_k'?); remove it, or use one of the class's own fields"
    )


def test_a_class_that_may_take_any_keyword_is_not_judged() -> None:
    from leanloop.spec.options import unknown_kwargs  # noqa: PLC0415 - new in issue 29

    class Open(FakeListChatModel):
        model_config = ConfigDict(extra="allow")

    class OwnInit(FakeListChatModel):
        def __init__(self, flavour: str = "", **kwargs: Any) -> None:
            super().__init__(**kwargs)

    assert unknown_kwargs(Open, {"anything": 1}) == []
    assert unknown_kwargs(OwnInit, {"flavour": "x", "anything": 1}) == []
    assert [key for key, _ in unknown_kwargs(FakeListChatModel, {"responses": [], "x": 1})] == ["x"]
