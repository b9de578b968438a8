"""No module of leanloop imports itself back, through any chain (issue 27).

The graph is import-linter's (grimp), built as ``lint-imports`` builds it: imports inside
functions count (a circle closes as soon as both run), imports under ``TYPE_CHECKING`` do
not (they never run). The layer contracts in ``pyproject.toml`` keep the packages in
order; this keeps every module, inside one package too, out of any circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import grimp

_ROOT = "leanloop"


def _find_cycle(
    modules: Iterable[str], imports: Callable[[str], Iterable[str]]
) -> list[str] | None:
    """One import circle, as ``[a, b, ..., a]``, or ``None`` when there is none.

    A depth-first search without recursion (a long chain must not meet Python's limit): a
    module met again while it is still on the current path closes a circle.

    Args:
        modules: Every module of the graph.
        imports: The modules one module imports directly.
    """
    done: set[str] = set()
    for start in sorted(modules):
        if start in done:
            continue
        path = [start]
        pending = [iter(sorted(imports(start)))]
        while pending:
            following = next(pending[-1], None)
            if following is None:
                pending.pop()
                done.add(path.pop())
            elif following in path:
                return [*path[path.index(following) :], following]
            elif following not in done:
                path.append(following)
                pending.append(iter(sorted(imports(following))))
    return None


def test_the_search_finds_a_circle_and_passes_a_tree() -> None:
    circle = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}
    tree = {"a": ["b", "c"], "b": ["c"], "c": [], "d": ["a", "c"]}

    assert _find_cycle(circle, circle.__getitem__) == ["a", "b", "c", "a"]
    assert _find_cycle(tree, tree.__getitem__) is None


def test_no_module_of_leanloop_is_in_an_import_circle() -> None:
    graph = grimp.build_graph(_ROOT, exclude_type_checking_imports=True)

    assert len(graph.modules) > 100, "the graph is not the whole of leanloop"
    circle = _find_cycle(graph.modules, graph.find_modules_directly_imported_by)
    assert circle is None, "an import circle: " + " -> ".join(circle or ())
