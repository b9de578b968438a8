"""Parse YAML safely and remember where every key and value was written.

PyYAML's constructors forget positions, so the text is composed into a node tree
(safe tags only) and walked here: the result is plain data plus a map from each key
path to the marks of its key and its value. Duplicate keys, unsupported tags, alias
bombs and values nested too deeply are reported as located problems instead of being
silently accepted (or, for the nesting, a ``RecursionError`` with no position).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["KeyPath", "Mark", "Positions", "YamlProblem", "parse_yaml"]

KeyPath = tuple[str | int, ...]
"""Where a value sits in the document: mapping keys and list indexes."""

_MAX_NODES = 100_000
"""Aliases may repeat a subtree; beyond this many values the file is refused."""

_MAX_DEPTH = 100
"""Mappings and lists nested deeper than this are refused (a real file nests about 8).

Composing, walking and every later check recurse once per level; far below Python's
recursion limit, the refusal is a located problem instead of a ``RecursionError``."""

_DEPTH_PATH_PARTS = 4
"""How much of the key path a depth problem names (``agents.NAME.model.kwargs``): the
rest is the same index or key repeated, and the line and column say where it starts."""

_TOO_DEEP = f"nested too deeply (more than {_MAX_DEPTH} levels)"

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


@dataclass(frozen=True, slots=True)
class Mark:
    """A 1-based line and column in the source text."""

    line: int
    column: int

    @classmethod
    def of(cls, mark: yaml.Mark) -> Mark:
        """Convert PyYAML's 0-based mark."""
        return cls(mark.line + 1, mark.column + 1)


@dataclass(slots=True)
class Positions:
    """Marks of the values and keys of a document, by key path (empty for dict input)."""

    values: dict[KeyPath, Mark] = field(default_factory=dict)
    keys: dict[KeyPath, Mark] = field(default_factory=dict)

    def value(self, path: KeyPath) -> Mark | None:
        """Where the value at ``path`` starts (its key when the value has no mark)."""
        return self.values.get(path) or self.keys.get(path)

    def key(self, path: KeyPath) -> Mark | None:
        """Where the key of ``path`` is written (its value for list items and the root)."""
        return self.keys.get(path) or self.values.get(path)


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """A problem found while reading the text: where, and what."""

    path: KeyPath
    mark: Mark | None
    message: str


class _ParseError(Exception):
    """A problem that stops the walk (bad tag, alias bomb): reported alone."""

    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class _Loader(yaml.SafeLoader):
    """Safe loading, without timestamps: the format has no dates, so they stay strings.

    PyYAML composes nested collections recursively, so the composer counts the levels
    and refuses the first one past :data:`_MAX_DEPTH`, where its opening bracket or
    first item is written.
    """

    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML's own class-level table
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._path: list[str | int] = []

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        nests = self.check_event(yaml.MappingStartEvent, yaml.SequenceStartEvent)
        # ``index`` is an item's index in a list, the key's node for a mapping's value
        # and None for a key (PyYAML's stubs say int): enough to name where we are. A
        # key that is itself a collection has no name but still counts as a level.
        where: object = index
        if isinstance(where, ScalarNode):
            where = where.value
        part = where if isinstance(where, (str, int)) and parent is not None else None
        if nests and self._depth >= _MAX_DEPTH:
            event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]
            at = event.start_mark  # typed as PyYAML's or libyaml's mark: both have these
            mark = Mark(at.line + 1, at.column + 1) if at else None
            path = self._path if part is None else [*self._path, part]
            raise _ParseError(YamlProblem(tuple(path[:_DEPTH_PATH_PARTS]), mark, _TOO_DEEP))
        level = 1 if nests else 0
        self._depth += level
        if part is not None:
            self._path.append(part)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= level
            if part is not None:
                self._path.pop()


def parse_yaml(text: str) -> tuple[Any, Positions, list[YamlProblem]]:
    """Parse one YAML document into plain data, its positions and any key problems.

    Args:
        text: The YAML text.

    Returns:
        The data (``None`` for an empty document), the positions of its keys and
        values, and the problems found (duplicate or non-string keys).

    Raises:
        yaml.MarkedYAMLError: For YAML syntax errors; the caller locates them.
    """
    loader = _Loader(text)
    try:
        walker = _Walker(loader)
        try:
            root = loader.get_single_node()
        except _ParseError as exc:
            return None, walker.positions, [exc.problem]
        if root is None:
            return None, walker.positions, []
        walker.positions.values[()] = Mark.of(root.start_mark)
        try:
            data = walker.build(root, ())
        except _ParseError as exc:
            return None, walker.positions, [exc.problem]
        return data, walker.positions, walker.problems
    finally:
        loader.dispose()


class _Walker:
    """Turns a composed node tree into data, recording marks on the way."""

    def __init__(self, loader: _Loader) -> None:
        self.loader = loader
        self.positions = Positions()
        self.problems: list[YamlProblem] = []
        self._count = 0
        self._active: set[int] = set()

    def build(self, node: Node, path: KeyPath) -> Any:
        self._count += 1
        if self._count > _MAX_NODES:
            # Blame the top-level entry being expanded: its aliases are the bomb.
            msg = f"too large (more than {_MAX_NODES:,} values after expanding aliases)"
            raise _ParseError(YamlProblem(path[:1], None, msg))
        if id(node) in self._active:
            # The alias itself has no mark of its own in the node tree; its key has.
            msg = "an alias refers to a value that contains it"
            raise _ParseError(YamlProblem(path, self.positions.keys.get(path), msg))
        if isinstance(node, (MappingNode, SequenceNode)) and len(path) >= _MAX_DEPTH:
            # The composer refuses deep text, so this is aliases nesting each other: name
            # the entry that uses them and where its value is written.
            shown = path[:_DEPTH_PATH_PARTS]
            raise _ParseError(YamlProblem(shown, self.positions.value(shown), _TOO_DEEP))
        self._active.add(id(node))
        try:
            return self._build(node, path)
        finally:
            self._active.discard(id(node))

    def _build(self, node: Node, path: KeyPath) -> Any:
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if isinstance(node, SequenceNode) and node.tag == _SEQ_TAG:
            return [self._child(item, (*path, index)) for index, item in enumerate(node.value)]
        if isinstance(node, MappingNode) and node.tag == _MAP_TAG:
            return self._mapping(node, path)
        msg = f"unsupported YAML tag {_short_tag(node.tag)!r}"
        raise _ParseError(YamlProblem(path, Mark.of(node.start_mark), msg))

    def _scalar(self, node: ScalarNode, path: KeyPath) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError:
            raise  # located by the caller
        except (ValueError, LookupError, AttributeError, TypeError, OverflowError):
            # PyYAML's constructors for explicit tags trust the text (`!!int abc`,
            # `!!bool maybe`, `!!timestamp ''`) and fail with plain Python errors.
            shown = node.value if len(node.value) <= 40 else f"{node.value[:40]}…"
            msg = f"{shown!r} is not a valid {_short_tag(node.tag)!r} value"
            raise _ParseError(YamlProblem(path, Mark.of(node.start_mark), msg)) from None

    def _child(self, node: Node, path: KeyPath) -> Any:
        self.positions.values[path] = Mark.of(node.start_mark)
        return self.build(node, path)

    def _mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        pairs = [(k, v) for k, v in node.value if k.tag != _MERGE_TAG]
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                for source in _merge_sources(value_node, path):
                    merged.update(self.build(source, path))
        # Keys written in the mapping itself win over merged ones (YAML's merge rule),
        # so they are walked last and their marks overwrite the merged ones.
        own: dict[str, Any] = {}
        for key_node, value_node in pairs:
            key = self._key(key_node, path)
            if key is None:
                continue
            if key in own:
                msg = f"duplicate key {key!r} (it is already set above)"
                self.problems.append(YamlProblem((*path, key), Mark.of(key_node.start_mark), msg))
                continue
            self.positions.keys[(*path, key)] = Mark.of(key_node.start_mark)
            own[key] = self._child(value_node, (*path, key))
        return {**merged, **own}

    def _key(self, node: Node, path: KeyPath) -> str | None:
        if isinstance(node, ScalarNode):
            # The text as written: `on:` or `1:` stay the names the user typed.
            return str(node.value)
        self.problems.append(
            YamlProblem(path, Mark.of(node.start_mark), "a key must be plain text")
        )
        return None


def _merge_sources(node: Node, path: KeyPath) -> Iterator[MappingNode]:
    """The mappings a ``<<`` key merges, earliest first so earlier ones win."""
    if isinstance(node, MappingNode):
        yield node
        return
    if isinstance(node, SequenceNode) and all(isinstance(n, MappingNode) for n in node.value):
        yield from reversed(node.value)
        return
    msg = "'<<' must merge a mapping or a list of mappings"
    raise _ParseError(YamlProblem(path, Mark.of(node.start_mark), msg))


def _short_tag(tag: str) -> str:
    """``!!python/object`` rather than ``tag:yaml.org,2002:python/object``."""
    prefix = "tag:yaml.org,2002:"
    return "!!" + tag.removeprefix(prefix) if tag.startswith(prefix) else tag
