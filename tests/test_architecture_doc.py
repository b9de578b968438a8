"""docs/architecture.md names only code that exists, and every package and module of it.

- Its package table has a row for every package under src/leanloop and for no package
  that is gone (issue 27), and each row names every public module of its package.
- Every code name it writes is resolved (issue 40): a backticked dotted name
  (``loop.tool_round``, ``RunBudget.open``, ``httpclients.shared_ssl_context``), a
  backticked class or constant (``SharedState``, ``PROCESS_STATE``), a backticked
  source file (``spec/toolrefs.py``), and in the data-flow diagram every dotted name and
  every CamelCase name. A name resolves by importing its module and walking its attributes
  with :func:`getattr`; a policy named at a hook (``Synthesis.at_end``) must answer that
  hook itself, not inherit it from ``Policy``.
- Its hooks of ``Policy`` are the hooks ``Policy`` has; its layer lines are the layers of
  the ``[tool.importlinter]`` contracts in pyproject.toml.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from leanloop.loop.policies.hooks import Policy

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "leanloop"
DOC = ROOT / "docs" / "architecture.md"

# A row of the package table: "| `budget/` | what it holds |" ("top level": the modules
# directly under leanloop).
_ROW = re.compile(r"^\|\s*`(?P<package>[\w/]+)/`\s*\|", re.MULTILINE)
_ROW_TEXT = re.compile(
    r"^\|\s*(?:`(?P<package>[\w/]+)/`|(?P<top>top level))\s*\|(?P<text>.*)$", re.M
)
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`([^`]+)`")  # a span may wrap onto the next line
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# A class or a constant: `SharedState`, `PROCESS_STATE` (not `NAME`-like placeholders of
# one word in capitals, which name nothing).
_CLASS_OR_CONSTANT = re.compile(r"[A-Z]\w*[a-z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]+")
# In the diagram, where prose surrounds the names: a CamelCase word (`LLMAgent`, `RunBudget`),
# which has a small letter and two capitals (not `Runnable`, not `NAME`).
_WORD = re.compile(r"\b[A-Z]\w+\b")
_CALL = re.compile(r"(?P<name>[A-Za-z_][\w.]*)\((?P<args>.*)\)")
_SOURCE_FILE = re.compile(r"[\w/.]+\.(?:py|json|toml|yaml)")

# Deliberately not code, each for a reason.
NOT_CODE = {
    # The glossary's proposed renames: names the code does not have yet, by design.
    "RunReport.lines",
    "Told.remark",
    "agent/turn.py",
    "tools/memory.py",
    # A parameter of the example it sits in (argparse's parser handed to add_arguments).
    "parser.set_defaults(handler=...)",
}

# Names from other packages, resolved there so that a misspelling still fails.
ELSEWHERE = {
    "AIMessage": "langchain_core.messages",
    "ToolMessage": "langchain_core.messages",
}

_MISSING = object()
_FIELD = object()  # an attribute declared on a class but set per instance


def _packages() -> set[str]:
    """Each package below ``leanloop``, as its path from there (``budget``, ``tools/x``)."""
    return {
        init.parent.relative_to(SOURCE).as_posix()
        for init in SOURCE.rglob("__init__.py")
        if init.parent != SOURCE and "__pycache__" not in init.parts
    }


def _named() -> set[str]:
    return set(_ROW.findall(_doc()))


@cache
def _doc() -> str:
    return DOC.read_text("utf-8")


def _section(title: str) -> str:
    """The text of the ``## title`` section."""
    start = _doc().index(f"## {title}\n")
    end = _doc().find("\n## ", start + 1)
    return _doc()[start : end if end != -1 else None]


# ---- names the document writes ----------------------------------------------------------


def _spans() -> Iterator[str]:
    """Every backticked span outside the fenced blocks."""
    yield from (" ".join(span.split()) for span in _SPAN.findall(_FENCE.sub("", _doc())))


def _diagram_names() -> Iterator[str]:
    """The dotted and CamelCase names of the data-flow diagram (a fenced block)."""
    block = _FENCE.search(_section("Data flow of one run"))
    assert block is not None, "the data-flow section has no diagram"
    text = block.group(0)
    for name in _DOTTED.findall(text):
        if not _SOURCE_FILE.fullmatch(name):  # agents.yaml: the user's file, not ours
            yield name
    for word in _WORD.findall(text):
        if re.search("[a-z]", word) and sum(c.isupper() for c in word) >= 2:
            yield word


def _code_names() -> list[str]:
    """The names the document writes as code, each once, in order."""
    names: list[str] = []
    for span in _spans():
        call = _CALL.fullmatch(span)
        bare = call.group("name") if call else span
        if _SOURCE_FILE.fullmatch(bare):
            names.append(bare)
        elif _DOTTED.fullmatch(bare) or _CLASS_OR_CONSTANT.fullmatch(bare):
            names.append(span)  # a call keeps its arguments: their keywords are checked
        else:  # a command line: `python -m leanloop.testing.server`
            names += [n for n in _DOTTED.findall(span) if n.startswith("leanloop.")]
    names += _diagram_names()
    return list(dict.fromkeys(names))


# ---- resolving them ---------------------------------------------------------------------


@cache
def _defined() -> dict[str, tuple[str, ...]]:
    """Each name defined at the top of a leanloop module → the modules that define it."""
    found: dict[str, list[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.parse(path.read_text("utf-8")).body:
            for name in _names_of(node):
                found.setdefault(name, []).append(module)
    return {name: tuple(modules) for name, modules in found.items()}


def _names_of(node: ast.stmt) -> Iterator[str]:
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        yield node.name
    elif isinstance(node, ast.Assign):
        yield from (t.id for t in node.targets if isinstance(t, ast.Name))
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        yield node.target.id


def _module(name: str) -> ModuleType | None:
    """The module ``name``, or ``None`` when there is none (a missing dependency of a
    module that exists is an error, not a misspelt name)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(f"{exc.name}.")):
            return None
        raise


def _starts(head: str) -> Iterator[Any]:
    """What the first part of a name can be: leanloop itself, a module of leanloop, a name
    a leanloop module defines, a name of another package, a standard-library module."""
    if head == "leanloop":
        yield importlib.import_module("leanloop")
    if (module := _module(f"leanloop.{head}")) is not None:
        yield module
    for defining in _defined().get(head, ()):
        yield getattr(importlib.import_module(defining), head, _MISSING)
    if head in ELSEWHERE:
        yield getattr(importlib.import_module(ELSEWHERE[head]), head, _MISSING)
    if head in sys.stdlib_module_names:
        yield _module(head) or _MISSING


def _attribute(obj: Any, part: str) -> Any:
    if isinstance(obj, ModuleType):
        if hasattr(obj, part):
            return getattr(obj, part)
        return _module(f"{obj.__name__}.{part}") or _MISSING
    if isinstance(obj, type):
        if issubclass(obj, Policy) and obj is not Policy and hasattr(Policy, part):
            # A policy named at a hook answers it: the method is its own, not Policy's.
            own = any(
                part in vars(k) for k in obj.__mro__ if issubclass(k, Policy) and k is not Policy
            )
            return getattr(obj, part) if own else _MISSING
        if hasattr(obj, part):
            return getattr(obj, part)
        declared = any(part in vars(k).get("__annotations__", {}) for k in obj.__mro__)
        return _FIELD if declared else _MISSING  # a dataclass or pydantic field
    return getattr(obj, part, _MISSING)


def _walk(obj: Any, parts: list[str]) -> Any:
    for part in parts:
        if obj is _MISSING or obj is _FIELD:
            return _MISSING
        obj = _attribute(obj, part)
    return obj


def _keywords_refused(obj: Any, args: str) -> list[str]:
    """The keyword arguments of ``args`` that ``obj`` does not take."""
    keywords = re.findall(r"\b(\w+)=", args)
    try:
        parameters = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return []
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return []
    return [k for k in keywords if k not in parameters]


def _resolves(name: str) -> bool:
    if _SOURCE_FILE.fullmatch(name):
        return any((folder / name).is_file() for folder in (ROOT, SOURCE)) or any(
            SOURCE.rglob(name)
        )
    call = _CALL.fullmatch(name)
    head, *rest = (call.group("name") if call else name).split(".")
    for start in _starts(head):
        found = _walk(start, rest)
        if found is _MISSING:
            continue
        if call and found is not _FIELD and _keywords_refused(found, call.group("args")):
            continue
        return True
    return False


# ---- the tests ----------------------------------------------------------------------------


def test_the_package_scan_finds_the_known_packages() -> None:
    assert {"agent", "cli", "loop", "budget", "tools"} <= _packages()


def test_the_architecture_document_names_every_package() -> None:
    missing = _packages() - _named()

    assert not missing, f"docs/architecture.md has no row for: {sorted(missing)}"


def test_the_architecture_document_names_no_package_that_is_gone() -> None:
    gone = _named() - _packages()

    assert not gone, f"docs/architecture.md names packages that do not exist: {sorted(gone)}"


def test_each_row_of_the_package_table_names_every_public_module_of_its_package() -> None:
    missing: list[str] = []
    for row in _ROW_TEXT.finditer(_doc()):
        folder = SOURCE / (row["package"] or "")
        for path in sorted(folder.glob("*.py")):
            if not path.stem.startswith("_") and f"`{path.stem}`" not in row["text"]:
                missing.append(f"{path.relative_to(SOURCE).as_posix()}")
    assert not missing, f"docs/architecture.md's package table leaves out: {missing}"


def test_the_name_scan_finds_names_of_each_form() -> None:
    names = _code_names()

    assert {"budget.shared.SharedState", "RunBudget.open", "spec/toolrefs.py"} <= set(names)
    assert any("=" in name for name in names if _CALL.fullmatch(name))  # keywords of a call
    assert len(list(_diagram_names())) >= 20
    assert len(names) > 100


def test_the_resolver_refuses_names_that_do_not_exist() -> None:
    assert _resolves("budget.run.RunBudget.prepare_step")
    assert _resolves("RunReport.steps")  # a dataclass field
    assert not _resolves("budget.run.prepare")  # the name the document drifted to
    assert not _resolves("RunBudget.prepare_everything")
    assert not _resolves("Prefetch.before_request")  # a hook it does not answer
    assert not _resolves("load_specs(imports=True, nothing=1)")
    assert not _resolves("spec/nothing.py")


def test_every_code_name_in_the_architecture_document_exists() -> None:
    unresolved = [name for name in _code_names() if name not in NOT_CODE and not _resolves(name)]

    assert not unresolved, f"docs/architecture.md names code that does not exist: {unresolved}"


def test_the_allow_list_holds_only_names_the_document_writes() -> None:
    stale = NOT_CODE - set(_code_names())

    assert not stale, f"NOT_CODE lists names docs/architecture.md no longer writes: {stale}"


def test_the_document_lists_the_hooks_of_a_policy() -> None:
    listed = re.search(r"`Policy`, its hooks (?P<hooks>[^;]+);", _doc())
    assert listed is not None, "the policies row no longer lists Policy's hooks"
    hooks = {n for n, v in vars(Policy).items() if not n.startswith("_") and callable(v)}

    written = set(_SPAN.findall(listed["hooks"]))

    assert written == hooks, f"hooks gone: {written - hooks}; hooks left out: {hooks - written}"


def _doc_layers() -> dict[str, list[set[str]]]:
    """The layers the document draws: the tree of packages, and each "Inside `x/`:" line."""
    drawn: dict[str, list[set[str]]] = {}
    tree = _FENCE.search(_section("Layers"))
    assert tree is not None, "the layers section has no tree"
    rows = [line.strip().removeprefix("└").split("  ")[0] for line in tree.group(0).splitlines()]
    drawn["leanloop"] = [_layer(f"`{row.strip()}`") for row in rows[1:-1] if row.strip()]
    prose = " ".join(_section("Layers").split())
    for inside in re.finditer(r"Inside `(?P<package>[\w/]+)/`[^:]*: (?P<layers>.*?)\.", prose):
        package = "leanloop." + inside["package"].replace("/", ".")
        drawn[package] = [_layer(part) for part in inside["layers"].split("→")]
    return drawn


def _layer(text: str) -> set[str]:
    return {name.strip() for span in _SPAN.findall(text) for name in span.split("|")}


def test_the_layers_drawn_are_the_import_contracts() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    layered = {
        (c.get("containers") or ["leanloop"])[0]: [
            set(_layer(f"`{layer}`")) for layer in c["layers"]
        ]
        for c in contracts["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers"
    }
    layered["leanloop"] = [
        {n.removeprefix("leanloop.") for n in layer} for layer in layered["leanloop"]
    ]
    drawn = _doc_layers()

    differ = {p: (drawn.get(p), layers) for p, layers in layered.items() if drawn.get(p) != layers}

    assert not differ, f"drawn layers (docs/architecture.md, pyproject.toml) differ: {differ}"
    # The one line no contract keeps: the policies, each a module, above their hooks.
    policies = {p.stem for p in (SOURCE / "loop" / "policies").glob("*.py")} - {"__init__"}
    assert set().union(*drawn["leanloop.loop.policies"]) == policies
