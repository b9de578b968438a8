"""Typed answers: the run's answer as an instance of a pydantic model (``output_schema``).

After the run, one tool-less request asks the model for its answer in the schema. It
carries the question, the run's answer text and the JSON schema, not the run's history:
the answer already holds what the run found, so the request is small whatever the run
did. Models whose servers can constrain a reply to a JSON schema get it natively
(``response_format`` ``json_schema`` on OpenAI-compatible servers, llama.cpp's included;
``format`` on Ollama); other models are asked for JSON in text, which is read tolerantly
(a code fence, prose around the object). A reply that does not validate gets one repair
round: the model sees its reply and the one-line problem, and answers again.

When no valid instance comes of it, :class:`~leanloop.exceptions.StructuredOutputError`
keeps the run: its ``answer`` is the run's text answer with the whole report (the
structuring requests, ``structured`` with the ``error``, the usage of every request).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.ai import add_usage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import patch_config
from pydantic import BaseModel, ValidationError

from leanloop.cache_usage import prompt_usage
from leanloop.exceptions import StructuredOutputError
from leanloop.report import RequestRecord, RunReport, prompt_totals

__all__ = ["RUN_NAME", "Method", "attach_structured", "read_json"]

Method = Literal["native", "text"]

RUN_NAME: Final = "leanloop.structured"
"""The run name of the structuring requests (what tells them from the loop's in a trace)."""

_NATIVE_CLASSES: Final = (
    # Every OpenAI-compatible client (llama-server honours json_schema with a grammar).
    ("langchain_openai.chat_models.base", "BaseChatOpenAI"),
    ("langchain_ollama.chat_models", "ChatOllama"),
)

_SYSTEM = (
    "You write answers as JSON. Reply with one JSON object that matches the JSON schema "
    "the user gives, and nothing else."
)
_ASK = """Question:
{question}

Answer:
{answer}

Write this answer as one JSON object that matches this JSON schema. Take the values from \
the answer above.
{schema}

Reply with the JSON object only: no code fence, no other text."""
_REPAIR = (
    "That reply cannot be used: {problem}. Reply again with only the JSON object that "
    "matches the schema."
)
_PROBLEM_MAX = 300
_ERRORS_SHOWN = 3


@dataclass
class _Attempt:
    """The structuring requests so far: what was sent, what came back."""

    model: BaseChatModel
    schema: type[BaseModel]
    method: Method
    config: RunnableConfig
    messages: list[BaseMessage]
    replies: list[tuple[int, AIMessage]]
    """Each request's message count and its reply, in order."""
    notes: list[str]
    """What the report's ``events`` should say about the structuring, one line each."""
    started: float
    """When the structuring began, on the event loop's clock (the run's ``elapsed_s``
    clock): the report's time includes it."""
    repairs: int = 0

    async def ask(self) -> AIMessage:
        if self.method == "native":
            # The JSON schema, not the class: with a class, langchain-openai hands the reply
            # to the openai SDK's parser, which raises on content that does not validate and
            # so loses the text the repair round must show the model.
            format_schema = _json_schema(self.schema)
            structured = self.model.with_structured_output(
                format_schema, method="json_schema", include_raw=True
            )
            result = await structured.ainvoke(self.messages, config=self.config)
            reply = cast(Mapping[str, Any], result)["raw"]
        else:
            reply = await self.model.ainvoke(self.messages, config=self.config)
        if not isinstance(reply, AIMessage):
            msg = f"the model answered with a {type(reply).__name__}, not an AIMessage"
            raise TypeError(msg)
        self.replies.append((len(self.messages), reply))
        return reply


async def attach_structured(
    model: BaseChatModel,
    schema: type[BaseModel],
    answer: AIMessage,
    *,
    question: str,
    config: RunnableConfig | None = None,
) -> AIMessage:
    """Ask ``model`` for ``answer`` as an instance of ``schema``; return it as a message.

    Args:
        model: The chat model the run used.
        schema: The pydantic model class the answer must be an instance of.
        answer: The run's final message (its report in ``response_metadata["leanloop"]``).
        question: The user's question the run answered.
        config: The run's config (its callbacks see the structuring requests).

    Returns:
        A new ``AIMessage``: ``content`` is the instance as JSON, ``additional_kwargs
        ["parsed"]`` the instance; the report gains ``structured`` (``schema``, ``method``,
        ``repairs``) and one ``structured`` request record per request, and the usage
        figures add up the run's and the structuring requests'.

    Raises:
        StructuredOutputError: When the reply does not validate even after the repair
            round, or a structuring request fails. Its ``answer`` is the run's message
            (the same text, ``stop_reason`` and ``id``) whose report also holds the
            structuring requests that were answered, ``structured`` (``schema``,
            ``method``, ``repairs``, ``error``: the one-line problem) and an event line;
            its usage adds up every request's.
    """
    attempt = _Attempt(
        model=model,
        schema=schema,
        method="native" if _has_native_format(model) else "text",
        config=patch_config(config, run_name=RUN_NAME),
        messages=[
            SystemMessage(content=_SYSTEM),
            HumanMessage(content=_request(schema, question, answer)),
        ],
        replies=[],
        notes=[],
        started=asyncio.get_running_loop().time(),
    )
    instance, problem = await _first_try(attempt, answer)
    if instance is None:
        attempt.repairs = 1
        attempt.notes.append(f"structured answer: the reply was repaired ({problem})")
        bad = attempt.replies[-1][1]
        attempt.messages += [
            AIMessage(content=bad.text),
            HumanMessage(content=_REPAIR.format(problem=problem)),
        ]
        reply = await _send(attempt, answer)
        instance, problem = read_json(reply.text, schema)
    if instance is None:
        msg = f"the answer could not be read as {schema.__name__}: {problem}"
        raise _error(msg, attempt, answer, problem)
    return _typed_message(answer, instance, attempt)


async def _first_try(attempt: _Attempt, answer: AIMessage) -> tuple[BaseModel | None, str]:
    """The first request and what it gave; a server that refuses the format gets text."""
    if attempt.method == "native":
        try:
            reply = await attempt.ask()
        except Exception as exc:  # each provider has its own error types
            if not _refuses_format(exc):
                raise _failed(attempt, answer, exc) from exc
            attempt.method = "text"
            refusal = _one_line(str(exc), 160)
            attempt.notes.append(
                f"structured answer: the model refused a response_format ({refusal}); "
                "asked for JSON in text"
            )
        else:
            return read_json(reply.text, attempt.schema)
    reply = await _send(attempt, answer)
    return read_json(reply.text, attempt.schema)


async def _send(attempt: _Attempt, answer: AIMessage) -> AIMessage:
    try:
        return await attempt.ask()
    except Exception as exc:  # any provider error: the caller keeps the run's answer
        raise _failed(attempt, answer, exc) from exc


def _failed(attempt: _Attempt, answer: AIMessage, exc: BaseException) -> StructuredOutputError:
    problem = _one_line(f"{type(exc).__name__}: {exc}")
    msg = f"the request for the answer as {attempt.schema.__name__} failed: {problem}"
    return _error(msg, attempt, answer, problem)


def _error(
    message: str, attempt: _Attempt, answer: AIMessage, problem: str
) -> StructuredOutputError:
    """The error that keeps the run: its text answer, its report, the structuring's part."""
    attempt.notes.append(f"structured answer: not typed as {attempt.schema.__name__} ({problem})")
    kept = _reported(answer, attempt, content=answer.content, parsed=None, problem=problem)
    return StructuredOutputError(message, answer=kept, problem=problem)


def _refuses_format(exc: BaseException) -> bool:
    """Whether ``exc`` says the model or server cannot take a response format."""
    if isinstance(exc, NotImplementedError):
        return True
    text = str(exc).lower()
    return any(word in text for word in ("response_format", "json_schema", "structured output"))


def _has_native_format(model: BaseChatModel) -> bool:
    """Whether ``model`` is a client whose server can hold a reply to a JSON schema.

    Looked up among the modules already imported: a model of those classes has imported
    its module, and a process that uses neither does not pay for importing them.
    """
    for module_name, class_name in _NATIVE_CLASSES:
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if isinstance(cls, type) and isinstance(model, cls):
            return True
    return False


def _request(schema: type[BaseModel], question: str, answer: AIMessage) -> str:
    return _ASK.format(
        question=question.strip() or "(not given)",
        answer=answer.text.strip() or "(empty)",
        schema=json.dumps(_json_schema(schema), ensure_ascii=False),
    )


def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """``schema``'s JSON schema with the model itself at the root.

    Pydantic writes a model that refers to itself (``children: list[Node]``), directly or
    through another model, as ``{"$defs": {...}, "$ref": "#/$defs/Node"}``: a root with
    no ``type``, ``title`` or ``properties``, which LangChain refuses as a structured
    output format ("Unsupported function") and a server cannot name. The model's own
    definition is put at the root instead, its ``$defs`` kept beside it, so every
    ``$ref`` (the recursive ones included) still resolves.
    """
    document = schema.model_json_schema()
    ref = document.get("$ref")
    defs = document.get("$defs")
    prefix = "#/$defs/"
    if not (isinstance(ref, str) and ref.startswith(prefix) and isinstance(defs, dict)):
        return document
    root = defs.get(ref.removeprefix(prefix))
    if not isinstance(root, dict):
        return document
    rest = {key: value for key, value in document.items() if key not in ("$ref", "$defs")}
    return {**root, **rest, "$defs": defs}


# --- reading JSON --------------------------------------------------------------------

_DECODER: Final = json.JSONDecoder()
_FENCE: Final = "```"


def read_json(text: str, schema: type[BaseModel]) -> tuple[BaseModel | None, str]:
    """The first JSON value in ``text`` that validates as ``schema``, tolerantly found.

    Tried in order: the whole text, each code fence's body, then every JSON object or
    array that starts in the text (so prose around the object and a stray brace before
    it do no harm).

    Returns:
        ``(instance, "")``, or ``(None, problem)``: what was wrong with the first JSON
        value found (its validation errors), or that there was none.
    """
    first_problem = ""
    for candidate in _candidates(text):
        try:
            return schema.model_validate(candidate), ""
        except ValidationError as exc:
            first_problem = first_problem or _validation_problem(exc)
    if first_problem:
        return None, first_problem
    shown = _one_line(text, 80)
    return None, f"the reply holds no JSON object ({shown!r})" if shown else "the reply is empty"


def _candidates(text: str) -> Iterator[Any]:
    stripped = text.strip()
    for body in (stripped, *_fenced(stripped)):
        try:
            value = json.loads(body)
        except ValueError:
            continue
        yield value
    for at, char in enumerate(stripped):
        if char in "{[":
            try:
                value, _ = _DECODER.raw_decode(stripped, at)
            except ValueError:
                continue
            yield value


def _fenced(text: str) -> Iterator[str]:
    """The bodies of the code fences in ``text`` (the language tag dropped)."""
    parts = text.split(_FENCE)
    for body in parts[1::2]:
        head, newline, rest = body.partition("\n")
        # ```json\n{...}: drop the tag; ```{...}``` on one line has none.
        yield rest if newline and not head.strip().startswith(("{", "[")) else body


def _validation_problem(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    parts = [
        f"{'.'.join(str(p) for p in error['loc']) or 'the object'}: {error['msg']}"
        for error in errors[:_ERRORS_SHOWN]
    ]
    more = len(errors) - _ERRORS_SHOWN
    if more > 0:
        parts.append(f"and {more} more")
    return _one_line("; ".join(parts))


def _one_line(text: str, limit: int = _PROBLEM_MAX) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- the typed message ---------------------------------------------------------------


def _typed_message(answer: AIMessage, instance: BaseModel, attempt: _Attempt) -> AIMessage:
    return _reported(
        answer, attempt, content=instance.model_dump_json(), parsed=instance, problem=None
    )


def _reported(
    answer: AIMessage,
    attempt: _Attempt,
    *,
    content: str | list[str | dict[str, Any]],
    parsed: BaseModel | None,
    problem: str | None,
) -> AIMessage:
    """``answer`` with ``content``, the report and the usage of the structuring added.

    ``parsed`` is the instance (``additional_kwargs["parsed"]``); without one, ``problem``
    is why there is none (``structured.error``) and the run's other ``additional_kwargs``
    stay.
    """
    metadata = dict(answer.response_metadata)
    report = dict(metadata.get("leanloop") or {})
    structured: dict[str, Any] = {
        "schema": attempt.schema.__name__,
        "method": attempt.method,
        "repairs": attempt.repairs,
    }
    if problem is not None:
        structured["error"] = problem
    report["structured"] = structured
    report["requests"] = [*report.get("requests", []), *_records(report, attempt)]
    report.update(prompt_totals(report["requests"]))
    if attempt.notes:
        report["events"] = [*report.get("events", []), *attempt.notes]
    elapsed = report.get("elapsed_s")
    if isinstance(elapsed, int | float):
        # The time of the run includes the structuring requests.
        now = asyncio.get_running_loop().time()
        report["elapsed_s"] = round(elapsed + now - attempt.started, 3)
    metadata["leanloop"] = report
    usage = answer.usage_metadata
    for _, reply in attempt.replies:
        if reply.usage_metadata:
            usage = add_usage(usage, reply.usage_metadata) if usage else reply.usage_metadata
    return AIMessage(
        content=content,
        additional_kwargs={"parsed": parsed} if parsed is not None else answer.additional_kwargs,
        response_metadata=metadata,
        usage_metadata=usage,
        id=answer.id,
    )


def _records(report: Mapping[str, Any], attempt: _Attempt) -> list[dict[str, Any]]:
    """The report's request records of the structuring requests."""
    earlier = [r for r in report.get("requests", []) if isinstance(r, Mapping)]
    last = earlier[-1] if earlier else {}
    per_token = report.get("chars_per_token") or 4.0
    step = int(report.get("steps") or 0) + 1
    records = []
    for sent, reply in attempt.replies:
        chars = sum(len(m.text) for m in attempt.messages[:sent])
        usage: Mapping[str, Any] = reply.usage_metadata or {}
        cache = prompt_usage(reply)
        records.append(
            RequestRecord(
                step=step,
                messages=sent,
                input_tokens=usage.get("input_tokens"),
                output_tokens=usage.get("output_tokens"),
                estimated_tokens=int(chars / per_token),
                ceiling=last.get("ceiling"),
                window=last.get("window") or report.get("window"),
                tools=False,
                kind="structured",
                prompt_evaluated=cache.evaluated if cache else None,
                prompt_cached=cache.cached if cache else None,
            )
        )
    # Through RunReport.to_dict, so the records have exactly the keys of the loop's.
    return list(RunReport(requests=records).to_dict()["requests"])
