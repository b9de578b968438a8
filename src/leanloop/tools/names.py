"""Names of the built-in workspace tools, and the modules whose callables are never tools.

They live in :mod:`leanloop.spec.toolrefs`, where the spec checks names without importing
the tool runtime; re-exported here for the tools (and ``leanloop.tools.BUILTIN_TOOLS``).
"""

from __future__ import annotations

from leanloop.spec.toolrefs import BUILTIN_TOOLS, is_standard_module, standard_callable_refusal

__all__ = ["BUILTIN_TOOLS", "is_standard_module", "standard_callable_refusal"]
