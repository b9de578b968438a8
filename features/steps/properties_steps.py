"""Steps for properties.feature: hypothesis properties of the agents-file loader and the
workspace path jail (those of the text-protocol parser and the pruning markers are pytest
tests: tests/protocol/test_properties.py, tests/pruning/test_marker_properties.py).

Each property is a function of one generated value that raises when the property does not
hold; :func:`_check` runs it under hypothesis with a fixed budget of examples,
derandomized (the same inputs on every run, so CI is reproducible) and without an example
database (nothing is written into the checkout). A failure is shrunk by hypothesis and
reported with the smallest failing input.
"""

from __future__ import annotations

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
from support.text_strategies import ANY_CHAR, ANY_TEXT, LONG, mutations, soup

from leanloop.exceptions import SpecError
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
    LONG,
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
    mutations([_VALID_DOCUMENT], _YAML_PIECES),
    st.tuples(_DOCUMENT, st.booleans())
    .map(_dump)
    .flatmap(lambda text: mutations([text], _YAML_PIECES)),
    soup(_YAML_PIECES, max_pieces=40, long=True),
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
    strategy = st.one_of(ANY_TEXT, soup(_YAML_PIECES, max_pieces=30, long=True))
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
    segment = st.sampled_from(_JAIL_SEGMENTS) | st.text(alphabet=ANY_CHAR, max_size=8)
    composed = st.tuples(
        st.sampled_from(prefixes), st.lists(segment, max_size=12), st.sampled_from(["", "/"])
    ).map(lambda t: t[0] + "/".join(t[1]) + t[2])
    runs = st.sampled_from(["a", "../", "sub/", "out/", "/", "日"])
    long = st.tuples(runs, st.integers(1, 5_000))
    strategy = st.tuples(
        st.sampled_from(roots),
        st.one_of(composed, ANY_TEXT, long.map(lambda t: t[0] * t[1])),
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
