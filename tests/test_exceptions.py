"""The exception tree drawn in ``leanloop.exceptions``' docstring is the real one, and
every error a user may catch is exported from ``leanloop`` (issue 27)."""

from __future__ import annotations

import inspect
import re
import textwrap

import leanloop
from leanloop import exceptions

# One line of the drawing: the tree's guide characters, then a class name.
_NODE = re.compile(r"^(?P<guide>[ │├└─]*)(?P<name>[A-Z]\w*)")
_INDENT = 4  # each level of the drawing is four characters deeper


def _drawn_tree() -> dict[str, str | None]:
    """Each class the docstring draws → the class drawn as its parent (``None``: the root)."""
    doc = inspect.cleandoc(exceptions.__doc__ or "")
    # The literal block after "::", up to the next blank line.
    drawing = textwrap.dedent(doc.split("::", 1)[1].split("\n\n")[1])
    parents: dict[str, str | None] = {}
    path: list[str] = []
    for line in drawing.splitlines():
        node = _NODE.match(line)
        assert node is not None, f"not a line of the tree: {line!r}"
        depth, rest = divmod(len(node["guide"]), _INDENT)
        assert rest == 0, f"misaligned: {line!r}"
        assert depth <= len(path), f"skips a level: {line!r}"
        del path[depth:]
        assert node["name"] not in parents, f"drawn twice: {node['name']}"
        parents[node["name"]] = path[-1] if path else None
        path.append(node["name"])
    return parents


def _error_classes() -> dict[str, type[BaseException]]:
    """The exception classes ``leanloop.exceptions`` defines."""
    return {
        name: value
        for name, value in vars(exceptions).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and value.__module__ == exceptions.__name__
    }


def test_the_docstring_draws_every_exception_class_of_the_module() -> None:
    drawn, defined = set(_drawn_tree()), set(_error_classes())

    assert drawn == defined, f"not drawn: {defined - drawn}, drawn but absent: {drawn - defined}"


def test_each_drawn_class_sits_under_its_real_parent() -> None:
    classes = _error_classes()

    for name, parent in _drawn_tree().items():
        base = classes[name].__base__
        if parent is None:
            assert classes[name] is exceptions.LeanloopError, f"{name} drawn as the root"
        else:
            assert base is classes[parent], f"{name} is drawn under {parent}, derives from {base}"


def test_every_exception_is_a_leanloop_error() -> None:
    for name, cls in _error_classes().items():
        assert issubclass(cls, exceptions.LeanloopError), name


def test_every_public_error_is_exported_from_leanloop() -> None:
    # Session errors, typed-answer errors and TransientToolError (which tool authors
    # raise) included: a user catches them as ``leanloop.X``.
    public = set(exceptions.__all__)

    assert public <= set(leanloop.__all__), f"not exported: {public - set(leanloop.__all__)}"
    for name in public:
        assert getattr(leanloop, name) is getattr(exceptions, name), name
