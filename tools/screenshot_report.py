"""Render a representative run report as HTML and save its screenshot for the docs.

The report comes from a real run of an ``LLMAgent`` around a scripted chat model (no
server): eight requests in a 4,096-token window, with tool calls that end kept, failed,
pruned, trimmed, cut and as a repeat, and one pruning pass that falls back. The page is
opened in Debian's Chromium through Playwright, the same way ``robot/html_report.robot``
opens it (``robot/resources/BrowserLibrary.py``). Chromium is installed beforehand by
``.ci/install-services`` (as root); without it the script says so and exits 1::

    .venv/bin/python tools/screenshot_report.py                 # docs/images/run-report.png
    .venv/bin/python tools/screenshot_report.py --html run.html --out /tmp/run.png
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "robot" / "resources"))

from BrowserLibrary import ensure_chromium_installed, sample_run_report, screenshot_html

from leanloop.cli.htmlreport import write_html

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_OUT = ROOT / "docs" / "images" / "run-report.png"

SAMPLE_MODEL = "scripted-model"
"""The model name the page shows: the sample's model is a script, and says so."""


def main(argv: list[str] | None = None) -> int:
    """Build the sample report, render it, and save the page's screenshot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the PNG to write")
    parser.add_argument("--html", type=Path, help="also keep the HTML page here")
    parser.add_argument("--width", type=int, default=1100, help="the browser's width in px")
    args = parser.parse_args(argv)
    # The small window and the failing tool are on purpose: keep their warnings quiet.
    logging.getLogger("leanloop").setLevel(logging.ERROR)
    started = time.monotonic()
    try:
        print(ensure_chromium_installed())
    except AssertionError as missing:
        print(f"screenshot_report: {missing}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="leanloop-screenshot-") as folder:
        # A plain model name and replies that take time: the page as a real run shows it.
        report = sample_run_report(Path(folder) / "run", model=SAMPLE_MODEL, paced=True)
        page = write_html(report, args.html or Path(folder) / "report.html")
        image = screenshot_html(page, args.out, width=args.width)
    print(
        f"{len(report['requests'])} requests, {len(report['tool_calls'])} tool calls: "
        f"wrote {image} in {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
