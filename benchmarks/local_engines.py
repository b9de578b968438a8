"""The two llama.cpp engines of ``leanloop local`` side by side (ADR 0033).

Usage::

    python -m benchmarks.local_engines [--models qwen2.5-coder-0.5b qwen2.5-coder-1.5b]
        [--engines prebuilt build] [--rounds 3] [--prompt-lines 60] [--reply-tokens 48]

For each round, model and engine in turn (interleaved, so a machine that gets busier
or quieter halfway does not favour one engine), it starts a server exactly as
``leanloop local start`` does (``running_server``: the same flags, one slot, leanloop's
chat template) on a free port, and measures:

- **start**: seconds from the start call until ``GET /health`` answers 200 (process
  start, model load, warm-up);
- **prompt tok/s**: llama.cpp's own ``timings.prompt_per_second`` for one chat request
  whose prompt is a fixed, numbered Python listing (``--prompt-lines``; the prompt cache
  is off, so every token is evaluated);
- **generation tok/s**: ``timings.predicted_per_second`` for the same request, which
  generates exactly ``--reply-tokens`` tokens (``ignore_eos``).

It prints one row per model and engine with the median of the rounds (and the range),
then each model's prebuilt/build ratios. Needs ``leanloop local setup --model NAME`` for
the models and a runnable ``bin/llama-server`` in the cache (``setup --build``) for the
build engine; an engine or model that is not set up is named and left out.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.local_server import free_port
from leanloop.exceptions import LocalModelError
from leanloop.localmodel import MODEL_ALIAS, MODEL_CATALOG, cache_paths, running_server
from leanloop.localmodel.build import is_runnable
from leanloop.localmodel.engine import ENGINES, Engine, engine_label, prebuilt_installed
from leanloop.localmodel.model import is_verified
from leanloop.localmodel.server import ServerOptions

CTX_SIZE = 4096


@dataclass(frozen=True)
class Sample:
    """One server start and one request."""

    start_s: float
    prompt_tokens: int
    prompt_tps: float
    reply_tokens: int
    reply_tps: float


def listing(lines: int) -> str:
    """A fixed, numbered Python listing of about 12 tokens a line (the prompt's body)."""
    rows = [
        f"{n:4d}  def step_{n}(value: int) -> int:  return value * {n % 7 + 2} + {n}"
        for n in range(1, lines + 1)
    ]
    return "\n".join(rows)


def measure(engine: Engine, model_file: Path, prompt: str, reply_tokens: int) -> Sample:
    """Start one server, send one request, stop it."""
    options = ServerOptions(port=free_port(), ctx_size=CTX_SIZE, engine=engine, model=model_file)
    started = time.monotonic()
    with running_server(options) as server:
        start_s = time.monotonic() - started
        body = {
            "model": MODEL_ALIAS,
            "messages": [{"role": "user", "content": f"{prompt}\n\nWhich step multiplies by 5?"}],
            "max_tokens": reply_tokens,
            "temperature": 0,
            "ignore_eos": True,
            "cache_prompt": False,
        }
        response = httpx.post(f"{server.openai_url}/chat/completions", json=body, timeout=900)
        response.raise_for_status()
        timings = response.json()["timings"]
    return Sample(
        start_s=start_s,
        prompt_tokens=int(timings["prompt_n"]),
        prompt_tps=float(timings["prompt_per_second"]),
        reply_tokens=int(timings["predicted_n"]),
        reply_tps=float(timings["predicted_per_second"]),
    )


def _ready_engines(wanted: Sequence[Engine]) -> list[Engine]:
    paths = cache_paths()
    ready: list[Engine] = []
    for engine in wanted:
        ok = is_runnable(paths.server_binary) if engine == "build" else prebuilt_installed()
        if ok:
            ready.append(engine)
        else:
            print(f"skipping the {engine} engine: not set up in {paths.root}", file=sys.stderr)
    return ready


def _ready_models(wanted: Sequence[str]) -> list[str]:
    paths = cache_paths()
    ready = []
    for name in wanted:
        pin = MODEL_CATALOG[name]
        if is_verified(paths.model_path(pin.filename), pin):
            ready.append(name)
        else:
            print(f"skipping {name}: run `leanloop local setup --model {name}`", file=sys.stderr)
    return ready


def _median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.local_engines")
    parser.add_argument("--models", nargs="+", default=list(MODEL_CATALOG), choices=MODEL_CATALOG)
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--prompt-lines", type=int, default=60)
    parser.add_argument("--reply-tokens", type=int, default=48)
    args = parser.parse_args(argv)
    engines, models = _ready_engines(args.engines), _ready_models(args.models)
    if not engines or not models:
        print("nothing to measure", file=sys.stderr)
        return 1
    paths = cache_paths()
    prompt = listing(args.prompt_lines)
    samples: dict[tuple[str, Engine], list[Sample]] = {}
    for number in range(1, args.rounds + 1):
        for name in models:
            model_file = paths.model_path(MODEL_CATALOG[name].filename)
            for engine in engines:
                try:
                    sample = measure(engine, model_file, prompt, args.reply_tokens)
                except (LocalModelError, httpx.HTTPError) as exc:
                    print(f"round {number}, {name}, {engine}: failed: {exc}", file=sys.stderr)
                    continue
                samples.setdefault((name, engine), []).append(sample)
                print(
                    f"round {number}, {name}, {engine}: start {sample.start_s:.2f} s, "
                    f"prompt {sample.prompt_tps:.1f} tok/s, generation {sample.reply_tps:.1f} "
                    "tok/s",
                    file=sys.stderr,
                    flush=True,
                )
    _print_table(samples, engines, models, args)
    return 0


def _print_table(
    samples: dict[tuple[str, Engine], list[Sample]],
    engines: Sequence[Engine],
    models: Sequence[str],
    args: argparse.Namespace,
) -> None:
    paths = cache_paths()
    print(
        f"llama.cpp engines, {platform.machine()} with {os.cpu_count()} CPUs, --ctx-size "
        f"{CTX_SIZE}, {args.rounds} interleaved rounds; median (min-max)"
    )
    print()
    print("| model | engine | start s | prompt tokens | prompt tok/s | generation tok/s |")
    print("|---|---|---:|---:|---:|---:|")
    for name in models:
        for engine in engines:
            got = samples.get((name, engine), [])
            if not got:
                print(f"| {name} | {engine} | failed | | | |")
                continue
            print(
                f"| {name} | {engine_label(engine, paths)} | "
                f"{_median([s.start_s for s in got])} | {got[0].prompt_tokens} | "
                f"{_median([s.prompt_tps for s in got])} | "
                f"{_median([s.reply_tps for s in got])} |"
            )
    if set(engines) == set(ENGINES):
        print()
        for name in models:
            pre, built = samples.get((name, "prebuilt")), samples.get((name, "build"))
            if not pre or not built:
                continue

            def ratio(field: str, pre: list[Sample] = pre, built: list[Sample] = built) -> float:
                mine = statistics.median(float(getattr(s, field)) for s in pre)
                return mine / statistics.median(float(getattr(s, field)) for s in built)

            print(
                f"{name}: prebuilt/build start {ratio('start_s'):.2f}x, prompt speed "
                f"{ratio('prompt_tps'):.2f}x, generation speed {ratio('reply_tps'):.2f}x"
            )


if __name__ == "__main__":
    sys.exit(main())
