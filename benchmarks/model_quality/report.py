"""Tables of the model-quality report (Markdown)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.model_quality.runner import TaskResult
from benchmarks.model_quality.tasks import TASKS

__all__ = ["ReportInfo", "markdown_report", "summary_rows"]

_COLUMNS = (
    "mode",
    "loop",
    "correct",
    "read expected file",
    "model calls",
    "valid",
    "repaired",
    "repeats caught",
    "repeats run again",
    "steps/task",
    "tokens/task",
    "s/task",
    "failed runs",
)


@dataclass(frozen=True)
class ReportInfo:
    """What the report says about how it was made."""

    date: str
    command: str
    seconds: float
    server: str


def summary_rows(results: Sequence[TaskResult]) -> list[list[str]]:
    """One row per (mode, loop): the figures the issue asks for."""
    groups: dict[tuple[str, str], list[TaskResult]] = {}
    for result in results:
        groups.setdefault((result.mode, result.variant), []).append(result)
    rows = []
    for (mode, variant), runs in groups.items():
        n = len(runs)
        calls = sum(r.calls for r in runs)
        rows.append(
            [
                mode,
                variant,
                f"{sum(r.correct for r in runs)}/{n} ({100 * sum(r.correct for r in runs) // n}%)",
                f"{sum(r.file_read for r in runs)}/{n}",
                str(calls),
                str(sum(r.valid_calls for r in runs)),
                str(sum(r.repaired_calls for r in runs)),
                str(sum(r.repeats_caught for r in runs)),
                str(sum(r.repeats_executed for r in runs)),
                f"{sum(r.steps for r in runs) / n:.1f}",
                f"{sum(r.input_tokens + r.output_tokens for r in runs) / n:,.0f}",
                f"{sum(r.seconds for r in runs) / n:.1f}",
                str(sum(bool(r.error) for r in runs)),
            ]
        )
    return rows


def markdown_report(info: ReportInfo, results: Sequence[TaskResult]) -> str:
    """The whole report: how it was made, the summary, and a per-task grid."""
    lines = [
        "# Model-quality report: the embedded model on 20 tool-use tasks",
        "",
        f"Measured {info.date} with `{info.command}` in {info.seconds / 60:.1f} min; "
        f"server: {info.server}.",
        "",
        "`leanloop` is the default configuration; `leanloop-off` switches off the small-model",
        "help (prefetch of named files, path repair, small prompting profile, identical-call",
        "guard, tool-name repair; argument coercion stays on); `create_agent` is LangChain v1's",
        "plain agent loop with the same tools and system prompt. *Valid* calls ran as the model",
        "wrote them and succeeded; prefetched reads are not model calls. *Repeats run again*",
        "counts identical calls (same name, same arguments) that executed a second time.",
        "",
        _table(list(_COLUMNS), summary_rows(results)),
        "",
        "## Per task (✓ the answer states the expected fact; · read the file but missed it;",
        "✗ neither)",
        "",
    ]
    columns = sorted({(r.mode, r.variant) for r in results}, key=_order(results))
    header = ["task", "named by", *(f"{mode} {variant}" for mode, variant in columns)]
    grid = []
    index = {(r.task, r.mode, r.variant): r for r in results}
    for task in TASKS:
        cells = []
        for mode, variant in columns:
            run = index.get((task.key, mode, variant))
            cells.append(_mark(run))
        if any(cells):
            grid.append([task.key, task.named, *cells])
    lines.append(_table(header, grid))
    failed = [r for r in results if r.error]
    if failed:
        lines += ["", "## Failed runs", ""]
        lines += [f"- {r.mode} {r.variant} `{r.task}`: {r.error}" for r in failed]
    return "\n".join(lines) + "\n"


def _mark(run: TaskResult | None) -> str:
    if run is None:
        return ""
    return "✓" if run.correct else "·" if run.file_read else "✗"


def _order(results: Sequence[TaskResult]) -> Callable[[tuple[str, str]], int]:
    first_seen: dict[tuple[str, str], int] = {}
    for number, result in enumerate(results):
        first_seen.setdefault((result.mode, result.variant), number)
    return lambda key: first_seen[key]


def _table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out)
