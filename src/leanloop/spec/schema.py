"""The agents-file JSON Schema: loading it, validating with it, and saying what failed.

jsonschema's own messages quote whole instances and speak in JSON terms; users wrote
YAML, so each kind of failure is rephrased here in one short line, with the offending
key or value located and secrets hidden.

The file offers every typed key (numbers, booleans, choices, patterned strings) a second
form, a whole ``${VAR}`` / ``${VAR:-default}`` reference (``$defs/envReference``), so
that editors reading the file as written accept ``max_rounds: ${ROUNDS:-20}``. leanloop
itself validates after interpolation, against :func:`strict_schema`: the same schema
with those alternatives left out.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from leanloop.spec.issues import Problem, Reporter, did_you_mean

__all__ = ["ENV_REFERENCE", "agent_defaults", "agent_schema", "schema_problems", "strict_schema"]

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "nothing",
}


@functools.cache
def _schema() -> dict[str, Any]:
    text = resources.files("leanloop").joinpath("spec/agent.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


ENV_REFERENCE = "#/$defs/envReference"
"""The ``$ref`` of the ``${VAR}`` alternative that typed keys carry in the file."""


@functools.cache
def _strict() -> dict[str, Any]:
    strict: dict[str, Any] = _without_references(_schema())
    return strict


def _without_references(node: Any) -> Any:
    """``node`` with each ``anyOf: [typed, ${VAR}]`` collapsed back into ``typed``."""
    if isinstance(node, list):
        return [_without_references(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _without_references(value) for key, value in node.items()}
    options = out.get("anyOf")
    if isinstance(options, list) and {"$ref": ENV_REFERENCE} in options:
        rest = [option for option in options if option != {"$ref": ENV_REFERENCE}]
        del out["anyOf"]
        if len(rest) == 1 and isinstance(rest[0], dict):
            out.update(rest[0])
        else:
            out["anyOf"] = rest
    return out


@functools.cache
def _validator() -> Draft202012Validator:
    # After interpolation a whole reference has taken its key's type already: a value
    # that still reads `${...}` came from an escaped `$${...}` and is a plain string,
    # which a typed key must refuse. The strict form also keeps one failure per value
    # (an `anyOf` failure says only "not valid under any of the given schemas").
    return Draft202012Validator(_strict())


def agent_schema() -> dict[str, Any]:
    """Return the JSON Schema of agents files (a copy: changing it changes nothing).

    The file is read once; ``leanloop/spec/agent.schema.json`` is the single source
    of the format and of its defaults.
    """
    return copy.deepcopy(_schema())


def strict_schema() -> dict[str, Any]:
    """Return the schema leanloop validates an interpolated file with (a copy).

    It is :func:`agent_schema` without the ``${VAR}`` alternatives: each typed key has
    its type, bounds and choices directly, as the loader reads them to convert values.
    """
    return copy.deepcopy(_strict())


def agent_defaults() -> dict[str, Any]:
    """The schema's ``default`` of every agent key that has one."""
    properties: dict[str, Any] = _schema()["$defs"]["agent"]["properties"]
    return {key: copy.deepcopy(p["default"]) for key, p in properties.items() if "default" in p}


def schema_problems(data: Any, reporter: Reporter) -> list[Problem]:
    """Every schema violation in ``data``, each as one located, human problem."""
    problems: list[Problem] = []
    for error in _validator().iter_errors(data):
        problems.extend(_translate(error, reporter))
    return problems


def _translate(error: ValidationError, reporter: Reporter) -> Iterator[Problem]:
    path = tuple(error.absolute_path)
    if "propertyNames" in error.absolute_schema_path:
        yield _bad_name(path, error.instance)
        return
    kind = str(error.validator)
    instance: Any = error.instance  # the offending JSON value, whatever its type
    branch = _branch_of_its_type(error) if kind == "anyOf" else None
    if branch is not None:
        # `approval: ask | never | {ask_when: …}`: a string is told the words it may be,
        # a mapping what is wrong inside it, not "not valid under any of the given schemas".
        for inner in branch:
            yield from _translate(inner, reporter)
        return
    if kind == "additionalProperties":
        yield from _unknown_keys(path, instance, error.schema)
    elif kind == "required":
        for key in _keyword_value(error):
            if key not in instance:
                yield Problem(path, f"missing required key {key!r}", at="key")
    elif kind == "uniqueItems":
        yield from _repeated_items(path, instance, reporter)
    else:
        yield Problem(path, _value_message(error, path, reporter))


_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "object": dict,
    "array": list,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
}


def _branch_of_its_type(error: ValidationError) -> list[ValidationError] | None:
    """The failures of the one ``anyOf`` alternative of the value's JSON type, if one."""
    options = error.schema.get("anyOf") if isinstance(error.schema, dict) else None
    if not isinstance(options, list):
        return None
    fitting: list[list[ValidationError]] = []
    for index, option in enumerate(options):
        declared = option.get("type") if isinstance(option, dict) else None
        python = _JSON_TYPES.get(declared) if isinstance(declared, str) else None
        if python is not None and isinstance(error.instance, python):
            path_of = [(e, e.relative_schema_path) for e in error.context or ()]
            fitting.append([e for e, path in path_of if path and path[0] == index])
    return fitting[0] if len(fitting) == 1 and fitting[0] else None


def _keyword_value(error: ValidationError) -> Any:
    # The failed keyword's value from our own schema (a bound, a list of names …);
    # jsonschema types it loosely because it can be any JSON value.
    return error.validator_value


def _bad_name(path: tuple[str | int, ...], name: object) -> Problem:
    message = (
        f"{name!r} is not a valid name: use letters, digits, '_' and '-', "
        "starting with a letter or '_'"
    )
    return Problem((*path, str(name)), message, at="key")


def _unknown_keys(
    path: tuple[str | int, ...], instance: dict[str, Any], schema: object
) -> Iterator[Problem]:
    known = list(schema.get("properties", {})) if isinstance(schema, dict) else []
    patterns = list(schema.get("patternProperties", {})) if isinstance(schema, dict) else []
    # An agent's mapping is the one place a model key lands by mistake (the model's
    # settings sit one level down): say where it belongs rather than guess a near name.
    model_keys = _model_only_keys() if len(path) == 2 and path[0] == "agents" else frozenset()
    for key in instance:
        if key not in known and not any(re.search(p, str(key)) for p in patterns):
            hint = _MODEL_KEY_HINT if key in model_keys else did_you_mean(key, known)
            yield Problem((*path, key), f"unknown key {key!r}{hint}", at="key")


_MODEL_KEY_HINT = " (a model key: put it under the agent's model)"


@functools.cache
def _model_only_keys() -> frozenset[str]:
    """The keys a model mapping takes that an agent mapping does not (``context_window``)."""
    defs = _schema()["$defs"]
    return frozenset(defs["modelFields"]["properties"]) - set(defs["agent"]["properties"])


def _repeated_items(
    path: tuple[str | int, ...], items: list[Any], reporter: Reporter
) -> Iterator[Problem]:
    seen: list[Any] = []
    for index, item in enumerate(items):
        if item in seen:
            where = (*path, index)
            yield Problem(where, f"{reporter.show(item, where)} is listed more than once")
        seen.append(item)


def _value_message(error: ValidationError, path: tuple[str | int, ...], reporter: Reporter) -> str:
    shown = reporter.show(error.instance, path)
    limit = _keyword_value(error)
    kind = str(error.validator)
    if kind == "type":
        wanted = [limit] if isinstance(limit, str) else list(limit)
        got = "nothing" if error.instance is None else shown
        hint = " (the value of a ${...} reference)" if path in reporter.interpolated else ""
        return f"expected {' or '.join(_TYPE_WORDS[w] for w in wanted)}, got {got}{hint}"
    if kind == "enum":
        options = ", ".join(repr(option) for option in limit)
        if error.instance is None:
            return f"expected one of {options}, got nothing"
        close = "" if reporter.is_secret(path) else did_you_mean(str(error.instance), limit)
        return f"{shown} is not one of {options}{close}"
    messages = {
        "const": f"must be {json.dumps(limit)}, got {shown}",
        "minimum": f"{shown} is less than the minimum of {limit}",
        "maximum": f"{shown} is greater than the maximum of {limit}",
        "exclusiveMinimum": f"{shown} must be greater than {limit}",
        "minLength": "must not be empty",
        "minProperties": "needs at least one agent" if path == ("agents",) else "must not be empty",
        "pattern": f"{shown} is not an import path of the form 'package.module:name'",
    }
    return messages.get(kind, "is not valid" if reporter.is_secret(path) else error.message)
