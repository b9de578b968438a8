"""A ``read_file`` page the pruning pass may prune is read on to the end of the file.

``read_file`` shows one page at a time and closes with the call that reads the next
(``[lines 1-200 of 640; next: read_file(path="app.log", offset=201)]``). A call the pass
may prune, that did not opt out and asked for no ``limit`` (small models never do), sees
the whole file through the pass rather than its first page: the pass reads only the parts
that matter (:mod:`leanloop.pruning.rank`) and names the rest with the calls that read
them. The pages after the first are read up to the registry's cap on one result.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import ClassVar

from leanloop.loop.policies.hooks import CallView, Policy, ToolCaller
from leanloop.tools.registry import ToolOutcome
from leanloop.tools.workspace import MAX_READ_LINES

__all__ = ["ReadPaging", "ReadPagingConfig", "next_offset"]

# read_file's closing line: "[lines 1-200 of 640; next: read_file(path="app.log", offset=201)]".
_FOOTER = re.compile(r"\[lines ([\d,]+)-([\d,]+) of ([\d,]+)(.*)\]\Z")
_NEXT = re.compile(r"; next: read_file\(path=.*, offset=(\d+)\)\Z")


def next_offset(text: str) -> int | None:
    """The offset a ``read_file`` result's closing line says to read next, if any."""
    footer = _FOOTER.search(text)
    found = _NEXT.search(footer[4] + "") if footer is not None else None
    return int(found[1]) if found is not None else None


@dataclass(frozen=True)
class ReadPagingConfig:
    """Which tool is read on, and by how much a page.

    Attributes:
        tool: The paged reader (its results close with :data:`_FOOTER`'s line).
        page_lines: The ``limit`` of each further page.
    """

    tool: str = "read_file"
    page_lines: int = MAX_READ_LINES

    def start(self) -> ReadPaging:
        """The policy for one run."""
        return ReadPaging(self)


class ReadPaging(Policy):
    """Reads on after the first page of a prunable ``read_file`` call; keeps no state."""

    name: ClassVar[str] = "read_paging"

    def __init__(self, config: ReadPagingConfig) -> None:
        self.config = config

    async def after_tool_call(
        self, call: CallView, outcome: ToolOutcome, call_tool: ToolCaller
    ) -> ToolOutcome:
        """``outcome`` with the pages after it when the module docstring says so."""
        if not (
            outcome.ok
            and outcome.name == self.config.tool
            and call.prunable
            and "limit" not in call.args
            and next_offset(outcome.text) is not None
        ):
            return outcome
        return await self._read_on(outcome, call.max_chars, call_tool)

    async def _read_on(
        self, first: ToolOutcome, max_chars: int, call_tool: ToolCaller
    ) -> ToolOutcome:
        """``first`` with the pages after it, up to ``max_chars``."""
        body, footer = first.text.rsplit("\n", 1)
        pages, size = [body], len(body)
        offset = next_offset(first.text)
        while offset is not None and size < max_chars:
            args = {**first.args, "offset": offset, "limit": self.config.page_lines}
            page = await call_tool(self.config.tool, args)
            if not page.ok or "\n" not in page.text:
                break
            text, footer = page.text.rsplit("\n", 1)
            pages.append(text)
            size += len(text) + 1
            offset = next_offset(page.text)
        start = _FOOTER.match(first.text.rsplit("\n", 1)[1])
        end = _FOOTER.match(footer)
        if start is None or end is None or len(pages) == 1:
            return first
        footer = f"[lines {start[1]}-{end[2]} of {end[3]}{end[4]}]"
        text = "\n".join([*pages, footer])
        note = (
            f"read on to line {end[2]} of {end[3]}: a call the pruning pass may prune sees it all"
        )
        return dataclasses.replace(
            first, text=text, chars_raw=len(text), notes=(*first.notes, note)
        )
