"""A small tree of an HTML page, built with the standard library's ``html.parser``.

The checks read what a browser would show: the elements, their classes and attributes,
and their text with character references resolved; the builder notes every nesting error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["Node", "TreeBuilder", "parse_page"]

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}


@dataclass
class Node:
    """One element of the page: its tag, attributes, children and text, in order."""

    tag: str
    attrs: dict[str, str]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    @property
    def text(self) -> str:
        """The text inside the element, with its descendants', as one string."""
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def walk(self) -> Iterator[Node]:
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.walk()

    def find_all(self, selector: str) -> list[Node]:
        """Elements matching ``tag``, ``.class``, ``#id`` or ``tag.class`` (one step only)."""
        match = re.fullmatch(r"(?P<tag>\w+)?(?:\.(?P<cls>[\w-]+))?(?:#(?P<id>[\w-]+))?", selector)
        assert match is not None, f"unsupported selector {selector!r}"
        tag, cls, ident = match["tag"], match["cls"], match["id"]
        return [
            node
            for node in self.walk()
            if (tag is None or node.tag == tag)
            and (cls is None or cls in node.classes)
            and (ident is None or node.attrs.get("id") == ident)
        ]

    def one(self, selector: str) -> Node:
        found = self.find_all(selector)
        assert len(found) == 1, f"{len(found)} elements match {selector!r}, not 1"
        return found[0]


class TreeBuilder(HTMLParser):
    """Builds a :class:`Node` tree and notes every nesting error it meets."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.current = self.root
        self.problems: list[str] = []
        self.doctype: str | None = None

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, parent=self.current)
        self.current.children.append(node)
        if tag not in _VOID:
            self.current = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.current))

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if self.current.tag != tag:
            self.problems.append(f"</{tag}> closes <{self.current.tag}> at {self.getpos()}")
            return
        assert self.current.parent is not None
        self.current = self.current.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse_page(text: str) -> TreeBuilder:
    """The tree of ``text`` (``.root``) and its nesting problems (``.problems``)."""
    builder = TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder
