"""The context-efficiency suite: leanloop and LangChain's context strategies, side by side.

Run it with ``python -m benchmarks.context_suite`` (``nox -s context_suite``). It writes a
seeded workspace of large files, runs a scripted reader through the same tasks under six
context strategies at several windows, and reports what each strategy kept (correct
answers), what it cost (prompt tokens), whether it stayed inside the window, and its own
time per step. ``--real`` repeats a small part against the local llama-server.

ASV imports every module under ``benchmarks/`` to discover benchmarks: the modules here
define no ``time_*``/``mem_*``/``track_*`` names and do nothing when imported.
"""

from __future__ import annotations

__all__: list[str] = []
