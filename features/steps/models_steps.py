"""Steps for features/models.feature."""

from __future__ import annotations

import json
import sys
from typing import Any

from behave import given, then, when
from behave.runner import Context
from pydantic import SecretStr

from leanloop.exceptions import SpecError
from leanloop.models import build_chat_model
from leanloop.spec.types import ModelSpec, SourceLocation


def _build(context: Context, spec: ModelSpec) -> None:
    context.built_model = None
    context.model_error = None
    try:
        context.built_model = build_chat_model(spec)
    except SpecError as exc:
        context.model_error = exc


@when('a model config is built with provider "{provider}", model "{model}", base_url "{url}"')
def step_compat(context: Context, provider: str, model: str, url: str) -> None:
    _build(context, ModelSpec(provider=provider, model=model, base_url=url))  # type: ignore[arg-type]


@when(
    'a model config is built with provider "{provider}", model "{model}", api_key "{key}", '
    "max_tokens {max_tokens:d}, timeout {timeout:d}"
)
def step_openai(
    context: Context, provider: str, model: str, key: str, max_tokens: int, timeout: int
) -> None:
    spec = ModelSpec(
        provider=provider,  # type: ignore[arg-type]
        model=model,
        api_key=key,
        max_tokens=max_tokens,
        timeout=float(timeout),
    )
    _build(context, spec)


@when(
    'a model config is built with provider "{provider}", model "{model}", context_window {window:d}'
)
def step_ollama(context: Context, provider: str, model: str, window: int) -> None:
    _build(context, ModelSpec(provider=provider, model=model, context_window=window))  # type: ignore[arg-type]


@when('a model config is built with class "{path}" and kwargs {kwargs}')
def step_class(context: Context, path: str, kwargs: str) -> None:
    key = None
    if " and api_key " in kwargs:
        kwargs, _, key_part = kwargs.partition(" and api_key ")
        key = json.loads(key_part)
    spec = ModelSpec(class_path=path, kwargs=json.loads(kwargs), api_key=key)
    _build(context, spec)


@when(
    'a model config is built with class "{path}" declared at "{source}" '
    "line {line:d} column {col:d}"
)
def step_class_located(context: Context, path: str, source: str, line: int, col: int) -> None:
    location = SourceLocation(source, line, col, "models.custom")
    _build(context, ModelSpec(name="custom", class_path=path, location=location))


@then('the built model is a "{cls}"')
def step_is(context: Context, cls: str) -> None:
    assert context.model_error is None, context.model_error
    assert type(context.built_model).__name__ == cls, type(context.built_model)


@when('the model of agent "{name}" is built')
def step_build_agent_model(context: Context, name: str) -> None:
    assert context.spec_error is None, context.spec_error
    _build(context, context.spec_result[name].model)


@given('the Python package "{module}" cannot be imported')
def step_hide_package(context: Context, module: str) -> None:
    # `None` in sys.modules makes `import module` raise ImportError, as when not installed.
    saved = {name: mod for name, mod in sys.modules.items() if name.split(".")[0] == module}
    for name in saved:
        del sys.modules[name]
    sys.modules[module] = None  # type: ignore[assignment]

    def restore() -> None:
        sys.modules.pop(module, None)
        sys.modules.update(saved)

    context.add_cleanup(restore)


@then('the built model has "{attr}" equal to "{value}"')
def step_attr(context: Context, attr: str, value: str) -> None:
    assert context.model_error is None, context.model_error
    actual: Any = getattr(context.built_model, attr)
    if isinstance(actual, SecretStr):
        actual = actual.get_secret_value()
    assert str(actual) == value, f"{attr}={actual!r}"


@then('the model config error is "{text}"')
def step_error_is(context: Context, text: str) -> None:
    assert context.model_error is not None, "no error was raised"
    assert str(context.model_error) == text, str(context.model_error)


@then('the model config error mentions "{text}"')
def step_error_mentions(context: Context, text: str) -> None:
    assert context.model_error is not None, "no error was raised"
    assert text in str(context.model_error), str(context.model_error)


@then('the model config error does not mention "{text}"')
def step_error_not(context: Context, text: str) -> None:
    assert text not in str(context.model_error), str(context.model_error)
