"""The suite's outputs: a Markdown report and a PNG plot of prompt tokens per step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.context_suite.metrics import ProbeFigure, Row, TargetCheck
from benchmarks.context_suite.reference import RunLog
from benchmarks.context_suite.strategies import Strategy

__all__ = ["ReportInfo", "markdown_report", "plot_tokens", "results_table"]


@dataclass(frozen=True)
class ReportInfo:
    """What the report says about the run itself."""

    title: str
    date: str
    windows: Sequence[int]
    tasks: int
    seed: int
    seconds: float
    command: str
    plot: str | None = None
    """The plot's file name, next to the report; ``None`` for no plot."""
    notes: str = ""
    how_to_read: str = ""
    """The reading note under the table; the scripted suite's when empty."""


_HEADER = (
    "| Strategy | Window | Correct | Failed runs | Over window | Peak tokens "
    "| Total prompt tokens | Tokens / correct | Aux tokens | All tokens | Steps "
    "| Overhead ms/step |"
)
_RULE = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"


def results_table(rows: Sequence[Row]) -> str:
    """The results as one Markdown table."""
    lines = [_HEADER, _RULE]
    for r in rows:
        per = f"{r.tokens_per_correct:,}" if r.tokens_per_correct is not None else "–"
        aux = f"{r.aux_tokens:,}" + (f" ({r.aux_overflows} over)" if r.aux_overflows else "")
        lines.append(
            f"| {r.label} | {r.window:,} | {r.correct}/{r.tasks} | {r.failed} | {r.overflows} "
            f"| {r.peak_tokens:,} | {r.total_tokens:,} | {per} | {aux} "
            f"| {r.total_tokens + r.aux_tokens:,} | {r.steps} "
            f"| {r.overhead_ms:.2f} |"
        )
    return "\n".join(lines)


def _targets_table(checks: Sequence[TargetCheck]) -> str:
    lines = ["| Target (leanloop trim + prune) | Measured | Met |", "|---|---|---|"]
    for c in checks:
        met = "n/a" if c.met is None else ("yes" if c.met else "**no**")
        lines.append(f"| {c.target} | {c.measured} | {met} |")
    return "\n".join(lines)


def _probe_table(probes: Sequence[ProbeFigure], labels: dict[str, str]) -> str:
    lines = ["| Strategy | Window | Messages | Overhead ms/step |", "|---|---:|---:|---:|"]
    for p in probes:
        size = f"{p.messages[0]}–{p.messages[1]}" if p.overhead_ms is not None else "–"
        ms = f"{p.overhead_ms:.2f}" if p.overhead_ms is not None else "ended early"
        lines.append(f"| {labels.get(p.strategy, p.strategy)} | {p.window:,} | {size} | {ms} |")
    return "\n".join(lines)


HOW_TO_READ = """\
**How to read it.** Every strategy runs the same scripted reader on the same tasks; the
reader answers with the facts it can still see in the request it is sent, so *Correct*
measures what the context strategy kept, not how well a model reasons. *Over window*
counts reader requests larger than the window by the reference counter
(`count_tokens_approximately`, the same for all); such a request is refused, as a server
would, and a LangChain run ends there (*Failed runs*) while leanloop trims and retries.
*Peak* and *Total prompt tokens* are the reader's requests (refused ones included);
*Aux tokens* are the extractor's (leanloop pruning) or the summarizer's requests;
*All tokens* adds them to the reader's: what the strategy made the servers read.
*Overhead* is the strategy's own CPU time per reader request: the process's CPU time less
the time inside models and tools, with zero-latency models (it varies by tens of percent
from run to run on a busy machine; the token columns repeat exactly). See
`docs/adr/0012-context-efficiency-suite.md` for the method and its limits."""


def markdown_report(
    info: ReportInfo,
    rows: Sequence[Row],
    checks: Sequence[TargetCheck],
    probes: Sequence[ProbeFigure],
    strategies: Sequence[Strategy],
) -> str:
    """The whole report: run facts, the table, the targets, the overhead probe."""
    windows = ", ".join(f"{w:,}" for w in info.windows)
    parts = [
        f"# {info.title}",
        "",
        f"Run {info.date} · windows {windows} tokens · {info.tasks} tasks · seed {info.seed} · "
        f"{info.seconds:.0f} s · `{info.command}`",
        "",
        results_table(rows),
        "",
        info.how_to_read or HOW_TO_READ,
    ]
    if info.notes:
        parts += ["", info.notes]
    if checks:
        parts += ["", "## Targets", "", _targets_table(checks)]
    if probes:
        labels = {s.key: s.label for s in strategies}
        parts += [
            "",
            "## Overhead at a long history",
            "",
            "A probe task of 50 small reads (about 700 characters each), run three times "
            "per strategy and window; the figure is the median over the runs of the mean "
            "CPU time the strategy spent on each of its last 10 steps, when the request "
            "holds about 100 messages (*ended early*: the run stopped before that, e.g. "
            "refused or out of budget).",
            "",
            _probe_table(probes, labels),
        ]
    if info.plot:
        parts += ["", f"![Prompt tokens per step]({info.plot})"]
    return "\n".join(parts) + "\n"


def plot_tokens(
    logs: Sequence[RunLog],
    strategies: Sequence[Strategy],
    *,
    task_id: str,
    window: int,
    target: Path,
) -> None:
    """Plot the reader's prompt tokens per step on one task at one window, as a PNG."""
    import matplotlib  # noqa: PLC0415 - heavy, and only needed when a plot is written

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    figure, axes = plt.subplots(figsize=(9, 5), dpi=110)
    styles = ("-", "--", "-.", ":", "-", "--")
    markers = ("o", "s", "^", "D", "v", "P")
    for number, strategy in enumerate(strategies):
        log = next(
            (
                g
                for g in logs
                if g.strategy == strategy.key and g.window == window and g.task_id == task_id
            ),
            None,
        )
        if log is None:
            continue
        reader = log.of("reader")
        # A small sideways shift per strategy keeps lines that coincide visible.
        shift = (number - (len(strategies) - 1) / 2) * 0.04
        steps = [step + shift for step in range(1, len(reader) + 1)]
        axes.plot(
            steps,
            [r.tokens for r in reader],
            linestyle=styles[number % len(styles)],
            marker=markers[number % len(markers)],
            markersize=4,
            label=strategy.label,
        )
        refused = [(step, r.tokens) for step, r in zip(steps, reader, strict=True) if r.over]
        if refused:
            xs, ys = zip(*refused, strict=True)
            axes.scatter(xs, ys, marker="x", s=70, color="black", zorder=5)
    axes.axhline(
        window, color="crimson", linestyle="--", linewidth=1.2, label=f"window ({window:,})"
    )
    axes.set_xlabel("reader request (step)")
    axes.set_ylabel("prompt tokens (reference counter)")
    axes.set_title(f"Prompt tokens per step, task {task_id}, {window:,}-token window (x: refused)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, metadata={"Software": None, "Creation Time": None})
    plt.close(figure)
