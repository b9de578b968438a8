"""Steps for features/agent/typed_answers_hardening.feature (tracker issue 28).

A failed structuring keeps the run (the error's ``answer`` carries the text answer and
the whole report), ``leanloop run --json`` prints it, and self-referencing models are
sent to the server with the model at the root of the JSON schema. The scripted runs, the
CLI and the scripted HTTP server are those of ``structured_steps`` and ``cli_steps``.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from typing import Any

from behave import given, then
from behave.runner import Context
from langchain_core.messages import AIMessage
from pydantic import BaseModel
from support import runs

from leanloop.exceptions import StructuredOutputError

_TREE_MODELS = '''\
"""Models that refer to themselves: directly (Node), and through another (Folder, Entry)."""

from __future__ import annotations

from pydantic import BaseModel


class Node(BaseModel):
    """A tree: a name and the nodes under it."""

    name: str
    children: list[Node] = []


class Folder(BaseModel):
    """A folder and what it holds."""

    name: str
    entries: list[Entry] = []


class Entry(BaseModel):
    """A file, or a folder inside the folder."""

    name: str
    folder: Folder | None = None
'''


def _failure(context: Context) -> StructuredOutputError:
    failure = runs.current(context).failure
    assert isinstance(failure, StructuredOutputError), repr(failure)
    return failure


# --- Given ---------------------------------------------------------------------------


@given("the self-referencing answer models beside the agents file")
def step_tree_models(context: Context) -> None:
    # The agents file's folder is on the import path of its agent (and of `validate`).
    (context.tmp / "hardening_tree_models.py").write_text(
        textwrap.dedent(_TREE_MODELS), encoding="utf-8"
    )


# --- Then: the failure keeps the run -------------------------------------------------


@then('the failure keeps the run\'s answer "{text}"')
def step_failure_keeps(context: Context, text: str) -> None:
    answer = _failure(context).answer
    assert isinstance(answer, AIMessage), repr(answer)
    assert answer.content == text, answer.content
    # The shared report steps read the run's answer: this one, from now on.
    runs.current(context).answer = answer


@then(
    'the report says the structuring as "{schema}" by the "{method}" method failed after '
    '{repairs:d} repairs with "{problem}"'
)
def step_structuring_failed(
    context: Context, schema: str, method: str, repairs: int, problem: str
) -> None:
    assert _failure(context).problem == problem, _failure(context).problem
    got = runs.current(context).report.get("structured")
    want = {"schema": schema, "method": method, "repairs": repairs, "error": problem}
    assert got == want, got


@then("the answer has no parsed instance")
def step_no_parsed(context: Context) -> None:
    answer = runs.current(context).answer
    assert answer is not None and "parsed" not in answer.additional_kwargs, answer


@then("the report has no structuring requests")
def step_no_structuring_requests(context: Context) -> None:
    kinds = [r["kind"] for r in runs.current(context).report["requests"]]
    assert kinds and "structured" not in kinds, kinds


# --- Then: leanloop run --json -------------------------------------------------------


@then('the CLI JSON output has the error "{error}"')
def step_json_error(context: Context, error: str) -> None:
    data = context.cli_json
    assert data.get("error") == error, data.get("error")


@then(
    'the CLI JSON output says the structuring as "{schema}" failed after {repairs:d} repairs '
    'with "{problem}"'
)
def step_json_structured(context: Context, schema: str, repairs: int, problem: str) -> None:
    got = context.cli_json.get("structured")
    want = {"schema": schema, "method": "text", "repairs": repairs, "error": problem}
    assert got == want, got


@then("the CLI JSON output has {count:d} requests, the last {last:d} of them structuring requests")
def step_json_requests(context: Context, count: int, last: int) -> None:
    kinds = [r["kind"] for r in context.cli_json.get("requests", [])]
    assert len(kinds) == count, kinds
    assert kinds[-last:] == ["structured"] * last, kinds
    assert "structured" not in kinds[:-last], kinds


# --- Then: self-referencing models ---------------------------------------------------


@then("the answer's additional_kwargs hold a {schema:w} whose JSON is {document}")
def step_parsed_json(context: Context, schema: str, document: str) -> None:
    parsed = context.typed_message.additional_kwargs.get("parsed")
    assert isinstance(parsed, BaseModel) and type(parsed).__name__ == schema, repr(parsed)
    got = parsed.model_dump(mode="json", exclude_defaults=True)
    assert got == json.loads(document), got


@then("every $ref in the json_schema of the scripted HTTP server's request {n:d} resolves")
def step_refs_resolve(context: Context, n: int) -> None:
    body = context.http_server.requests[n - 1]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema.get("type") == "object" and "$ref" not in schema, schema
    refs = list(_refs(schema))
    assert refs, f"the schema refers to nothing: {schema}"
    for ref in refs:
        assert ref.startswith("#/"), ref
        target: Any = schema
        for part in ref[2:].split("/"):
            assert isinstance(target, dict) and part in target, f"{ref} does not resolve"
            target = target[part]
        assert isinstance(target, dict) and target.get("type") == "object", (ref, target)


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                yield item
            else:
                yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)
