"""Tables of the model-quality report (Markdown)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.model_quality.runner import TaskResult
from benchmarks.model_quality.tasks import TASKS

__all__ = ["ReportInfo", "cache_lines", "later_cache_share", "markdown_report", "summary_rows"]

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
    "cached on requests 2+",
)


@dataclass(frozen=True)
class ReportInfo:
    """What the report says about how it was made."""

    date: str
    command: str
    seconds: float
    server: str
    load: str = ""
    """The machine's load while it ran (seconds per task follow it)."""


def later_cache_share(runs: Sequence[TaskResult]) -> tuple[int, int] | None:
    """``(cached, total)`` prompt tokens on requests 2+ of ``runs``; ``None`` when unknown."""
    known = [
        r
        for r in runs
        if r.later_prompt_cached is not None and r.later_prompt_evaluated is not None
    ]
    if not known:
        return None
    cached = sum(r.later_prompt_cached or 0 for r in known)
    return cached, cached + sum(r.later_prompt_evaluated or 0 for r in known)


def _cache_text(runs: Sequence[TaskResult]) -> str:
    share = later_cache_share(runs)
    if share is None:
        later = sum(r.later_requests for r in runs)
        return "no requests 2+" if not later else f"unknown ({later} requests 2+)"
    cached, total = share
    percent = f"{100 * cached / total:.0f}%" if total else "-"
    return f"{cached:,} of {total:,} ({percent})"


def _groups(results: Sequence[TaskResult]) -> dict[tuple[str, str], list[TaskResult]]:
    groups: dict[tuple[str, str], list[TaskResult]] = {}
    for result in results:
        groups.setdefault((result.mode, result.variant), []).append(result)
    return groups


def cache_lines(results: Sequence[TaskResult]) -> list[str]:
    """Per (mode, loop): seconds per task, accuracy and the prompt cache on requests 2+."""
    lines = []
    for (mode, variant), runs in _groups(results).items():
        n = len(runs)
        later = sum(r.later_requests for r in runs)
        where = (
            f", over {later} requests 2+ in {sum(r.later_requests > 0 for r in runs)} of {n} runs"
            if later
            else ""
        )
        lines.append(
            f"- {mode} {variant}: {sum(r.seconds for r in runs) / n:.1f} s/task, "
            f"{sum(r.correct for r in runs)}/{n} correct; prompt tokens served from cache "
            f"on requests 2+: {_cache_text(runs)}{where}"
        )
    return lines


def summary_rows(results: Sequence[TaskResult]) -> list[list[str]]:
    """One row per (mode, loop): the figures the issue asks for."""
    rows = []
    for (mode, variant), runs in _groups(results).items():
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
                _cache_text(runs),
            ]
        )
    return rows


def markdown_report(info: ReportInfo, results: Sequence[TaskResult]) -> str:
    """The whole report: how it was made, the summary, and a per-task grid."""
    lines = [
        "# Model-quality report: the embedded model on 20 tool-use tasks",
        "",
        f"Measured {info.date} with `{info.command}` in {info.seconds / 60:.1f} min; "
        f"server: {info.server}." + (f" Machine: {info.load}." if info.load else ""),
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
        "## Seconds, accuracy and the server's prompt cache",
        "",
        "Prompt tokens on each run's requests after its first, as llama-server split them:",
        "served from its prompt cache (the common prefix with the slot's previous prompt;",
        "`cached_tokens`, `timings.cache_n`) or evaluated (`timings.prompt_n`). The first",
        "request of a run is left out: its prefix was never sent by that run.",
        "",
        *cache_lines(results),
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
