"""Steps for features/pruning/pruning_question.feature: each file pruned for its part."""

from __future__ import annotations

import re

from behave import given, then, when
from behave.runner import Context

from leanloop.pruning.extract import question_about_file


@given('the question "{question}"')
def step_question(context: Context, question: str) -> None:
    context.question_text = question


@given("the question names {paths}")
def step_named(context: Context, paths: str) -> None:
    context.question_named = [p.strip() for p in re.split(r",|\band\b", paths) if p.strip()]


@when('the question is narrowed for a call with path "{path}"')
def step_narrow(context: Context, path: str) -> None:
    context.narrowed = question_about_file(context.question_text, path, context.question_named)


@then('the narrowed question is "{expected}"')
def step_narrowed(context: Context, expected: str) -> None:
    assert context.narrowed == expected, f"got {context.narrowed!r}"


@then("the narrowed question is the whole question")
def step_whole(context: Context) -> None:
    assert context.narrowed == context.question_text, f"got {context.narrowed!r}"
