"""What pruned results cost the main model: twelve 100-line files read in turn at 4,096.

``python -m benchmarks.pruning_tokens`` runs one agent whose main model is scripted: it
reads twelve 100-line logs one after another (``read_file`` with an
``output_prune_context`` naming each file's one relevant line), then answers. Its window is
4,096 tokens, so the loop prunes and trims; the pruning model is scripted too, declared
small (4,096 tokens), and names the lines holding the word asked for. Every request carries
the whole conversation, so each pruned result is read again by every later request: what
its info block says costs twelve times over. It prints the main model's prompt tokens,
counted with ``count_tokens_approximately`` (the context suite's reference counter) over
every request the main model was sent, and the pruned results' sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from benchmarks.pruning_fidelity import RequestLog
from leanloop.agent import LLMAgent
from leanloop.spec.load import load_specs_from_dict
from leanloop.testing import ScriptedChatModel

__all__ = ["main"]

FILES = 12
LINES = 100
WINDOW = 4_096
_SHOWN = re.compile(r"^\s*(\d+)\| (.*)$")


def _log(k: int) -> str:
    rows = [
        f"02:{n // 60 % 60:02d}:{n % 60:02d} INFO worker-{n % 8} processed batch "
        f"{10000 + n} rows={n * 37 % 5000} ok"
        for n in range(1, LINES + 1)
    ]
    rows[(17 * k) % 90 + 5] = f"02:40:0{k % 10} ERROR worker-{k} needle-{k} owner=team-{k}"
    return "\n".join(rows) + "\n"


def _namer(messages: list[BaseMessage]) -> dict[str, Any]:
    """A small pruning model's answer: the numbers of the shown lines holding "needle"."""
    text = str(messages[-1].content)
    numbers = [m[1] for line in text.split("\n") if (m := _SHOWN.match(line)) and "needle" in m[2]]
    return {"content": "[PRUNE_OUTPUT_START]\n" + ", ".join(numbers) + "\n[PRUNE_OUTPUT_END]"}


async def _run(workspace: Path) -> tuple[list[list[BaseMessage]], str]:
    calls = [
        {
            "tool_calls": [
                {
                    "name": "read_file",
                    "args": {"path": f"log{k}.txt", "output_prune_context": f"needle-{k}"},
                }
            ]
        }
        for k in range(1, FILES + 1)
    ]
    document = {
        "version": 1,
        "models": {
            "main": {
                "class": "leanloop.testing:ScriptedChatModel",
                "kwargs": {"replies": [*calls, "done"]},
                "context_window": WINDOW,
            },
            "pruner": {
                "class": "leanloop.testing:ScriptedChatModel",
                "model": "tiny-pruner",
                "context_window": WINDOW,
            },
        },
        "agents": {
            "reader": {
                "model": "main",
                "tools": ["read_file"],
                "workspace": str(workspace),
                "max_rounds": FILES + 2,
                "allow_tool_output_pruning": True,
                "pruning_model": "pruner",
                "pruning_trigger": "size",
            }
        },
    }
    spec = load_specs_from_dict(document)["reader"]
    extractor = ScriptedChatModel(replies=[_namer], repeat_last=True)
    agent = LLMAgent.from_spec(spec, pruning_model=extractor)
    recorder = RequestLog()
    reply = await agent.ainvoke("Which teams own the needles?", {"callbacks": [recorder]})
    main = [messages for name, messages in recorder.requests if name != "leanloop.prune"]
    return main, str(reply.text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the scenario and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pruning-tokens-") as tmp:
        workspace = Path(tmp)
        for k in range(1, FILES + 1):
            (workspace / f"log{k}.txt").write_text(_log(k), encoding="utf-8")
        main_requests, answer = asyncio.run(_run(workspace))
    prompt = sum(count_tokens_approximately(messages) for messages in main_requests)
    last = main_requests[-1] if main_requests else []
    results = [str(m.content) for m in last if isinstance(m, ToolMessage)]
    kept = sum(1 for k in range(1, FILES + 1) if any(f"needle-{k} " in r for r in results))
    sizes = [len(r) for r in results]
    print("| main requests | main prompt tokens | results in the last request | needles in view |")
    print("|---:|---:|---:|---:|")
    print(f"| {len(main_requests)} | {prompt:,} | {len(results)} | {kept}/{FILES} |")
    if sizes:
        print(f"\nresult sizes (chars): median {statistics.median(sizes):,.0f}, max {max(sizes):,}")
        print(f"a result as the main model read it:\n{results[-1]}")
    print(f"answer: {answer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
