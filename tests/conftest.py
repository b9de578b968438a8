"""What every pytest test gets: the logging setup of the process, as it was before it.

Tests that call the CLI in-process (``leanloop.cli.main``) set up logging as the command
does (``basicConfig(force=True)``, the ``leanloop`` logger's level for ``-q``/``-v``); left
in place, that would decide which records a later test's ``caplog`` sees.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    root = logging.getLogger()
    ours = logging.getLogger("leanloop")
    saved = (list(root.handlers), root.level, ours.level, ours.disabled)
    yield
    for handler in list(root.handlers):
        if handler not in saved[0]:
            root.removeHandler(handler)
    for handler in saved[0]:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(saved[1])
    ours.setLevel(saved[2])
    ours.disabled = saved[3]
