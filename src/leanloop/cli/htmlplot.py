"""The SVG plot of the HTML page of a run: the prompt tokens of each request against the
context window.

One point per request: the tokens the server reported, else leanloop's estimate (a hollow
point), else a mark on the axis; with both figures the estimate is a dashed line of its
own. The window and 75% of it are lines across. The plot is inline SVG, its text escaped
(:func:`~leanloop.cli.htmlvalues.esc`), its classes styled by :mod:`leanloop.cli.htmlstyle`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from leanloop.cli.htmlvalues import esc, int_of, num, prompt_tokens, text_of

__all__ = ["plot_section"]

_LEGEND_CHAR = 6.6
"""About the width of one 12px legend character, to lay the legend out in one row."""

_EMPTY_TOP = 1_000
"""The height of the token axis when the report has no figure at all."""


@dataclass(frozen=True)
class _Frame:
    """Where the plot area lies in the SVG, and the scales of its axes."""

    left: float = 72
    right: float = 24
    top: float = 48
    bottom: float = 52
    width: float = 960
    height: float = 340
    count: int = 1
    y_max: float = 1

    @property
    def inner_width(self) -> float:
        return self.width - self.left - self.right

    @property
    def inner_height(self) -> float:
        return self.height - self.top - self.bottom

    def x(self, number: int) -> float:
        """The x of request ``number`` (1-based)."""
        if self.count <= 1:
            return self.left + self.inner_width / 2
        pad = min(24.0, self.inner_width / (2 * self.count))
        span = self.inner_width - 2 * pad
        return self.left + pad + span * (number - 1) / (self.count - 1)

    def y(self, value: float) -> float:
        """The y of ``value`` tokens, kept inside the plot area."""
        shown = min(max(value, 0.0), self.y_max)
        return self.top + self.inner_height * (1 - shown / self.y_max)


def _nice_step(top: float, ticks: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten, at least 1) for ``top``."""
    raw = max(top / ticks, 1.0)
    power = 10 ** math.floor(math.log10(raw))
    factors = (1, 2, 2.5, 5, 10) if power >= 10 else (1, 2, 5, 10)
    return float(next(f * power for f in factors if raw <= f * power))


def plot_section(requests: list[Mapping[str, Any]], window: int | None) -> str:
    """The plot's section of the page: the prompt tokens of each of ``requests``.

    Args:
        requests: The report's requests, in order (the rows of its ``requests``).
        window: The run's context window in tokens; ``None``: the last one a request
            names, if any (no window lines without one).

    Returns:
        The ``<section id="plot">`` element, its SVG inline.
    """
    return (
        '<section id="plot" class="plot">\n<h2>Prompt tokens per request</h2>\n'
        f"{_plot(requests, window)}\n</section>"
    )


def _plot(requests: list[Mapping[str, Any]], window: int | None) -> str:
    figures = [prompt_tokens(r) for r in requests]
    values = [v for pair in figures for v in pair if v is not None]
    if window is None:
        windows = [w for w in (int_of(r.get("window")) for r in requests) if w]
        window = windows[-1] if windows else None
    # Headroom above the highest figure (or the window) so that no point sits on the frame.
    top = (max([*values, window or 0]) or _EMPTY_TOP) * 1.08
    step = _nice_step(top)
    frame = _Frame(count=max(1, len(requests)), y_max=step * math.ceil(top / step))
    svg = [
        f'<svg viewBox="0 0 {frame.width:g} {frame.height:g}" role="img" '
        'aria-labelledby="plot-title" id="tokens-plot">',
        '<title id="plot-title">Prompt tokens per request against the context window</title>',
    ]
    svg.extend(_axes(frame, step, len(requests)))
    if not requests:
        svg.append(
            f'<text class="empty" x="{frame.left + frame.inner_width / 2:g}" '
            f'y="{frame.top + frame.inner_height / 2:g}" text-anchor="middle">'
            "no requests recorded</text>"
        )
    legend: list[tuple[str, str]] = []
    if window:
        legend += _limit_lines(frame, window, svg)
    legend += _series(frame, requests, figures, svg)
    svg.extend(_legend(frame, legend))
    svg.append("</svg>")
    return "\n".join(svg)


def _axes(frame: _Frame, step: float, count: int) -> list[str]:
    out = []
    bottom = frame.top + frame.inner_height
    right = frame.left + frame.inner_width
    tick = 0.0
    while tick <= frame.y_max + step / 2:
        y = frame.y(tick)
        out.append(
            f'<line class="grid" x1="{frame.left:g}" x2="{right:g}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        out.append(
            f'<text class="tick" x="{frame.left - 8:g}" y="{y + 4:.1f}" '
            f'text-anchor="end">{int(tick):,}</text>'
        )
        tick += step
    out.append(
        f'<line class="axis" x1="{frame.left:g}" x2="{frame.left:g}" y1="{frame.top:g}" '
        f'y2="{bottom:g}"/>'
    )
    out.append(
        f'<line class="axis" x1="{frame.left:g}" x2="{right:g}" y1="{bottom:g}" y2="{bottom:g}"/>'
    )
    every = max(1, math.ceil(count / 20))
    for number in range(1, count + 1):
        if number % every and number != 1:
            continue
        x = frame.x(number)
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 16:g}" text-anchor="middle">'
            f"{number}</text>"
        )
    out.append(
        f'<text class="axis-label" x="{frame.left + frame.inner_width / 2:g}" '
        f'y="{frame.height - 10:g}" text-anchor="middle">request</text>'
    )
    middle = frame.top + frame.inner_height / 2
    out.append(
        f'<text class="axis-label" x="16" y="{middle:g}" text-anchor="middle" '
        f'transform="rotate(-90 16 {middle:g})">prompt tokens</text>'
    )
    return out


def _limit_lines(frame: _Frame, window: int, svg: list[str]) -> list[tuple[str, str]]:
    right = frame.left + frame.inner_width
    for value, css, label in (
        (window, "window-line", f"window {window:,}"),
        (window * 0.75, "warn-line", f"75% {int(window * 0.75):,}"),
    ):
        y = frame.y(value)
        svg.append(
            f'<line class="{css}" x1="{frame.left:g}" x2="{right:g}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        svg.append(
            f'<text class="tick" x="{right - 4:g}" y="{y - 5:.1f}" text-anchor="end">'
            f"{esc(label)}</text>"
        )
    return [("window-line", "context window"), ("warn-line", "75% of the window")]


def _series(
    frame: _Frame,
    requests: list[Mapping[str, Any]],
    figures: list[tuple[int | None, int | None]],
    svg: list[str],
) -> list[tuple[str, str]]:
    legend: list[tuple[str, str]] = []
    both = any(r is not None and e is not None for r, e in figures)
    any_reported = any(r is not None for r, _ in figures)
    any_estimated_only = any(r is None and e is not None for r, e in figures)
    if both:
        line = [(n, e) for n, (_, e) in enumerate(figures, start=1) if e is not None]
        svg.append(_polyline(frame, "series-estimate", line))
        for number, value in line:
            svg.append(
                f'<circle class="estimate-point" cx="{frame.x(number):.1f}" '
                f'cy="{frame.y(value):.1f}" r="2.5"><title>request {number}: estimated '
                f"{value:,} tokens</title></circle>"
            )
        legend.append(("series-estimate", "leanloop's estimate"))
    primary = [
        (n, r if r is not None else e)
        for n, (r, e) in enumerate(figures, start=1)
        if r is not None or e is not None
    ]
    svg.append(_polyline(frame, "series-prompt", [(n, v) for n, v in primary if v is not None]))
    bottom = frame.top + frame.inner_height
    for number, (request, (reported, estimated)) in enumerate(
        zip(requests, figures, strict=True), start=1
    ):
        kind = text_of(request.get("kind")) or "step"
        step = num(request.get("step"))
        where = f"request {number} (step {step}, {kind})"
        if reported is not None:
            tip = f"{where}: {reported:,} prompt tokens reported" + (
                f", {estimated:,} estimated" if estimated is not None else ""
            )
            css, y = "point point-reported", frame.y(reported)
        elif estimated is not None:
            css, y = "point point-estimated", frame.y(estimated)
            tip = f"{where}: {estimated:,} prompt tokens estimated (none reported)"
        else:
            css, y = "point point-missing", bottom
            tip = f"{where}: no token figure"
        svg.append(
            f'<circle class="{css}" data-request="{number}" cx="{frame.x(number):.1f}" '
            f'cy="{y:.1f}" r="4.5"><title>{esc(tip)}</title></circle>'
        )
    if any_reported:
        legend.append(("point-reported", "reported by the server"))
    if any_estimated_only:
        label = "estimated, not reported" if any_reported else "estimated prompt tokens"
        legend.append(("point-estimated", label))
    if any(r is None and e is None for r, e in figures):
        legend.append(("point-missing", "no token figure"))
    return legend


def _polyline(frame: _Frame, css: str, points: list[tuple[int, int]]) -> str:
    coords = " ".join(f"{frame.x(n):.1f},{frame.y(v):.1f}" for n, v in points)
    return f'<polyline class="{css}" points="{coords}"/>'


def _legend(frame: _Frame, entries: list[tuple[str, str]]) -> list[str]:
    """One row of legend entries above the plot area."""
    x, y = frame.left, frame.top - 20
    out = ['<g class="legend">']
    for css, label in entries:
        if css.startswith("point"):
            mark = f'<circle class="legend-mark {css}" cx="{x + 10:g}" cy="{y:g}" r="4.5"/>'
        elif css == "series-estimate":
            mark = (
                f'<line class="{css}" x1="{x:g}" x2="{x + 20:g}" y1="{y:g}" y2="{y:g}"/>'
                f'<circle class="legend-mark estimate-mark" cx="{x + 10:g}" cy="{y:g}" r="2.5"/>'
            )
        else:
            mark = f'<line class="{css}" x1="{x:g}" x2="{x + 20:g}" y1="{y:g}" y2="{y:g}"/>'
        out.append(f'{mark}<text x="{x + 26:g}" y="{y + 4:g}">{esc(label)}</text>')
        x += 26 + _LEGEND_CHAR * len(label) + 22
    out.append("</g>")
    return out
