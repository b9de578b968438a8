"""Steps for properties.feature: hypothesis properties over thousands of generated inputs.

Each property is a function of one generated value that raises when the property does not
hold; :func:`_check` runs it under hypothesis with a fixed budget of examples,
derandomized (the same inputs on every run, so CI is reproducible) and without an example
database (nothing is written into the checkout). A failure is shrunk by hypothesis and
reported with the smallest failing input.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from behave import given, then, when
from behave.runner import Context
from hypothesis import HealthCheck, settings
from hypothesis import given as hypothesis_given
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage
from support.logs import LogCapture

from leanloop.exceptions import SpecError
from leanloop.protocol import CALL_FORMS, ParseResult, correction_for, parse_tool_calls
from leanloop.pruning.markers import (
    OUTPUT_START,
    RESERVED_MARKERS,
    PruneFormatError,
    PruneParse,
    escape_reserved,
    format_pruned,
    is_pruned,
    parse_prune_response,
    restore_reserved,
)
from leanloop.spec import AgentSpec, load_specs_from_text
from leanloop.tools._paths import PathRefused, resolve_inside

Property = Callable[[Context], tuple[st.SearchStrategy[Any], Callable[[Any], None]]]
"""Given the scenario's context: the strategy of inputs, and the check of one input."""

_PROPERTIES: dict[str, Property] = {}


def _property(name: str) -> Callable[[Property], Property]:
    def register(build: Property) -> Property:
        _PROPERTIES[name] = build
        return build

    return register


# --- shared strategies ------------------------------------------------------------------

# Every code point: lone surrogates (which cannot be encoded), NUL and control characters,
# line and paragraph separators, the BOM — what a model or a file can put in a string.
_ANY_CHAR = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.characters(max_codepoint=0x20),
    st.sampled_from(["\x85", "\u2028", "\u2029", "\ufeff", "\x7f", "\u200b"]),
)
_ANY_TEXT = st.text(alphabet=_ANY_CHAR, max_size=300)


# Long runs of one character (a 5,000-digit number, a name too long for the system).
_LONG = st.tuples(st.sampled_from(["9", "a", "日", " "]), st.integers(300, 5_000)).map(
    lambda t: t[0] * t[1]
)


def _soup(pieces: list[str], *, max_pieces: int = 60, long: bool = False) -> st.SearchStrategy[str]:
    """Text made of the tokens a reader cares about, with bits of arbitrary text."""
    token = st.one_of(
        st.sampled_from(pieces),
        st.text(alphabet=_ANY_CHAR, max_size=4),
        *([_LONG] if long else []),
    )
    return st.lists(token, max_size=max_pieces).map("".join)


def _mutations(samples: list[str], pieces: list[str]) -> st.SearchStrategy[str]:
    """Valid samples with tokens spliced in, slices cut out, or cut off at any point."""
    edit = st.tuples(st.integers(0, 10_000), st.integers(0, 6), st.sampled_from(pieces) | _ANY_TEXT)

    def apply(args: tuple[str, list[tuple[int, int, str]], int | None]) -> str:
        text, edits, cut = args
        for where, remove, insert in edits:
            at = where % (len(text) + 1)
            text = text[:at] + insert + text[at + remove :]
        return text if cut is None else text[: cut % (len(text) + 1)]

    return st.tuples(
        st.sampled_from(samples),
        st.lists(edit, min_size=1, max_size=5),
        st.none() | st.integers(0, 10_000),
    ).map(apply)


def _check(context: Context, name: str, count: int) -> None:
    strategy, check = _PROPERTIES[name](context)
    runs = 0

    @settings(
        max_examples=count,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @hypothesis_given(strategy)
    def holds(value: Any) -> None:
        nonlocal runs
        runs += 1
        check(value)

    holds()
    context.property_runs = runs


@when('the property "{name}" is checked against {count:d} generated inputs')
def step_check_property(context: Context, name: str, count: int) -> None:
    # A failing property raises here, with hypothesis's smallest failing input attached.
    _check(context, name, count)
    context.property_held = True


@then("no generated input broke the property")
def step_property_held(context: Context) -> None:
    assert context.property_held


@then("at least {count:d} generated inputs were tried")
def step_property_runs(context: Context, count: int) -> None:
    assert context.property_runs >= count, context.property_runs


# --- the text-protocol parser -----------------------------------------------------------

_PARSER_TOOLS = {
    "read_file": ["path", "max_lines"],
    "search": ["pattern", "path"],
    "list_files": ["path"],
}
_PARSER_SAMPLES = [
    'Let me look.\n```tool\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n```',
    '```json\n{"name": "search", "parameters": {"pattern": "a\\"}b", "path": "src"}}\n```',
    '<tool_call>\n{"name": "search", "arguments": "{\\"pattern\\": \\"}\\"}"}\n</tool_call>',
    "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
    "<parameter=max_lines>\n40\n</parameter>\n</function>\n</tool_call>",
    'Checking.\n{"name": "list_files", "arguments": {"path": "."}}',
    "First read_file('a.py', 20) then search(pattern=\"x\", path=None).",
    '```tool\n[{"name": "read_file", "arguments": {"path": "日本.md"}}]\n```\n'
    '```tool\nsearch("q")\n```',
    'Sure <function=search><parameter=pattern>{"a": [1, 2]}<parameter=path>src</function> ok',
]
_PARSER_PIECES = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "\\",
    ":",
    ",",
    "(",
    ")",
    "=",
    "```",
    "```tool\n",
    "```json\n",
    "```tool_call\n",
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "<function=read_file>",
    "<parameter=",
    "<parameter=path>",
    "</parameter>",
    "</function>",
    '"name"',
    '"arguments"',
    '"parameters"',
    '"function"',
    '"name": "read_file"',
    '"arguments": {',
    "read_file",
    "search",
    "list_files",
    "read_file(",
    "search {",
    "\n",
    "\n\n\n",
    " ",
    "\t",
    "\r\n",
    "null",
    "true",
    "1e999",
    "-0",
    "NaN",
    "Infinity",
    "\\u0000",
    "\\ud800",
    "\ud800",
    "\x00",
    "日本",
]
# Deep nesting and long runs: what blows recursion limits or quadratic scans.
_PARSER_DEEP = st.tuples(
    st.sampled_from(["```tool\n", "<tool_call>", '{"name": "read_file", "arguments": ', ""]),
    st.sampled_from(["[", "{", '{"a":', "read_file(", "(", "<parameter=path>", '"', "\\"]),
    st.integers(1, 3_000),
).map(lambda t: t[0] + t[1] * t[2])


@_property("the tool-call parser returns a well-formed result")
def _parser_property(context: Context) -> Any:
    # parse_tool_calls catches everything and logs "parser failed": a swallowed bug is
    # still a bug, so the log is watched too.
    logs = LogCapture()
    logger = logging.getLogger("leanloop.protocol")
    logger.addHandler(logs)
    context.cleanups.append(lambda: logger.removeHandler(logs))
    strategy = st.tuples(
        st.one_of(
            _ANY_TEXT,
            _soup(_PARSER_PIECES),
            _mutations(_PARSER_SAMPLES, _PARSER_PIECES),
            _PARSER_DEEP,
        ),
        st.booleans(),
    )

    def check(value: tuple[str, bool]) -> None:
        text, final = value
        before = len(logs.records)
        result = parse_tool_calls(text, tools=_PARSER_TOOLS, final=final)
        fallbacks = [r for r in logs.records[before:] if "parser failed" in r.getMessage()]
        assert not fallbacks, _exc_text(fallbacks[0])
        assert isinstance(result, ParseResult)
        assert isinstance(result.prose, str) and isinstance(result.calls, tuple)
        assert result.pending is False or not final
        for call in result.calls:
            assert call.form in CALL_FORMS and isinstance(call.name, str) and call.name, call
            assert isinstance(call.args, dict), call
            assert 0 <= call.start < call.end <= len(text), call
            json.dumps(call.args)
        for entry in result.broken:
            assert isinstance(entry, str) and entry and "\n" not in entry, entry
            assert "\n" not in correction_for(entry)

    return strategy, check


def _exc_text(record: logging.LogRecord) -> str:
    if record.exc_info:
        return logging.Formatter().formatException(record.exc_info)
    return record.getMessage()


# --- the pruning markers ----------------------------------------------------------------

_MARKER_PIECES = [
    *RESERVED_MARKERS,
    *(f"[\\{m[1:]}" for m in RESERVED_MARKERS),
    *(f"[\\\\{m[1:]}" for m in RESERVED_MARKERS),
    *(f"\n{m}\n" for m in RESERVED_MARKERS),
    *(f"\n  {m} " for m in RESERVED_MARKERS),
    "[",
    "]",
    "\\",
    "[\\",
    "PRUNE_",
    "PRUNE_INFO",
    "PRUNE_OUTPUT",
    "_START]",
    "_END]",
    "\n",
    " ",
    "\t",
    "\r",
    "```",
    "```text\n",
    "~~~",
    "x",
    "日本",
    "\x00",
    "\ud800",
]
_MARKER_TEXT = st.one_of(_ANY_TEXT, _soup(_MARKER_PIECES))


@_property("escaping round-trips and leaves no live marker")
def _escaping_property(context: Context) -> Any:
    def check(value: tuple[str, str]) -> None:
        output, info = value
        escaped = escape_reserved(output)
        assert restore_reserved(escaped) == output, escaped
        # Escaping twice is undone by restoring twice: a bijection, not a one-off.
        assert restore_reserved(escape_reserved(escaped)) == escaped
        live = [m for m in RESERVED_MARKERS if m in escaped]
        assert not live, (live, escaped)
        try:
            parse_prune_response(escaped)
        except PruneFormatError:
            pass
        else:
            raise AssertionError(f"escaped tool output read as a pruning answer: {escaped!r}")
        assert not is_pruned(ToolMessage(content=escaped, tool_call_id="call-1"))
        # Framed by the real markers, escaped text comes back whole: it cannot end a block
        # early or open another one.
        parsed = parse_prune_response(format_pruned(escape_reserved(info), escaped))
        assert parsed.output == escaped, (parsed.output, escaped)
        assert restore_reserved(parsed.output) == output
        assert parsed.info == escape_reserved(info).strip(), (parsed.info, info)

    return st.tuples(_MARKER_TEXT, _MARKER_TEXT), check


_PRUNE_SAMPLES = [
    format_pruned("kept 2 of 40 lines", "ERROR db: deadlock\nERROR db: retry failed"),
    "Sure!\n```text\n[PRUNE_INFO_START]\nkept 1\n[PRUNE_INFO_END]\n"
    "[PRUNE_OUTPUT_START]\nline\n[PRUNE_OUTPUT_END]\n```",
    "[PRUNE_OUTPUT_START] first line\nsecond\n```",
    "[PRUNE_OUTPUT_START]\na\n[PRUNE_OUTPUT_END]\n[PRUNE_OUTPUT_START]\nb\n[PRUNE_OUTPUT_END]",
]


@_property("the pruning answer reader fails only with PruneFormatError")
def _prune_reader_property(context: Context) -> Any:
    def check(text: str) -> None:
        opens_output = any(ln.lstrip().startswith(OUTPUT_START) for ln in text.split("\n"))
        try:
            parsed = parse_prune_response(text)
        except PruneFormatError:
            assert not opens_output, "an answer with an OUTPUT block was refused"
            return
        assert opens_output, "an answer without an OUTPUT block was accepted"
        assert isinstance(parsed, PruneParse) and isinstance(parsed.output, str)
        assert parsed.info is None or isinstance(parsed.info, str)
        restore_reserved(parsed.output)

    strategy = st.one_of(_MARKER_TEXT, _mutations(_PRUNE_SAMPLES, _MARKER_PIECES))
    return strategy, check


# --- the agents-file loader -------------------------------------------------------------

_YAML_PIECES = [
    "version: 1\n",
    "agents:\n",
    "models:\n",
    "  a:\n",
    "    model: local\n",
    "    tools: [read_file]\n",
    "    workspace: ",
    "provider: ",
    ":",
    ": ",
    "- ",
    "? ",
    "\n",
    "\n  ",
    "\n    ",
    "\t",
    "{",
    "}",
    "[",
    "]",
    ",",
    "'",
    '"',
    "#",
    "|",
    ">-",
    "&a ",
    "*a",
    "<<: *a",
    "<<: ",
    "!!int ",
    "!!float ",
    "!!bool ",
    "!!str ",
    "!!null ",
    "!!binary ",
    "!!timestamp ",
    "!!set ",
    "!!omap ",
    "!!pairs ",
    "!!merge ",
    "!!python/object:os.system ",
    "!!python/name:os.system ",
    "!<tag:yaml.org,2002:int> ",
    "!local ",
    "! ",
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
    "---\n",
    "...\n",
    "${A}",
    "${A:-5}",
    "${A:-${B}}",
    "${",
    "$${A}",
    "${NOPE}",
    "0x1F",
    "0b",
    "1e400",
    ".nan",
    "-.inf",
    "~",
    "\x00",
    "\x85",
    "\ufeff",
    "\ud800",
    "@",
    "`",
]

# Values that reach every check: references, import paths (only ones that exist and are
# harmless, or that do not exist), numbers at and past their bounds, ${...} forms.
_YAML_WORDS = [
    "local",
    "missing",
    "read_file",
    "search",
    "list_files",
    "openai",
    "openai-compatible",
    "ollama",
    "anthropic",
    "text",
    "native",
    "auto",
    ".",
    "..",
    "/",
    "~nosuchuser/x",
    "langchain_openai:ChatOpenAI",
    "leanloop.testing:ScriptedChatModel",
    "no.such.module:Thing",
    "json:loads",
    "http://127.0.0.1:1/v1",
    "${A}",
    "${A:-0.5}",
    "${NOPE}",
    "${A:-${B}}",
    "1e400",
    ".nan",
]
_AGENT_KEYS = [
    "description",
    "model",
    "system_prompt",
    "tools",
    "workspace",
    "max_rounds",
    "max_parallel_tools",
    "tool_timeout",
    "tool_result_max_chars",
    "token_budget_percent",
    "trim_tool_results",
    "trim_keep_steps",
    "allow_tool_output_pruning",
    "pruning_model",
    "pruning_tools",
    "pruning_min_chars",
    "pruning_timeout",
    "pruning_deadline",
    "pruning_concurrency",
    "pruning_verify",
    "tool_mode",
    "max_repeated_calls",
    "prefetch_mentioned_files",
    "repair_paths",
    "first_tool_choice",
    "prompt_profile",
]
_MODEL_KEYS = [
    "provider",
    "class",
    "kwargs",
    "model",
    "base_url",
    "api_key",
    "temperature",
    "max_tokens",
    "timeout",
    "context_window",
]
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(_YAML_WORDS),
    _LONG,
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=6) | st.sampled_from(_YAML_WORDS), inner, max_size=3),
    ),
    max_leaves=6,
)


def _fields(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=8), _VALUES, max_size=6)


_MODEL = st.one_of(st.sampled_from(["local", "missing"]), _fields(_MODEL_KEYS), _VALUES)
_AGENT = st.one_of(
    st.tuples(_fields(_AGENT_KEYS), _MODEL).map(lambda t: {**t[0], "model": t[1]}),
    _fields(_AGENT_KEYS),
    _VALUES,
)
_NAMES = st.sampled_from(["a", "helper", "local", "missing", "x y", ""]) | st.text(max_size=8)
_DOCUMENT = st.fixed_dictionaries(
    {},
    optional={
        "version": st.one_of(st.just(1), _SCALARS),
        "models": st.dictionaries(_NAMES, _MODEL, max_size=2) | _VALUES,
        "agents": st.dictionaries(_NAMES, _AGENT, max_size=2) | _VALUES,
        "extra": _VALUES,
    },
)
_VALID_DOCUMENT = """\
version: 1
models:
  local:
    provider: openai-compatible
    model: qwen
    base_url: http://127.0.0.1:${PORT:-8080}/v1
    temperature: 0
agents:
  helper:
    model: local
    system_prompt: You help.
    tools: [read_file, search]
    workspace: .
    token_budget_percent: 0.85
    max_rounds: 5
"""


def _dump(value: tuple[dict[str, Any], bool]) -> str:
    document, flow = value
    return yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True, sort_keys=False)


_YAMLISH = st.one_of(
    st.tuples(_DOCUMENT, st.booleans()).map(_dump),
    _mutations([_VALID_DOCUMENT], _YAML_PIECES),
    st.tuples(_DOCUMENT, st.booleans())
    .map(_dump)
    .flatmap(lambda text: _mutations([text], _YAML_PIECES)),
    _soup(_YAML_PIECES, max_pieces=40, long=True),
)


def _loader_check(context: Context) -> Callable[[str], None]:
    environ = {"A": "5", "B": "x", "PORT": "8080"}

    def check(text: str) -> None:
        try:
            specs = load_specs_from_text(
                text, source="generated.yaml", base_dir=context.tmp, environ=environ
            )
        except SpecError as exc:
            assert str(exc), "a SpecError without a message"
            return
        assert isinstance(specs, dict)
        assert all(isinstance(spec, AgentSpec) for spec in specs.values()), specs

    return check


@_property("the agents-file loader fails only with SpecError on any text")
def _loader_text_property(context: Context) -> Any:
    strategy = st.one_of(_ANY_TEXT, _soup(_YAML_PIECES, max_pieces=30, long=True))
    return strategy, _loader_check(context)


@_property("the agents-file loader fails only with SpecError on YAML-ish documents")
def _loader_yaml_property(context: Context) -> Any:
    return _YAMLISH, _loader_check(context)


# --- the workspace path jail ------------------------------------------------------------


@given("a workspace with a folder, a link inside, links leading outside and a link loop")
def step_jail_workspace(context: Context) -> None:
    outside = context.tmp / "outside"
    (outside / "deeper").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret\n", "utf-8")
    ws = context.tmp / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("a\n", "utf-8")
    (ws / "sub" / "b.txt").write_text("b\n", "utf-8")
    links = {
        "out": "../outside",  # a folder outside, relative
        "outfile": "../outside/secret.txt",
        "abs_out": str(outside),  # absolute
        "root": "/",
        "dangling": "../outside/nothing",  # leads outside to nothing
        "loop1": "loop2",
        "loop2": "loop1",
        "in_link": "sub",  # stays inside
        "self": ".",
        "sub/up": "../..",  # a link in a subfolder that climbs out
        "sub/chain": "../out/deeper",  # inside link → outside link
    }
    for name, target in links.items():
        (ws / name).symlink_to(target)
    # The workspace itself reached through a link: the root is resolved first.
    (context.tmp / "ws_link").symlink_to(ws)
    context.jail_roots = [ws, context.tmp / "ws_link"]
    context.jail_outside = outside


_JAIL_SEGMENTS = [
    "..",
    ".",
    "",
    "sub",
    "a.txt",
    "b.txt",
    "out",
    "outfile",
    "abs_out",
    "root",
    "dangling",
    "loop1",
    "in_link",
    "self",
    "up",
    "chain",
    "deeper",
    "outside",
    "secret.txt",
    "ws",
    "ws_link",
    "~",
    "~root",
    "~nosuchuser",
    "\x00",
    "a\x00b",
    "a" * 300,
    "日本語",
    "\ud800",
    "é",
    " ",
    "\\",
    "..\\..",
    "%2e%2e",
    "proc",
    "self",
    "etc",
    "passwd",
    "...",
    ".. ",
    "\n..",
]


@_property("the path jail resolves inside the workspace or refuses")
def _jail_property(context: Context) -> Any:
    roots = context.jail_roots
    tmp = str(context.tmp)
    prefixes = [
        "",
        "/",
        "//",
        "./",
        " ",
        f"{roots[0]}/",
        f"{roots[1]}/",
        f"{tmp}/",
        f"{context.jail_outside}/",
        "/proc/self/root/",
        "/proc/self/cwd/",
        "/tmp/",
        "~/",
    ]
    segment = st.sampled_from(_JAIL_SEGMENTS) | st.text(alphabet=_ANY_CHAR, max_size=8)
    composed = st.tuples(
        st.sampled_from(prefixes), st.lists(segment, max_size=12), st.sampled_from(["", "/"])
    ).map(lambda t: t[0] + "/".join(t[1]) + t[2])
    runs = st.sampled_from(["a", "../", "sub/", "out/", "/", "日"])
    long = st.tuples(runs, st.integers(1, 5_000))
    strategy = st.tuples(
        st.sampled_from(roots),
        st.one_of(composed, _ANY_TEXT, long.map(lambda t: t[0] * t[1])),
    )
    base = Path(os.path.realpath(roots[0]))

    def check(value: tuple[Path, str]) -> None:
        root, user_path = value
        try:
            resolved = resolve_inside(root, user_path)
        except PathRefused as exc:
            assert str(exc)
            return
        assert resolved.is_absolute(), resolved
        assert resolved.is_relative_to(base), resolved
        # Following every link of the answer again still lands inside.
        real = Path(os.path.realpath(resolved))
        assert real.is_relative_to(base), (resolved, real)

    return strategy, check
