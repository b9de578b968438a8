"""Names of the built-in workspace tools, and the modules whose callables are never tools.

Kept apart (and free of imports) so that the spec can check names cheaply.
"""

from __future__ import annotations

import sys

__all__ = ["BUILTIN_TOOLS", "is_standard_module", "standard_callable_refusal"]

BUILTIN_TOOLS: tuple[str, ...] = ("read_file", "search", "list_files")

_STANDARD = frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names)


def is_standard_module(module: str) -> bool:
    """Whether ``module`` (dotted) belongs to Python's standard library or its builtins."""
    return module.partition(".")[0] in _STANDARD


def standard_callable_refusal(
    ref: str, origin: str | None = None, *, shown: str | None = None
) -> str | None:
    """Why ``ref`` may not be a tool, or ``None``: a standard-library or builtin callable.

    ``os:system`` or ``subprocess:getoutput`` would hand the model a shell; no callable
    of the standard library is a tool, so every one is refused by its name.

    Args:
        ref: The tool reference ``package.module:name``.
        origin: Where the object really comes from (``subprocess.getoutput`` for a name
            that a module of the user's imported from the standard library), if known.
        shown: How to show ``ref`` in the message (``***`` for a value from the
            environment, which then names nothing else either).
    """
    module = ref.partition(":")[0]
    if is_standard_module(module):
        where = f" (module {module!r})"
    elif origin is not None and is_standard_module(origin):
        where = f" (it is {origin})"
    else:
        return None
    if shown is not None and shown != repr(ref):
        where = ""
    return (
        f"{repr(ref) if shown is None else shown} is a standard-library callable{where}, "
        "not a tool; a tool is a LangChain tool or a function of your own module"
    )
