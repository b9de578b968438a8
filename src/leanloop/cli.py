"""The ``leanloop`` command: validate, run, window, local, demo.

Exit codes: 0 ok, 1 the run failed, 2 bad input (a configuration or usage mistake). User
mistakes are one located line each on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from leanloop import events
from leanloop.exceptions import LeanloopError, SpecError

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="leanloop: %(levelname)s: %(message)s")
    try:
        code: int = args.handler(args)
    except SpecError as exc:
        for issue in exc.issues:
            print(f"error: {issue}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except LeanloopError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="leanloop",
        description="Config-driven LangChain agents that stay inside their context window.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = sub.add_parser("validate", help="check an agents file and report every problem")
    validate.add_argument("file", help="the agents YAML file")
    validate.set_defaults(handler=_validate)

    run = sub.add_parser("run", help="run an agent on a question")
    run.add_argument("file", help="the agents YAML file")
    run.add_argument("question", help="what to ask the agent")
    run.add_argument("--agent", help="the agent's name (optional when the file has one)")
    run.add_argument("--json", action="store_true", help="print the run report as JSON")
    run.add_argument("--quiet", "-q", action="store_true", help="no per-step lines on stderr")
    run.set_defaults(handler=_run)

    window = sub.add_parser("window", help="show each agent's context window and its source")
    window.add_argument("file", help="the agents YAML file")
    window.add_argument("--agent", help="only this agent")
    window.set_defaults(handler=_window)

    from leanloop.localmodel.cli import register  # noqa: PLC0415 - keep `--help` fast

    register(sub)
    return parser


def _validate(args: argparse.Namespace) -> int:
    from leanloop.spec import load_specs  # noqa: PLC0415 - keep `leanloop --help` fast

    specs = load_specs(args.file)
    noun = "agent" if len(specs) == 1 else "agents"
    print(f"ok: {len(specs)} {noun} ({', '.join(specs)})")
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from leanloop.agent import LLMAgent  # noqa: PLC0415

    agent = LLMAgent.from_file(args.file, args.agent)
    config: RunnableConfig = {"callbacks": [] if args.quiet else [StepPrinter()]}
    message = asyncio.run(agent.ainvoke(args.question, config))
    report = message.response_metadata["leanloop"]
    if args.json:
        print(json.dumps({"answer": message.text, **report}, indent=2, default=str))
    else:
        print(message.text)
    return EXIT_OK


def _window(args: argparse.Namespace) -> int:
    from leanloop.agent import LLMAgent, load_agents  # noqa: PLC0415
    from leanloop.budget import ContextPlan  # noqa: PLC0415
    from leanloop.budget.run import resolve_window  # noqa: PLC0415

    agents = load_agents(args.file)
    if args.agent is not None:
        agents = {args.agent: LLMAgent.from_file(args.file, args.agent)}

    async def resolve_all() -> list[str]:
        lines = []
        for name, agent in agents.items():
            window = await resolve_window(agent.spec.model, agent.model)
            plan = ContextPlan.for_window(
                window.tokens,
                budget_percent=agent.spec.token_budget_percent,
                max_tokens=agent.spec.model.max_tokens,
            )
            lines.append(
                f"{name}: window {window.tokens:,} tokens (source: {window.source}); "
                f"request ceiling {plan.ceiling:,}, reply reserve {plan.reply_reserve:,}"
            )
        return lines

    for line in asyncio.run(resolve_all()):
        print(line)
    return EXIT_OK


class StepPrinter(events.EventRecorder):
    """Prints one short line per tool call (and budget figures) to stderr."""

    async def record(self, name: str, data: dict[str, Any]) -> None:
        if name == events.STEP:
            for call in data["calls"]:
                args = ", ".join(f"{k}={_short(v)}" for k, v in call["args"].items())
                print(
                    f"step {data['step']} · {call['name']}({args}) · {call['chars_out']:,} chars",
                    file=sys.stderr,
                )
        elif name == events.BUDGET:
            pct = 100 * data["estimate"] / max(data["ceiling"], 1)
            print(
                f"step {data['step']} · {data['estimate']:,} / {data['ceiling']:,} tokens "
                f"({pct:.0f}%)",
                file=sys.stderr,
            )


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
