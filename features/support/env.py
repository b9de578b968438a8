"""Environment variables a scenario sets, restored when it ends."""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["set_env"]


def set_env(
    name: str, value: str | None, *, on_cleanup: Callable[[Callable[[], None]], None]
) -> None:
    """Set (or, with ``None``, remove) ``name``; ``on_cleanup`` receives the restore step."""
    previous = os.environ.get(name)

    def restore() -> None:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous

    on_cleanup(restore)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
