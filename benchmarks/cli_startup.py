"""How long the CLI takes to start, side by side with importing LangChain.

Usage::

    python benchmarks/cli_startup.py [--runs 15]

Each command runs ``--runs`` times in a fresh interpreter, interleaved (one of each per
round), so a busy machine slows them alike; the table gives the median wall time and
the ratio to ``python -c "import langchain_core"``. The target (issue 14): ``--help`` at
most 2x that import, since the CLI's cheap commands never import LangChain.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "src" / "leanloop" / "examples" / "agents.yaml"

COMMANDS: dict[str, list[str]] = {
    'python -c "import langchain_core"': [sys.executable, "-c", "import langchain_core"],
    "python -c pass": [sys.executable, "-c", "pass"],
    "leanloop --help": [sys.executable, "-m", "leanloop", "--help"],
    "leanloop validate <demo agents.yaml>": [
        sys.executable,
        "-m",
        "leanloop",
        "validate",
        str(AGENTS),
    ],
}
BASELINE = 'python -c "import langchain_core"'


def measure(runs: int) -> dict[str, list[float]]:
    """Wall times of each command, ``runs`` each, interleaved."""
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, cmd in COMMANDS.items():
            started = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
            times[name].append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    times = measure(args.runs)
    base = statistics.median(times[BASELINE])
    print(f"| command | median wall (ms) | × import langchain_core |  ({args.runs} runs each)")
    print("|---|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| `{name}` | {median * 1000:.0f} | {median / base:.2f} |")
    ratio = statistics.median(times["leanloop --help"]) / base
    verdict = "met" if ratio <= 2 else "MISSED"
    print(f"\n`leanloop --help` is {ratio:.2f}x `import langchain_core` (target <= 2x): {verdict}")
    return 0 if ratio <= 2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
