"""Where the embedded local model keeps its files.

Everything lives under one cache folder, ``$LEANLOOP_CACHE`` or ``~/.cache/leanloop``::

    engine                                              the engine the last setup chose
    setup.lock                                          held while `leanloop local setup` runs
    bin/llama-server                                    the source build (``setup --build``)
    models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf      the default model, from PyPI wheels
    models/<file>.gguf                                  other catalog models (``--model``)
    models/<file>.gguf.verified                         the checked SHA-256, size and mtime
    run/<port>.pid                                      one PID file per running server
    run/<port>.log                                      that server's stdout and stderr
    run/<port>.lock                                     held while a server starts or stops
    build/                                              the source build (removed once it worked)
    logs/mcp/<server>.log                               a stdio MCP server's stderr (every start)

CI and the Robot suites rely on this layout; keep it stable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CACHE_ENV",
    "DEFAULT_CTX_SIZE",
    "DEFAULT_PORT",
    "MAX_CTX_SIZE",
    "MIN_CTX_SIZE",
    "MODEL_ALIAS",
    "MODEL_FILENAME",
    "CachePaths",
    "cache_paths",
]

CACHE_ENV = "LEANLOOP_CACHE"
"""The environment variable that moves the cache folder."""
MODEL_FILENAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
"""The default model's file (the catalog in ``model.py`` names the others)."""
MODEL_ALIAS = "local-test"
"""The model name the server answers to (``--alias``); the example YAML uses it."""
DEFAULT_PORT = 8765
"""Not 8080: that port is the default of llama.cpp and of half the web servers around."""
DEFAULT_CTX_SIZE = 8192
"""Tokens; below 8,192 tool results crowd the window (the budget logic warns about it)."""
MIN_CTX_SIZE = 256
"""The smallest ``--ctx-size`` accepted: below it not even the system prompt fits."""
MAX_CTX_SIZE = 131_072
"""The largest ``--ctx-size`` for a model file the catalog does not know (catalog models
are bounded by their trained context length, ``ModelPin.context_length``)."""


@dataclass(frozen=True, slots=True)
class CachePaths:
    """The files of the local model under one cache root."""

    root: Path

    @property
    def engine_file(self) -> Path:
        """The engine the last ``leanloop local setup`` chose (``prebuilt`` or ``build``)."""
        return self.root / "engine"

    @property
    def setup_lock(self) -> Path:
        """The lock held while ``leanloop local setup`` runs; it holds the holder's pid."""
        return self.root / "setup.lock"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def server_binary(self) -> Path:
        return self.bin_dir / "llama-server"

    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    @property
    def model_file(self) -> Path:
        """The default model's file."""
        return self.models_dir / MODEL_FILENAME

    def model_path(self, filename: str) -> Path:
        """The cached file of a model named ``filename`` (a catalog pin's ``filename``)."""
        return self.models_dir / filename

    @property
    def run_dir(self) -> Path:
        return self.root / "run"

    @property
    def build_dir(self) -> Path:
        return self.root / "build"

    def pid_file(self, port: int) -> Path:
        """The PID file of the server on ``port``."""
        return self.run_dir / f"{port}.pid"

    def lock_file(self, port: int) -> Path:
        """The lock held while a server on ``port`` is started or stopped."""
        return self.run_dir / f"{port}.lock"

    def log_file(self, port: int) -> Path:
        """The log file of the server on ``port``."""
        return self.run_dir / f"{port}.log"

    def mcp_log(self, server: str) -> Path:
        """Where the stdio MCP server named ``server`` writes its stderr (every start of it).

        A character other than a letter, a digit, ``_`` or ``-`` becomes ``_`` (an agents
        file's names have none; a server built in Python may).
        """
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", server) or "_"
        return self.root / "logs" / "mcp" / f"{safe}.log"


def cache_paths(env: Mapping[str, str] | None = None) -> CachePaths:
    """Resolve the cache folder from ``LEANLOOP_CACHE``, else ``~/.cache/leanloop``.

    Args:
        env: The environment to read; ``os.environ`` when omitted.

    Returns:
        The cache layout (nothing is created).
    """
    source = os.environ if env is None else env
    configured = source.get(CACHE_ENV, "").strip()
    root = Path(configured).expanduser() if configured else Path.home() / ".cache" / "leanloop"
    return CachePaths(root.absolute())
