"""read_file paging, alone through its hook: a prunable first page is read on to the end."""

from __future__ import annotations

from leanloop.loop.policies.hooks import CallView
from leanloop.loop.policies.read_paging import ReadPagingConfig, next_offset
from leanloop.tools.registry import ToolOutcome

LINES = 5  # lines of the fake file
PAGE = 2  # lines of each page the fake reader gives


def _page(offset: int, *, limit: int = PAGE) -> ToolOutcome:
    """The page of a 5-line ``app.log`` from ``offset``, closed as ``read_file`` closes it."""
    last = min(offset + limit - 1, LINES)
    body = "\n".join(f"{n}| line {n}" for n in range(offset, last + 1))
    more = f'; next: read_file(path="app.log", offset={last + 1})' if last < LINES else ""
    text = f"{body}\n[lines {offset}-{last} of {LINES}{more}]"
    args = {"path": "app.log", "offset": offset, "limit": limit}
    return ToolOutcome(name="read_file", args=args, text=text, ok=True, chars_raw=len(text))


class Reader:
    """Serves the pages a policy asks for, and remembers the asks."""

    def __init__(self) -> None:
        self.asked: list[dict[str, object]] = []

    async def __call__(self, name: str, args: dict[str, object]) -> ToolOutcome:
        assert name == "read_file"
        self.asked.append(args)
        offset, limit = args["offset"], args["limit"]
        assert isinstance(offset, int) and isinstance(limit, int)
        return _page(offset, limit=limit)


def _call(*, prunable: bool = True, max_chars: int = 10_000, **args: object) -> CallView:
    return CallView(args={"path": "app.log", **args}, prunable=prunable, max_chars=max_chars)


async def test_a_prunable_first_page_is_read_on_to_the_end() -> None:
    reader = Reader()
    policy = ReadPagingConfig(page_lines=PAGE).start()

    outcome = await policy.after_tool_call(_call(), _page(1), reader)

    assert [a["offset"] for a in reader.asked] == [3, 5]
    assert outcome.text.splitlines()[-1] == "[lines 1-5 of 5]"
    assert outcome.text.count("| line") == LINES and outcome.chars_raw == len(outcome.text)
    assert outcome.notes[-1].startswith("read on to line 5 of 5")


async def test_a_call_the_pass_may_not_prune_or_that_asked_a_limit_keeps_its_page() -> None:
    policy = ReadPagingConfig().start()
    first = _page(1)

    assert await policy.after_tool_call(_call(prunable=False), first, Reader()) is first
    assert await policy.after_tool_call(_call(limit=2), first, Reader()) is first


async def test_the_last_page_failed_and_another_tool_are_left_as_they_are() -> None:
    policy = ReadPagingConfig().start()
    last = _page(5)
    failed = ToolOutcome(
        name="read_file", args={}, text="error: no such file", ok=False, chars_raw=0
    )
    other = ToolOutcome(name="search", args={}, text=_page(1).text, ok=True, chars_raw=0)

    for outcome in (last, failed, other):
        assert await policy.after_tool_call(_call(), outcome, Reader()) is outcome


async def test_reading_on_stops_at_the_cap_on_one_result() -> None:
    reader = Reader()
    policy = ReadPagingConfig(page_lines=PAGE).start()

    outcome = await policy.after_tool_call(_call(max_chars=20), _page(1), reader)

    assert [a["offset"] for a in reader.asked] == [3]  # the first two pages are over 20
    assert outcome.text.splitlines()[-1].startswith("[lines 1-4 of 5; next: read_file(")


def test_the_closing_line_says_where_to_read_next() -> None:
    assert next_offset(_page(1).text) == 3
    assert next_offset(_page(5).text) is None
    assert next_offset("no footer") is None
