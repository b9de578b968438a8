"""What every pytest test gets: the logging setup of the process, as it was before it.

Tests that call the CLI in-process (``leanloop.cli.main``) set up logging as the command
does (``basicConfig(force=True)``, the ``leanloop`` logger's level for ``-q``/``-v``); left
in place, that would decide which records a later test's ``caplog`` sees. The same guard
the Behave steps use around an in-process CLI call (``features/support``, on pytest's path).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.cli_inprocess import logging_kept


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    with logging_kept():
        yield
