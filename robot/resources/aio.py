"""One event loop for every Robot keyword that awaits something.

``langchain_openai`` caches its async HTTP client per base URL for the whole process;
a client whose connections were opened on one event loop fails on the next
(``Event loop is closed``). So the keyword libraries share this one loop instead of
calling ``asyncio.run`` per keyword.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_LOOP = asyncio.new_event_loop()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on the shared loop."""
    return _LOOP.run_until_complete(coro)
