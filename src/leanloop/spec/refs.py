"""Import paths checked by reading, never by importing: nothing of a module runs.

``validate`` (and every load of an agents file) resolves ``package.module:name`` the way
``import`` would find it (the Python path, then the agents file's folder) without
executing a line: each package of the dotted name is located with
:class:`importlib.machinery.PathFinder` from its parent's search locations (only the
top-level name goes through :func:`importlib.util.find_spec`, which imports nothing for
a name without dots), its source is parsed with :func:`ast.parse`, and the name must be
bound at the module's top level (``def``, ``class``, an assignment, an import). What a
name is (a function, a class without bases, a literal) is read from that binding.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Literal

from leanloop._imports import ImportPathError

__all__ = ["Binding", "Resolved", "resolve_reference"]

Kind = Literal["function", "class", "value", "import", "module"]


@dataclass(frozen=True, slots=True)
class Binding:
    """What a module's top level binds a name to, as far as its source says."""

    kind: Kind
    name: str | None = None
    """For a function: the tool name it gets (``@tool("x")`` → ``x``, else its own)."""
    literal: str | None = None
    """For a value: the type of a literal (``float``, ``dict``), else ``None``."""
    has_bases: bool = True
    """For a class: whether it names base classes (or a metaclass)."""
    origin: str | None = None
    """Where an imported or aliased name comes from (``subprocess.getoutput``)."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """A reference whose module was found and whose name is bound there."""

    module: str
    binding: Binding | None
    """``None``: the module has no source to read (compiled), or makes names at run time."""
    near: bool
    """The module was found only in the agents file's folder."""


def resolve_reference(ref: str, near: Path | None) -> Resolved:
    """Find the module of ``ref`` (``package.module:name``) and the binding of ``name``.

    Args:
        ref: The import path; for ``mod:Class.attr`` only ``Class`` is looked up.
        near: The agents file's folder, searched after the Python path.

    Raises:
        ImportPathError: With the same one-line messages an import would give: the
            module cannot be found, cannot be read or parsed, or does not bind the name.
    """
    module, sep, attr_path = ref.partition(":")
    if not (sep and module and attr_path):
        msg = f"{ref!r} is not an import path of the form 'package.module:name'"
        raise ImportPathError(msg)
    spec, in_near = _find_spec(module, near)
    attr = attr_path.split(".")[0]
    source = _source(spec)
    if source is None:
        return Resolved(module, None, in_near)
    tree = _parse(source, spec)
    bindings, dynamic = _bindings(tree)
    if attr in bindings:
        return Resolved(module, bindings[attr], in_near)
    locations = spec.submodule_search_locations
    if locations is not None and _path_spec(f"{module}.{attr}", locations) is not None:
        return Resolved(module, Binding("module"), in_near)
    if dynamic and not _declared_without(tree, attr):
        return Resolved(module, None, in_near)
    msg = f"module {module!r} has no attribute {attr_path!r}"
    raise ImportPathError(msg)


def _missing(module: str, name: str, near: Path | None, why: str = "") -> ImportPathError:
    where = f"; looked in {near} and the Python path" if near is not None else ""
    return ImportPathError(
        f"cannot import module {module!r} (No module named {name!r}{why}){where}"
    )


def _path_spec(name: str, locations: Sequence[str]) -> ModuleSpec | None:
    try:
        return importlib.machinery.PathFinder.find_spec(name, list(locations))
    except (ImportError, OSError, ValueError):
        return None


def _top_spec(name: str) -> ModuleSpec | None:
    """The spec of the top-level module ``name`` on the Python path; nothing is imported.

    The path finders cache each folder's listing: a module file deleted since (the folder
    of an agents file read before, now gone) would still be found, and then not read.
    Such a find is made again with fresh listings.
    """
    for attempt in range(2):
        try:  # a name without dots: finders look, nothing is imported
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
        if spec is None or not spec.has_location or origin is None or Path(origin).exists():
            return spec
        if attempt == 0:
            importlib.invalidate_caches()
    return None


def _find_spec(module: str, near: Path | None) -> tuple[ModuleSpec, bool]:
    """The spec of ``module`` and whether it lies in ``near``; no package is imported."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        raise _missing(module, module, near)
    spec: ModuleSpec | None
    spec = _top_spec(parts[0])
    in_near = False
    if spec is None and near is not None:
        spec = _path_spec(parts[0], [str(near)])
        in_near = spec is not None
    if spec is None:
        raise _missing(module, parts[0], near)
    for index in range(1, len(parts)):
        parent, name = ".".join(parts[:index]), ".".join(parts[: index + 1])
        loaded = getattr(sys.modules.get(name), "__spec__", None)
        if isinstance(loaded, ModuleSpec):
            spec = loaded
            continue
        parent_module = sys.modules.get(parent)
        locations = getattr(parent_module, "__path__", None) or spec.submodule_search_locations
        if locations is None:
            raise _missing(module, name, near, f"; {parent!r} is not a package")
        found = _path_spec(name, list(locations))
        if found is None:
            raise _missing(module, name, near)
        spec = found
    return spec, in_near


def _source(spec: ModuleSpec) -> str | None:
    get_source = getattr(spec.loader, "get_source", None)
    if get_source is None:
        return None
    try:
        source = get_source(spec.name)
    except (ImportError, OSError, UnicodeDecodeError, SyntaxError) as exc:
        msg = f"cannot read module {spec.name!r} ({type(exc).__name__}: {exc})"
        raise ImportPathError(" ".join(msg.split())) from exc
    return source if isinstance(source, str) else None


def _declared_without(tree: ast.Module, name: str) -> bool:
    """Whether the module's literal ``__all__`` leaves ``name`` out, with no ``import *``.

    A package that imports its heavy names lazily (a module ``__getattr__``, the names
    bound for type checkers only) still declares them in ``__all__``: a name it leaves
    out is then as missing as in a module without ``__getattr__``.
    """
    declared: object = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                declared = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return False
    if not isinstance(declared, list | tuple):
        return False
    return all(isinstance(n, str) for n in declared) and name not in declared


def _parse(source: str, spec: ModuleSpec) -> ast.Module:
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like
            warnings.simplefilter("ignore")
            return ast.parse(source, filename=spec.origin or spec.name)
    except SyntaxError as exc:
        msg = f"module {spec.name!r} is not valid Python ({exc.msg}, line {exc.lineno})"
        raise ImportPathError(msg) from exc
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        msg = f"module {spec.name!r} cannot be read as Python ({type(exc).__name__})"
        raise ImportPathError(msg) from exc


def _bindings(tree: ast.Module) -> tuple[dict[str, Binding], bool]:
    """Top-level names of ``tree`` (last binding wins) and whether names are made at run time.

    Names made at run time: ``from x import *`` or a module ``__getattr__``.
    """
    found: dict[str, Binding] = {}
    dynamic = False

    def bind(target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            found[target.id] = _value_binding(value, found)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                bind(element.value if isinstance(element, ast.Starred) else element, None)

    def visit(body: Sequence[ast.stmt]) -> None:
        nonlocal dynamic
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[node.name] = Binding("function", name=_tool_name(node))
                dynamic = dynamic or node.name == "__getattr__"
            elif isinstance(node, ast.ClassDef):
                found[node.name] = Binding("class", has_bases=bool(node.bases or node.keywords))
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
                bind(node.target, node.value if isinstance(node, ast.AnnAssign) else None)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.partition(".")[0]
                    found[name] = Binding("import", origin=alias.name if alias.asname else name)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        dynamic = True
                        continue
                    origin = f"{node.module}.{alias.name}" if node.level == 0 else None
                    found[alias.asname or alias.name] = Binding("value", origin=origin)
            else:
                for target in _loop_targets(node):
                    bind(target, None)
                for block in _blocks(node):
                    visit(block)

    visit(tree.body)
    return found, dynamic


def _value_binding(value: ast.expr | None, found: dict[str, Binding]) -> Binding:
    if isinstance(value, ast.Constant) and value.value is not None:
        return Binding("value", literal=type(value.value).__name__)
    literals = {ast.Dict: "dict", ast.List: "list", ast.Set: "set", ast.Tuple: "tuple"}
    for node_type, literal in literals.items():
        if isinstance(value, node_type):
            return Binding("value", literal=literal)
    dotted = _dotted(value) if value is not None else None
    if dotted is None:
        return Binding("value")
    root, _, rest = dotted.partition(".")
    known = found.get(root)
    if known is None or known.origin is None:
        return Binding("value")
    return Binding("value", origin=f"{known.origin}.{rest}" if rest else known.origin)


def _dotted(node: ast.expr) -> str | None:
    """``os.system`` for the expression ``os.system``; ``None`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _tool_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The name a ``@tool("name")`` decorator gives the function, else its own name."""
    for decorator in node.decorator_list:
        if not (isinstance(decorator, ast.Call) and decorator.args):
            continue
        first = decorator.args[0]
        called = _dotted(decorator.func) or ""
        if called.rpartition(".")[2] != "tool" or not isinstance(first, ast.Constant):
            continue
        if isinstance(first.value, str):
            return first.value
    return node.name


def _loop_targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.For | ast.AsyncFor):
        return [node.target]
    if isinstance(node, ast.With | ast.AsyncWith):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in a compound statement that still run at top level."""
    blocks: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list):
            blocks.append(block)
    if isinstance(node, ast.Try | ast.TryStar):
        blocks += [handler.body for handler in node.handlers]
    if isinstance(node, ast.Match):
        blocks += [case.body for case in node.cases]
    return blocks
