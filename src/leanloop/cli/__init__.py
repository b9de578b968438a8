"""The ``leanloop`` command: ``command`` (the parser and each subcommand), ``progress``
(the per-step lines), ``checkmodels`` (``validate --check-models``), ``htmlreport`` (the
page of a run), ``local`` (the ``local`` commands) and ``demo`` (``leanloop demo``).

Importing this package stays cheap (no LangChain): the heavy modules are imported by the
subcommand that needs them.
"""

from __future__ import annotations

from leanloop.cli.command import main

__all__ = ["main"]
