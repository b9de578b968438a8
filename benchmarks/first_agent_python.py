"""The first-agent benchmark's Python-first channel: a user's own script, run once per question.

    python benchmarks/first_agent_python.py --base-url URL --data DIR [--model NAME] QUESTION

What a newcomer writes after the README's Python example: a ``ChatOpenAI`` for the
embedded server and one plain function of their own as the only tool, nothing else set
(``LLMAgent(model=..., tools=[read_doc])``). ``read_doc`` reads a file of the folder by
its name; asked for a name it does not have, it says which names it has (that is how a
question that names no file can be answered with this one tool).

Prints one JSON object: ``answer`` (the message's ``.text``), ``stop_reason``,
``tool_calls`` and ``requests`` (from ``response_metadata["leanloop"]``), ``seconds`` (the
``invoke`` alone, imports and the agent's construction left out), ``error`` (an
exception's type and message, or ``null``). ``first_agent.py`` runs it in a process of
its own so that its timeout can end a run.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI

from leanloop import LLMAgent


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--model", default="local-test")
    parser.add_argument("--answer-check", default=None, help="the agent's answer_check")
    parser.add_argument("question")
    args = parser.parse_args()
    folder: Path = args.data.resolve()

    def read_doc(name: str) -> str:
        """Return the text of one document of the workspace, given its file name."""
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
        if name not in names:
            return f"There is no document named {name!r}. The documents are: {', '.join(names)}."
        return (folder / name).read_text(encoding="utf-8")

    agent = LLMAgent(
        model=ChatOpenAI(
            base_url=args.base_url,
            model=args.model,
            api_key="none",  # type: ignore[arg-type]  # the local server wants no key
            temperature=0,
        ),
        tools=[read_doc],
        **({"answer_check": args.answer_check} if args.answer_check else {}),
    )
    out: dict[str, Any] = {"answer": "", "stop_reason": "failed", "error": None}
    started = time.perf_counter()
    try:
        message = agent.invoke(args.question)
    except Exception as exc:  # the run's failure is the result
        out["error"] = f"{type(exc).__name__}: {exc}"
        # A run that ended without an answer may raise (``no_answer: raise``), carrying
        # its report: its stop reason says how it ended. Any other exception failed it.
        carried: Any = getattr(exc, "report", None)
        if hasattr(carried, "to_dict"):
            carried = carried.to_dict()
        if isinstance(carried, dict) and carried.get("stop_reason"):
            out.update(_from_report(carried))
            out["answer"] = str(getattr(getattr(exc, "message", None), "text", "") or "")
    else:
        out["answer"] = message.text
        out.update(_from_report(message.response_metadata.get("leanloop") or {}))
    out["seconds"] = round(time.perf_counter() - started, 2)
    print(json.dumps(out, default=str))
    return 0


def _from_report(report: dict[str, Any]) -> dict[str, Any]:
    return {
        "stop_reason": str(report.get("stop_reason", "?")),
        "tool_calls": report.get("tool_calls") or [],
        "requests": len(report.get("requests") or []),
        "prompt_profile": report.get("prompt_profile"),
        "elapsed_s": report.get("elapsed_s"),
        "answer_check": (report.get("answer_check") or {}).get("verdict"),
    }


if __name__ == "__main__":
    raise SystemExit(main())
