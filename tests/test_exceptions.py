"""The exception tree drawn in ``leanloop.exceptions``' docstring is the real one, every
leaf of it is raised somewhere, and every error a user may catch is exported from
``leanloop`` (issue 27)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import textwrap
from pathlib import Path

import pytest

import leanloop
from leanloop import exceptions
from leanloop.loop.driver import CutStreamError

SOURCE = Path(leanloop.__file__).resolve().parent

# One line of the drawing: the tree's guide characters, a class name, then the other
# bases it keeps, in brackets (``RunFailed [ModelError]``).
_NODE = re.compile(r"^(?P<guide>[ │├└─]*)(?P<name>[A-Z]\w*)(?: \[(?P<also>[\w, ]+)\])?")
_INDENT = 4  # each level of the drawing is four characters deeper
_ROOTS = (exceptions.LeanloopError, exceptions.LeanloopSignal)

# The one leaf no code raises, and why (the module docstring says it too): a run that
# overflows ends with an answer, not an error; the class is what ``Overflow.to_error``
# builds for callers and what a model wrapper raises to be recognised.
_BUILT_NOT_RAISED = {"ContextOverflowError": "return ContextOverflowError("}


def _drawing() -> list[tuple[int, str, list[str]]]:
    """Each line of the drawing as (depth, class name, the other bases drawn)."""
    doc = inspect.cleandoc(exceptions.__doc__ or "")
    # The literal block after "::", up to the next blank line.
    block = textwrap.dedent(doc.split("::", 1)[1].split("\n\n")[1])
    lines = []
    for line in block.splitlines():
        node = _NODE.match(line)
        assert node is not None, f"not a line of the tree: {line!r}"
        depth, rest = divmod(len(node["guide"]), _INDENT)
        assert rest == 0, f"misaligned: {line!r}"
        also = [name.strip() for name in (node["also"] or "").split(",") if name.strip()]
        lines.append((depth, node["name"], also))
    return lines


def _drawn_tree() -> dict[str, str | None]:
    """Each class the docstring draws → the class drawn as its parent (``None``: a root)."""
    parents: dict[str, str | None] = {}
    path: list[str] = []
    for depth, name, _ in _drawing():
        assert depth <= len(path), f"skips a level: {name}"
        del path[depth:]
        assert name not in parents, f"drawn twice: {name}"
        parents[name] = path[-1] if path else None
        path.append(name)
    return parents


def _tree_classes() -> dict[str, type[BaseException]]:
    """Every public class under either root, in any module of ``leanloop``."""
    for module in pkgutil.walk_packages([str(SOURCE)], prefix="leanloop."):
        if module.name.rpartition(".")[2] != "__main__":
            importlib.import_module(module.name)
    found: dict[str, type[BaseException]] = {}
    pending: list[type[BaseException]] = list(_ROOTS)
    while pending:
        cls = pending.pop()
        if cls.__name__.startswith("_"):
            continue  # private control flow (``_StillTooLarge``) is no part of the tree
        assert found.get(cls.__name__, cls) is cls, f"two classes named {cls.__name__}"
        found[cls.__name__] = cls
        pending.extend(cls.__subclasses__())
    return found


def _source_text() -> str:
    return "\n".join(path.read_text("utf-8") for path in sorted(SOURCE.rglob("*.py")))


def test_the_docstring_draws_every_class_of_the_two_trees() -> None:
    drawn, defined = set(_drawn_tree()), set(_tree_classes())

    assert drawn == defined, f"not drawn: {defined - drawn}, drawn but absent: {drawn - defined}"


def test_each_drawn_class_sits_under_its_real_parent() -> None:
    classes = _tree_classes()

    for name, parent in _drawn_tree().items():
        cls = classes[name]
        if parent is None:
            assert cls in _ROOTS, f"{name} drawn as a root"
        else:
            first = cls.__bases__[0]
            assert first is classes[parent], f"{name} is drawn under {parent}, derives from {first}"


def test_each_other_base_is_drawn_in_brackets() -> None:
    classes = _tree_classes()

    for _, name, also in _drawing():
        others = [base.__name__ for base in classes[name].__bases__[1:]]
        assert others == also, f"{name}: drawn with {also}, derives also from {others}"


def test_signals_are_no_errors() -> None:
    # ``except LeanloopError`` (the CLI's, the server's) must never swallow a signal.
    assert not issubclass(exceptions.LeanloopSignal, exceptions.LeanloopError)
    assert not issubclass(exceptions.TransientToolError, exceptions.LeanloopError)


@pytest.mark.parametrize(
    ("cls", "also"),
    [
        (exceptions.RunFailed, exceptions.ModelError),
        (exceptions.StructuredOutputError, exceptions.AgentRunError),
        (exceptions.InvalidArgument, ValueError),
        (exceptions.InvalidArgumentType, TypeError),
        (CutStreamError, exceptions.ModelError),
        (CutStreamError, RuntimeError),
    ],
)
def test_a_class_that_joined_the_tree_is_still_caught_as_before(
    cls: type[BaseException], also: type[BaseException]
) -> None:
    assert issubclass(cls, also)


def test_the_errors_that_joined_the_tree_are_still_value_errors() -> None:
    classes = _tree_classes()

    for name in ("ImportPathError", "GlobError", "PruneFormatError"):
        assert issubclass(classes[name], ValueError), name


def test_every_error_leaf_is_raised_somewhere_in_the_source() -> None:
    # ``raise X(`` or ``return X(`` (a builder whose result its caller raises, such as the
    # loop's ``_failed``), anywhere in src/leanloop.
    source = _source_text()
    classes = _tree_classes()
    leaves = [
        name
        for name, cls in classes.items()
        if issubclass(cls, exceptions.LeanloopError) and not cls.__subclasses__()
    ]

    for name in leaves:
        if name in _BUILT_NOT_RAISED:
            assert _BUILT_NOT_RAISED[name] in source, name
            continue
        assert re.search(rf"\b(raise|return) {name}\(", source), f"{name} is never raised"


def test_every_signal_leaf_is_acted_on_somewhere_in_the_source() -> None:
    # A signal is raised by user code (a tool) and read by leanloop: an ``except`` or a
    # retry predicate names it.
    source = _source_text()
    classes = _tree_classes()
    signals = [
        name
        for name, cls in classes.items()
        if issubclass(cls, exceptions.LeanloopSignal) and not cls.__subclasses__()
    ]

    assert signals, "no signal drawn"
    for name in signals:
        read = rf"(except \(?|retry_if_exception_type\()[\w, ]*\b{name}\b"
        assert re.search(read, source), f"{name} is never acted on"


def test_every_public_error_is_exported_from_leanloop() -> None:
    # Session errors, typed-answer errors and TransientToolError (which tool authors
    # raise) included: a user catches them as ``leanloop.X``.
    public = set(exceptions.__all__)

    assert public <= set(leanloop.__all__), f"not exported: {public - set(leanloop.__all__)}"
    for name in public:
        assert getattr(leanloop, name) is getattr(exceptions, name), name
