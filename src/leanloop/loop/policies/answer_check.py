"""The answer check: an answer's values looked up in what the tools returned (issue 37).

Before a run ends with the model's answer, its values (numbers, names, hosts, versions)
are looked up in the lines the run's tool calls returned (:mod:`leanloop.grounding`).
When a value sits on a line that matches the question less than another line of the
same result (the keyboard's count where the laptops were asked), or is in nothing the
tools returned, the model is asked once more, in one request that shows the lines in
doubt and the question and nothing else; its reply replaces the answer only when its
value is on the better line (or, for a value read nowhere, in what was read). The
report's ``answer_check`` says what was found either way, and the event lines say what
was asked.

``answer_check`` in the agents file: ``ask_again``, ``note`` (record only), ``off``;
``auto`` asks again with the small prompting profile (a small model takes the
neighbour's value; measured on the embedded 0.5B) and only records otherwise. A run that
may ask again does not stream its replies: its answer is shown whole once checked, since
text already shown could not be taken back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from leanloop.grounding import (
    Grounding,
    SourceLine,
    check_answer,
    recheck_prompt,
    settle,
    source_lines,
)
from leanloop.loop.policies.hooks import AskAlone, Policy, StepView
from leanloop.loop.profiles import SMALL, PromptProfile
from leanloop.protocol import is_tool_result, parse_tool_calls

__all__ = ["AnswerCheck", "AnswerCheckConfig", "tool_results"]

CheckMode = Literal["auto", "ask_again", "note", "off"]

_PATH_ARGS = ("path", "file", "name", "filename")
"""Arguments whose value names what a reader tool read (the result's source)."""


@dataclass(frozen=True)
class AnswerCheckConfig:
    """The answer check's configuration.

    Attributes:
        mode: ``ask_again``, ``note``, ``off``, or ``auto`` (``ask_again`` with the small
            prompting profile, ``note`` otherwise).
    """

    mode: CheckMode = "auto"

    def start(self) -> AnswerCheck:
        """The check of one run."""
        return AnswerCheck(self)

    def asks(self, profile: PromptProfile) -> bool:
        """Whether a run with ``profile`` asks again when in doubt (else it only records)."""
        return self.mode == "ask_again" or (self.mode == "auto" and profile.name == SMALL.name)


@dataclass
class AnswerCheck(Policy):
    """Checks the answer before the run ends with it; asks once more when in doubt."""

    name: ClassVar[str] = "answer_check"
    config: AnswerCheckConfig
    _first: Grounding | None = field(default=None, init=False)
    _lines: list[SourceLine] = field(default_factory=list, init=False)

    def before_answer(self, view: StepView, answer: str) -> AskAlone | None:
        """Check ``answer``; the request that asks again when it is in doubt.

        Args:
            view: The run about to end.
            answer: The answer it would end with.

        Returns:
            One request alone (the lines in doubt and the question), or ``None``.
        """
        mode = self.config.mode
        if mode == "off":
            return None
        # The history holds every result the check may read: the earlier turns of a
        # session, and the steps a resumed turn took before (``resumed_reads`` are those
        # same messages: read twice, their lines would be quoted twice).
        self._lines = source_lines(tool_results(view.history))
        first = check_answer(view.question, answer, self._lines)
        if not first.values or not self._lines:
            return None
        if not first.doubtful:
            view.report.answer_check = {"verdict": "grounded", "check": first.summary()}
            return None
        ask = self.config.asks(view.profile)
        prompt = recheck_prompt(view.question, first, self._lines) if ask else None
        if prompt is None:
            view.report.answer_check = {"verdict": "doubtful", "check": first.summary()}
            view.event(f"the answer's check: {first.summary()}")
            return None
        self._first = first
        view.event(f"the answer's check: {first.summary()}; asked once more")
        return AskAlone(prompt)

    def answer_asked(self, view: StepView, answer: str, reply: str | None) -> str:
        """The answer to give: the reply when it settles the doubt, else ``answer``.

        Args:
            view: The run about to end.
            answer: The answer checked.
            reply: The text of the reply to the request (``None``: it failed).

        Returns:
            The run's answer.
        """
        first = self._first
        if first is None:  # pragma: no cover - only the policy that asked is told
            return answer
        second = check_answer(view.question, reply or "", self._lines)
        if reply is not None and settle(first, second):
            view.report.answer_check = {
                "verdict": "asked_again",
                "check": first.summary(),
                "second": second.summary(),
                "first_answer": answer,
            }
            view.event("the second answer is on the line that matches the question: it stands")
            return reply.strip()
        said = "failed" if reply is None else "did not settle it"
        view.report.answer_check = {
            "verdict": "kept",
            "check": first.summary(),
            "second": "" if reply is None else second.summary(),
        }
        view.event(f"the second request {said}: the first answer stands")
        return answer


def tool_results(history: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """``(source, text)`` of each tool result in ``history``: a reader's result is named
    by the file it read, any other by its tool.

    In text mode one user turn carries a round's results, one ``<tool_result>`` block per
    call in the order of the calls written in the reply before it: each block is a result
    of its own (the lines of two files are never compared as one result's), named by its
    call; what the turn says around the blocks (an answer turn's request) is left out.
    """
    sources = dict(_call_sources(history))
    results: list[tuple[str, str]] = []
    reply: AIMessage | None = None  # the reply before the results that follow
    for message in history:
        if isinstance(message, AIMessage):
            reply = message
        if not is_tool_result(message):
            continue
        if not isinstance(message, ToolMessage):
            # Read only here: most replies are followed by no text-mode turn.
            written = _reply_sources(reply) if reply is not None else []
            results.extend(_text_results(message.text, written))
            continue
        named = sources.get(message.tool_call_id) or message.name
        results.append((named or "a tool result", message.text))
    return results


_BLOCK = re.compile(r'^<tool_result name="([^"]*)">\n(.*?)\n</tool_result>$', re.M | re.S)
"""One result of a text-mode turn (``format_tool_result``: a ``</tool_result>`` inside a
result is escaped, so the first one at a line's start closes the block)."""


def _text_results(text: str, written: Sequence[str]) -> list[tuple[str, str]]:
    """The results of a text-mode turn, each named by its call when the calls were read."""
    blocks = [(found.group(1), found.group(2)) for found in _BLOCK.finditer(text)]
    if not blocks:  # a correction, or a turn built elsewhere: one result, as it is
        return [("a tool result", text)]
    if len(written) != len(blocks):
        written = [""] * len(blocks)
    return [(source or name, body) for (name, body), source in zip(blocks, written, strict=True)]


def _reply_sources(reply: AIMessage) -> list[str]:
    """What each call of ``reply`` reads: its native calls, else the calls it wrote."""
    calls = [_source(call.get("args") or {}) for call in reply.tool_calls]
    return calls or _written_sources(reply.text)


def _written_sources(text: str) -> list[str]:
    """What each call written in ``text`` reads (its file), in order; ``""`` when none."""
    return [_source(call.args) for call in parse_tool_calls(text).calls]


def _source(args: Mapping[str, object]) -> str:
    return next((str(args[k]) for k in _PATH_ARGS if isinstance(args.get(k), str)), "")


def _call_sources(history: Sequence[BaseMessage]) -> Iterator[tuple[str, str]]:
    for message in history:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            named = _source(call.get("args") or {})
            if call.get("id"):
                yield str(call["id"]), named or call["name"]
