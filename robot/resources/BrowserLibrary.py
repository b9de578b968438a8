"""Robot keywords that open a run report's HTML page in a real browser.

The browser is Debian's Chromium (``/usr/bin/chromium``), driven by Playwright for
Python through ``executable_path``: Playwright's own browser download is not used (and
cannot be reached from the project's machines). Nothing here installs it:
``.ci/install-services`` does, once, before the full run (``./dev test --full`` and
``.ci/run`` call it). When Chromium is missing, :func:`ensure_chromium_installed` fails
with what to run; the suite never skips.

The report comes from a real run: :func:`sample_run_report` runs an ``LLMAgent`` around
a scripted chat model with a small window, so that its tool calls meet every fate
(kept, failed, pruned, trimmed, cut, repeat) and a pruning pass falls back.
``tools/screenshot_report.py`` uses the same run and the same browser.
:func:`named_report` is made by hand instead: a report with every field the page can
show (the agent's and the model's names, the times, the result previews, the prefetch
step, a sub-run with its answer), whether or not the loop fills them yet.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, StructuredTool
from robot.api import logger
from robot.libraries.BuiltIn import BuiltIn

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # the suite fails with the install command instead
    sync_playwright = None

sys.path.insert(0, str(Path(__file__).parent))

from leanloop.agent import LLMAgent
from leanloop.cli.htmlreport import write_html
from leanloop.exceptions import RunFailed
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.tools.workspace import workspace_tools

__all__ = [
    "CHROMIUM",
    "SAMPLE_QUESTION",
    "BrowserLibrary",
    "ensure_chromium_installed",
    "failed_run_report",
    "named_report",
    "sample_run_report",
]

CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium, the browser every check here uses."""

SAMPLE_QUESTION = "Why did the nightly job stop, and how many units of <widget> are in stock?"
SAMPLE_ANSWER = (
    "The nightly job stopped on three deadlocks in the batch writer (12:00:20, 12:00:45 "
    "and 12:01:10 in app.log); the inventory lists 42 units of <widget> in stock."
)
SCRIPT_KEY = "<script>alert('x')</script>"
"""A tool argument that a page which forgot to escape would run."""

_SHOWN_TEXT = "e => e instanceof HTMLElement ? e.innerText : e.textContent"
"""The text an element shows (``innerText``; SVG elements have only ``textContent``)."""


# --- Chromium --------------------------------------------------------------------------


MISSING = (
    f"{CHROMIUM} is not installed: the browser checks open the report in Debian's Chromium. "
    "Run .ci/install-services as root (it installs Debian's chromium; ./dev test --full "
    "runs it)."
)


def ensure_chromium_installed() -> str:
    """Check that Debian's Chromium is at ``/usr/bin/chromium``; return its version line.

    Raises:
        AssertionError: When it is missing, with what to run.
    """
    if not _runs(CHROMIUM):
        raise AssertionError(MISSING)
    return _version(CHROMIUM)


def _runs(path: str) -> bool:
    return Path(path).is_file() and os.access(path, os.X_OK)


def _version(path: str) -> str:
    done = subprocess.run(
        [path, "--version"], check=False, capture_output=True, text=True, timeout=60
    )
    return (done.stdout or done.stderr).strip()


# --- a real run, scripted ----------------------------------------------------------------

_LOG_LINES = 90
_DEADLOCKS = (20, 45, 70)


def _write_workspace(folder: Path) -> Path:
    workspace = folder / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    lines = [
        f"12:{i // 60:02d}:{i % 60:02d} INFO worker {i:04d} handled a nightly job; all well"
        for i in range(_LOG_LINES)
    ]
    for number, at in enumerate(_DEADLOCKS, start=1):
        lines[at] = f"12:{at // 60:02d}:{at % 60:02d} ERROR deadlock #{number} in the batch writer"
    (workspace / "app.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = [
        f"db {i:03d} checkpoint written in {10 + i % 7} ms, queue depth {i % 5}" for i in range(60)
    ]
    (workspace / "db.log").write_text("\n".join(db) + "\n", encoding="utf-8")
    return workspace


def _test_tools() -> list[BaseTool]:
    def lookup(key: str) -> str:
        """Look up a product in the inventory table."""
        return f"{key}: 42 units in stock"

    def call_service(reason: str) -> str:
        """Ask the remote order service."""
        raise RuntimeError(f"the order service is down ({reason})")

    def dump(key: str) -> str:
        """Dump every record about key (long)."""
        return "\n".join(f"{key} record {i:03d} " + "x" * 70 for i in range(200))

    def notes(topic: str) -> str:
        """Read the team's notes about topic."""
        return "\n".join(f"{topic} note {i:02d}: " + "n" * 60 for i in range(22))

    return [StructuredTool.from_function(f) for f in (lookup, call_service, dump, notes)]


def _extractor(messages: list[BaseMessage]) -> str:
    """The pruning model: keeps the deadlock lines of app.log, and garbles db.log."""
    text = str(messages[-1].content)
    if "checkpoint" in text:
        return "Sorry, I can only summarise: the database wrote checkpoints."
    kept = [line for line in text.split("\n") if "deadlock" in line]
    return (
        f"[PRUNE_INFO_START]\nkept {len(kept)} lines mentioning deadlock\n[PRUNE_INFO_END]\n"
        "[PRUNE_OUTPUT_START]\n" + "\n".join(kept) + "\n[PRUNE_OUTPUT_END]"
    )


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


def _sample_script() -> list[Any]:
    focus = {"output_prune_context": "the deadlock errors"}
    return [
        {
            "tool_calls": [
                {"name": "lookup", "args": {"key": SCRIPT_KEY}},
                {"name": "call_service", "args": {"reason": "stock check"}},
            ]
        },
        _call("read_file", path="app.log", **focus),
        _call("read_file", path="db.log", **focus),
        _call("notes", topic="shipping"),
        _call("notes", topic="returns"),
        _call("dump", key="orders"),
        _call("lookup", key=SCRIPT_KEY),
        SAMPLE_ANSWER,
    ]


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` on an event loop of its own, in a thread of its own.

    Playwright's sync API keeps an event loop running in the calling thread while a
    browser is open, where ``asyncio.run`` (and any loop) refuses to start.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


_PACE = (1.3, 0.8, 0.9, 1.1, 0.7, 1.0, 0.6, 1.6)
"""Seconds each reply of the paced sample takes (the screenshot's, whose times then read
like a run's instead of all 0.00 s)."""

_PRUNING_PACE = 0.4
"""Seconds each answer of the paced sample's pruning model takes."""


def _paced(replies: Sequence[Any]) -> list[Any]:
    """``replies`` (strings or mappings), each answered after its :data:`_PACE` seconds."""
    items = [{"content": r} if isinstance(r, str) else dict(r) for r in replies]
    return [{**item, "delay": _PACE[i % len(_PACE)]} for i, item in enumerate(items)]


def _paced_extractor(messages: list[BaseMessage]) -> dict[str, Any]:
    return {"content": _extractor(messages), "delay": _PRUNING_PACE}


def _agent(
    folder: Path,
    replies: Sequence[Any],
    *,
    window: int,
    name: str,
    model_name: str | None = None,
    paced: bool = False,
) -> LLMAgent:
    workspace = _write_workspace(folder)
    model = ScriptedChatModel(
        replies=_paced(replies) if paced else list(replies), report_usage=True
    )
    spec = AgentSpec(
        name="reader",
        model=ModelSpec(
            class_path="leanloop.testing:ScriptedChatModel",
            # A model name of its own: the token estimate is learned per model in a process.
            model=model_name or f"{name}-{time.monotonic_ns()}",
            context_window=window,
        ),
        workspace=workspace,
        tools=("read_file",),
        allow_tool_output_pruning=True,
        pruning_min_chars=1_000,
        prefetch_mentioned_files=False,
    )
    extractor = ScriptedChatModel(
        replies=[_paced_extractor if paced else _extractor], repeat_last=True
    )
    tools = [*workspace_tools(workspace)[:1], *_test_tools()]
    return LLMAgent.from_spec(spec, model=model, tools=tools, pruning_model=extractor)


def sample_run_report(
    folder: str | Path, window: int = 4096, *, model: str | None = None, paced: bool = False
) -> dict[str, Any]:
    """Run the scripted sample agent in ``folder``; return its report with ``answer``.

    Eight requests in eight steps; its calls are kept, failed, pruned, trimmed, cut and a
    repeat, and the pruning of db.log falls back to the raw output.

    ``model`` names the model in the report (else a name unique in the process, since the
    token estimate is learned per model name); ``paced`` makes each reply take about a
    second (real time: some 8 s more), so that the page's times are not all zero.
    """
    agent = _agent(
        Path(folder),
        _sample_script(),
        window=int(window),
        name="html-sample",
        model_name=model,
        paced=paced,
    )
    message = _run(agent.ainvoke(SAMPLE_QUESTION))
    report = dict(message.response_metadata["leanloop"])
    report["answer"] = message.text
    return report


def failed_run_report(folder: str | Path, window: int = 4096) -> dict[str, Any]:
    """Run a scripted agent whose model fails at step 3; return the partial report."""
    script = [*_sample_script()[:2], {"raise": "HTTP 503 <upstream> unavailable"}]
    agent = _agent(Path(folder), script, window=int(window), name="html-failed")
    try:
        message = _run(agent.ainvoke(SAMPLE_QUESTION))
    except RunFailed as failure:
        return failure.report.to_dict()
    msg = f"the run was expected to fail but answered {message.text!r}"
    raise AssertionError(msg)


def named_report() -> dict[str, Any]:
    """A report made by hand with every field the page shows (see the module docstring)."""
    app_log = "12:00:20 ERROR deadlock #1 in the batch writer\n12:00:45 ERROR deadlock #2"
    reminder = "You already called read_file with these arguments at step 0."
    sub = {
        "agent": "searcher",
        "model": "qwen2.5-coder:0.5b",
        "stop_reason": "answer",
        "steps": 2,
        "question": "Where are the nightly job's logs?",
        "answer": "In app.log, beside <db.log>.",
        "elapsed_s": 1.8,
        "requests": [{"step": 1, "reported_input_tokens": 700, "seconds": 0.9}],
        "tool_calls": [
            {
                "step": 1,
                "name": "list_files",
                "args": {},
                "chars_raw": 23,
                "chars_out": 23,
                "fate": "kept",
                "seconds": 0.01,
                "result_preview": "app.log\ndb.log\nnotes.md",
            }
        ],
    }
    return {
        "agent": "reader",
        "model": "qwen2.5-coder:1.5b",
        "stop_reason": "answer",
        "steps": 2,
        "window": 4096,
        "question": SAMPLE_QUESTION,
        "answer": SAMPLE_ANSWER,
        "elapsed_s": 6.4,
        "prefetched": ["app.log"],
        "requests": [
            {"step": 1, "reported_input_tokens": 1900, "estimated_tokens": 2000, "seconds": 2.1},
            {"step": 2, "reported_input_tokens": 2600, "estimated_tokens": 2500, "seconds": 1.4},
        ],
        "tool_calls": [
            {
                "step": 0,
                "name": "read_file",
                "args": {"path": "app.log"},
                "chars_raw": 12240,
                "chars_out": len(app_log),
                "pruned": True,
                "fate": "pruned",
                "seconds": 1.1,
                "result_preview": app_log,
            },
            {
                "step": 1,
                "name": "lookup",
                "args": {"key": SCRIPT_KEY},
                "chars_raw": 46,
                "chars_out": 46,
                "fate": "kept",
                "seconds": 0.02,
                "result_preview": f"{SCRIPT_KEY}: 42 units in stock",
            },
            {
                "step": 1,
                "name": "agent:searcher",
                "args": {"task": "find the logs"},
                "chars_raw": 28,
                "chars_out": 28,
                "fate": "kept",
                "seconds": 1.8,
                "result_preview": "In app.log, beside <db.log>.",
                "sub_report": sub,
            },
            {
                "step": 2,
                "name": "read_file",
                "args": {"path": "app.log"},
                "chars_raw": 0,
                "chars_out": len(reminder),
                "repeated": True,
                "fate": "repeat",
                "notes": ["repeat of the call at step 0; not run"],
                "result_preview": reminder,
            },
        ],
    }


# --- the keywords -------------------------------------------------------------------------


class BrowserLibrary:
    """Open report pages in Debian's Chromium and check what the browser rendered."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self._page: Any = None
        self.problems: list[str] = []
        """Console errors, page errors, dialogs, failed and external requests."""

    # -- setup and teardown

    def chromium_should_be_installed(self) -> str:
        """Fail with what to run when Debian's Chromium is missing; return its version."""
        started = time.monotonic()
        version = ensure_chromium_installed()
        _log(f"{version} ready after {time.monotonic() - started:.1f} s", console=True)
        return version

    def start_browser(self) -> None:
        """Launch Chromium through Playwright (headless, no sandbox: the tests run as root)."""
        if sync_playwright is None:
            msg = "Playwright for Python is missing: .venv/bin/pip install playwright"
            raise AssertionError(msg)
        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox"]
        )
        _log(f"Playwright drives Chromium {self._browser.version}", console=True)

    def close_browser(self) -> None:
        """Close the page, the browser and Playwright (safe to call twice)."""
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        if self._playwright is not None:
            self._playwright.stop()
            self._playwright = None
        self._page = None

    # -- reports

    def run_scripted_agent_for_report(self, folder: str, window: int = 4096) -> dict[str, Any]:
        """The report (with ``answer``) of the scripted sample run, in ``folder``."""
        return sample_run_report(folder, int(window))

    def run_failing_scripted_agent_for_report(self, folder: str) -> dict[str, Any]:
        """The partial report of a scripted run whose model fails at step 3."""
        return failed_run_report(folder)

    def named_report(self) -> dict[str, Any]:
        """The hand-made report with names, times, previews, a prefetch and a sub-run."""
        return named_report()

    def write_report_page(self, report: dict[str, Any], path: str) -> str:
        """Render ``report`` to the HTML page ``path``; return the path."""
        return str(write_html(report, path))

    # -- the page

    def open_report_page(self, path: str) -> None:
        """Open the page ``path`` as ``file://`` in a fresh page and wait until it loaded.

        Console errors, page errors, dialogs (an escaped ``<script>`` would raise one),
        failed requests and requests that leave ``file://`` are recorded as problems.
        """
        if self._browser is None:
            self.start_browser()
        if self._page is not None:
            self._page.close()
        self.problems = []
        page = self._browser.new_page(viewport={"width": 1100, "height": 900})
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("dialog", self._on_dialog)
        page.on(
            "requestfailed",
            lambda request: self.problems.append(
                f"request failed: {request.url} ({request.failure})"
            ),
        )
        page.on(
            "request",
            lambda request: (
                None
                if request.url.startswith(("file:", "data:", "about:"))
                else self.problems.append(f"external request: {request.url}")
            ),
        )
        url = Path(path).resolve().as_uri()
        response = page.goto(url, wait_until="load")
        if response is not None and not response.ok:
            msg = f"opening {url} answered {response.status}"
            raise AssertionError(msg)
        self._page = page
        _log(f"opened {url}")

    def _on_console(self, message: Any) -> None:
        if message.type in ("error", "assert"):
            self.problems.append(f"console {message.type}: {message.text}")

    def _on_dialog(self, dialog: Any) -> None:
        self.problems.append(f"dialog ({dialog.type}): {dialog.message}")
        dialog.dismiss()

    def page_title_should_be(self, title: str) -> None:
        """Fail unless the page's title is ``title``."""
        found = self._current().title()
        if found != title:
            msg = f"the page title is {found!r}, not {title!r}"
            raise AssertionError(msg)

    def element_count_should_be(self, selector: str, count: int, visible: bool = True) -> None:
        """Fail unless exactly ``count`` elements match ``selector``, each one visible.

        With ``visible`` false only the count is checked (a horizontal SVG line has an
        empty box, which Playwright does not call visible).
        """
        locator = self._current().locator(selector)
        found = locator.count()
        if found != int(count):
            msg = f"{found} elements match {selector!r}, not {count}"
            raise AssertionError(msg)
        hidden = [i for i in range(found) if visible and not locator.nth(i).is_visible()]
        if hidden:
            msg = f"elements {hidden} of {selector!r} are not visible"
            raise AssertionError(msg)

    def element_should_show_text(self, selector: str, text: str) -> None:
        """Fail unless the first element matching ``selector`` is visible and shows ``text``."""
        locator = self._current().locator(selector).first
        if locator.count() == 0 or not locator.is_visible():
            msg = f"no visible element matches {selector!r}"
            raise AssertionError(msg)
        shown = str(locator.evaluate(_SHOWN_TEXT))
        if text not in shown:
            msg = f"{selector!r} shows {shown[:500]!r}, which lacks {text!r}"
            raise AssertionError(msg)

    def element_should_be_hidden(self, selector: str) -> None:
        """Fail unless an element matches ``selector`` and the first one is not shown."""
        locator = self._current().locator(selector).first
        if locator.count() == 0:
            msg = f"no element matches {selector!r}"
            raise AssertionError(msg)
        if locator.is_visible():
            msg = f"{selector!r} is shown"
            raise AssertionError(msg)

    def click_element(self, selector: str) -> None:
        """Click the first element matching ``selector`` (a ``<summary>`` unfolds its details)."""
        self._current().locator(selector).first.click()

    def element_text(self, selector: str) -> str:
        """The rendered text of the first element matching ``selector``."""
        return str(self._current().locator(selector).first.evaluate(_SHOWN_TEXT))

    def elements_attribute(self, selector: str, attribute: str) -> list[str | None]:
        """``attribute`` of every element matching ``selector``, in document order."""
        locator = self._current().locator(selector)
        return [locator.nth(i).get_attribute(attribute) for i in range(locator.count())]

    def plot_points_should_lie_inside_the_plot(self) -> None:
        """Fail unless every data point's box lies inside the SVG plot's box on screen."""
        page = self._current()
        svg = page.locator("#tokens-plot").bounding_box()
        if svg is None:
            raise AssertionError("the plot #tokens-plot is not rendered")
        points = page.locator("#tokens-plot circle.point")
        for i in range(points.count()):
            box = points.nth(i).bounding_box()
            if box is None or not (
                svg["x"] <= box["x"] <= svg["x"] + svg["width"]
                and svg["y"] <= box["y"] <= svg["y"] + svg["height"]
            ):
                msg = f"point {i + 1} is drawn at {box}, outside the plot {svg}"
                raise AssertionError(msg)

    def browser_should_have_reported_no_problems(self) -> None:
        """Fail when the page logged a console error, threw, opened a dialog or fetched
        anything outside ``file://``."""
        if self.problems:
            raise AssertionError("the browser reported:\n" + "\n".join(self.problems))

    def take_report_screenshot(self, name: str = "html-report.png") -> str:
        """Save a full-page screenshot to Robot's output folder and embed it in the log."""
        folder = Path(BuiltIn().get_variable_value("${OUTPUT DIR}"))
        path = folder / name
        self._current().screenshot(path=str(path), full_page=True)
        _log(f'<img src="{name}" width="800" alt="the report page">', html=True)
        return str(path)

    def _current(self) -> Any:
        if self._page is None:
            raise AssertionError("no report page is open: use Open Report Page first")
        return self._page


def screenshot_html(page_path: str | Path, image: str | Path, *, width: int = 1100) -> Path:
    """Open ``page_path`` in Debian's Chromium and save a full-page PNG to ``image``.

    Raises ``AssertionError`` when the page logged errors or reached outside ``file://``.
    """
    ensure_chromium_installed()
    library = BrowserLibrary()
    try:
        library.start_browser()
        library.open_report_page(str(page_path))
        library._current().set_viewport_size({"width": width, "height": 900})
        library.browser_should_have_reported_no_problems()
        target = Path(image)
        target.parent.mkdir(parents=True, exist_ok=True)
        library._current().screenshot(path=str(target), full_page=True)
        return target
    finally:
        library.close_browser()


def _log(message: str, *, console: bool = False, html: bool = False) -> None:
    logger.info(message, html=html, also_console=console)
