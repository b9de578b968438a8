"""Prompting profiles: the loop's own instructions, tuned per model family.

A 0.5B model follows short, directive instructions better than the careful paragraphs a
large model handles well. ``auto`` picks ``small`` by the model's name; YAML may force a
profile with ``prompt_profile``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from leanloop.loop import prompts
from leanloop.pruning.prompt import PromptStyle
from leanloop.pruning.trigger import PruningTrigger

__all__ = ["DEFAULT", "SMALL", "PromptProfile", "pick_profile"]


@dataclass(frozen=True, kw_only=True)
class PromptProfile:
    """The instructions the loop adds for one family of models."""

    name: str
    final_answer: str
    """The last, tool-less request's prompt; ``{question}`` stands for the user's request."""
    synthesis: str
    """Added once when the budget is spent."""
    guidance: str
    """Appended to the system prompt when tools are offered ("" for none)."""
    repair_paths: bool
    """Whether a missing path is replaced by the single file the request names."""
    pruning_prompt: PromptStyle = "default"
    """The extraction prompt's style (``small``: short, the question after the lines)."""
    pruning_chunk_tokens: int | None = None
    """The most output tokens one pruning request shows (``None``: as many as fit): a
    0.5B model picks the relevant line out of ~1,000 tokens but not out of ~3,000."""
    pruning_trigger: PruningTrigger = "size"
    """Which results are pruned under ``pruning_trigger: auto``
    (:mod:`leanloop.pruning.trigger`)."""
    answer_turn: str = ""
    """Text mode: added after each round's tool results (``{question}`` as above), and on
    the request that follows results the tool list is left out of the system prompt, as
    the embedded model's chat template does in native mode; "" for neither."""
    rerun_pruned: bool = True
    """Whether the same call as one whose result was pruned runs again unpruned (the
    repeat guard's
    :attr:`~leanloop.loop.policies.repeat_guard.RepeatGuardConfig.rerun_pruned`)."""
    answer_after_repeats: str = ""
    """When the identical-call guard stops the model (``max_repeated_calls`` rounds of
    repeats) while a result of the run is still whole in view: the prompt of one request
    without tools that asks for the answer from what was read (``{question}`` as above).
    Its plain-text reply ends the run as ``answer``; "" ends it by ``repeated_calls``
    (ADR 0011, amendment: the first agent)."""

    def with_question(self, text: str, question: str) -> str:
        """``text`` with ``{question}`` replaced by the user's request."""
        return text.replace("{question}", question.strip() or "the user's question")


DEFAULT: Final = PromptProfile(
    name="default",
    final_answer=prompts.FINAL_ANSWER_PROMPT,
    synthesis=prompts.SYNTHESIS_PROMPT,
    guidance="",
    repair_paths=False,
)

SMALL: Final = PromptProfile(
    name="small",
    final_answer=(
        "Stop calling tools. Using only the tool results above, answer in one or two "
        "sentences: {question}\nIf the results do not hold the answer, say what is missing."
    ),
    synthesis="Context is almost full. Call at most one more tool, then answer.",
    guidance=(
        "Use the tools to look things up; never guess. When the question names a file, "
        "read that exact file. Once a tool result answers the question, reply in plain text "
        "and do not call the same tool again."
    ),
    repair_paths=True,
    # Measured on llama-server with Qwen2.5-Coder-0.5B: in a 3,300-token chunk of a log it
    # named the wrong lines or none; in a 1,000-token chunk it found the deadlock line.
    pruning_chunk_tokens=1_024,
    pruning_prompt="small",
    # Measured on llama-server with Qwen2.5-Coder-1.5B on two cores: a pass reads about
    # 30 prompt tokens a second, so pruning three 2,000-token files that fit half-way
    # took longer than reading them; only what does not fit is pruned (ADR 0006).
    pruning_trigger="budget",
    # Measured in text mode with Qwen2.5-Coder-0.5B: with the tool list in view after a
    # result, the model calls tool after tool instead of answering (ADR 0011).
    answer_turn="Answer my question in plain text using these results: {question}",
    # Measured with Qwen2.5-Coder-0.5B on the README's first agent: the model asks again
    # for the file the loop read before its first step (6 of 10 one-file questions) and
    # goes on asking after the reminder; asked this without tools, it answered in text
    # 10 times of 10 (ADR 0011, amendment: the first agent).
    # Measured on the context suite with Qwen2.5-Coder-1.5B: given the three prefetched
    # files' extracts, the needles among them, it repeated the prefetch's three calls as
    # written at every step; each ran again unpruned, did not fit, was trimmed and ran
    # pruned again until the budget was spent (ADR 0006 amendment 6). The extract is in
    # view and the info block says how to ask for the whole output (output_prune=false).
    rerun_pruned=False,
    answer_after_repeats=(
        "Stop calling tools: you already have their results above. Using only those "
        "results, answer in one or two sentences: {question}\nIf they do not hold the "
        "answer, say so."
    ),
)

# Model names that mark a small model: explicit sizes up to ~4B, known small families,
# and the embedded server's alias.
_SMALL_NAMES = re.compile(
    r"(?<![\d.])(0\.5|1|1\.5|1\.8|2|3|3\.8|4)b\b|tiny|smol|phi-?[23]|gemma-?2b|local-test",
    re.IGNORECASE,
)


SMALL_PARAMS: Final = 4_500_000_000
"""Models up to this many parameters get the small profile under ``auto`` (the names
above: up to ~4B)."""


def pick_profile(
    setting: str,
    model_name: str | None,
    *,
    served: str | None = None,
    n_params: int | None = None,
) -> PromptProfile:
    """The profile for ``setting`` (``auto``, ``default`` or ``small``) and a model.

    Under ``auto``, what the server says it serves decides first: its parameter count
    (llama.cpp ``meta.n_params``), else the name of the model file or id it serves;
    the configured model name only when the server said neither (``model: qwen`` on a
    llama.cpp serving a 0.5B is a small model; issue 37).
    """
    if setting == "small":
        return SMALL
    if setting == "default":
        return DEFAULT
    if n_params is not None:
        return SMALL if n_params <= SMALL_PARAMS else DEFAULT
    for name in (served, model_name):
        if name and _SMALL_NAMES.search(name):
            return SMALL
    return DEFAULT
