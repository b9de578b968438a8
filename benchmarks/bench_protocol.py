"""Text-mode tool-call parsing throughput (models without native tool calls)."""

from __future__ import annotations

from benchmarks.bench_fixtures import TEXT_TOOLS, text_batch, text_megabyte
from leanloop.protocol import parse_tool_calls


class TextModeParsing:
    """``parse_tool_calls`` over a batch of 50 mixed replies, and over one 1 MB reply.

    The batch cycles through every call form (fences, tags, Qwen's form, call syntax,
    bare JSON), prose and broken calls. The 1 MB reply is prose full of brackets and
    braces with one call at its end: the parser must scan all of it.
    """

    params = (["50 mixed replies", "1 MB reply"],)
    param_names = ("input",)

    def setup_cache(self) -> dict[str, tuple[str, ...]]:
        return {"50 mixed replies": text_batch(50), "1 MB reply": (text_megabyte(),)}

    def time_parse(self, inputs: dict[str, tuple[str, ...]], input: str) -> None:
        for reply in inputs[input]:
            parse_tool_calls(reply, tools=TEXT_TOOLS)
