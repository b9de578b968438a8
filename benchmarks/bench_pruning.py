"""Tool-output pruning: marker parsing, schema augmentation and the whole pruning pass."""

from __future__ import annotations

from typing import Any

from benchmarks.bench_fixtures import (
    event_loop,
    extraction_reply,
    log_text,
    marker_answer,
    quiet_logs,
    tool_schemas,
)
from leanloop.pruning import (
    PruneOutcome,
    Pruner,
    PruneRequest,
    PruneSettings,
    augment_tool_schemas,
    parse_prune_response,
)
from leanloop.testing import ScriptedChatModel

KB = 1_000


class MarkerParsing:
    """``parse_prune_response`` on a fenced answer of 1 KB, 100 KB and 1 MB."""

    params = ([1 * KB, 100 * KB, 1_000 * KB],)
    param_names = ("answer_chars",)

    def setup_cache(self) -> dict[int, str]:
        return {size: marker_answer(size) for size in self.params[0]}

    def time_parse(self, answers: dict[int, str], answer_chars: int) -> None:
        parse_prune_response(answers[answer_chars])


class SchemaAugmentation:
    """``augment_tool_schemas`` for 1, 10 and 100 tools, every one of them prunable."""

    params = ([1, 10, 100],)
    param_names = ("tools",)

    def setup_cache(self) -> dict[int, tuple[list[dict[str, Any]], frozenset[str]]]:
        cases = {}
        for count in self.params[0]:
            schemas = list(tool_schemas(count))
            cases[count] = (schemas, frozenset(s["function"]["name"] for s in schemas))
        return cases

    def time_augment(
        self, cases: dict[int, tuple[list[dict[str, Any]], frozenset[str]]], tools: int
    ) -> None:
        schemas, prunable = cases[tools]
        augment_tool_schemas(schemas, prunable)


class PruningPass:
    """``Pruner.prune`` of a server log with a zero-latency scripted pruning model.

    The model keeps the first three ERROR lines it is shown, in the marker format; the
    pass numbers and escapes the lines, asks, parses, verifies each kept line against
    the raw output and formats the tool message. The 500 KB log is chunked (the pruning
    model's window is 8,192 tokens, so about 20 KB a request, 4 requests at a time).
    """

    params = ([10 * KB, 50 * KB, 500 * KB],)
    param_names = ("output_chars",)

    def setup(self, output_chars: int) -> None:
        quiet_logs()
        self.raw = log_text(output_chars)
        window = 8_192 if output_chars > 100 * KB else 32_768
        model = ScriptedChatModel(replies=[extraction_reply()], repeat_last=True)
        self.pruner = Pruner(model, PruneSettings(window_tokens=window))
        self.request = PruneRequest(focus="connection errors of the pool")
        self.loop = event_loop()

    def time_prune(self, output_chars: int) -> None:
        outcome = self.loop.run_until_complete(self._prune())
        if not outcome.pruned:  # a fallback would time the wrong thing
            msg = f"the pass fell back: {outcome.fallback}"
            raise RuntimeError(msg)

    async def _prune(self) -> PruneOutcome:
        return await self.pruner.prune(
            tool_name="read_file",
            raw=self.raw,
            request=self.request,
            task_context="Why do requests fail at night?",
        )
