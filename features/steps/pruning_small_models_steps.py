"""Steps for features/pruning/pruning_small_models.feature (the pruning pass steps are shared)."""

from __future__ import annotations

from behave import given, then, when
from behave.runner import Context

from leanloop.pruning.extract import UnreadRange
from leanloop.pruning.prompt import SMALL_SYSTEM_PROMPT, Chunk, build_messages
from leanloop.pruning.verify import RawIndex, verify_lines
from leanloop.testing import ScriptedChatModel


@given("the raw output lines:")
def step_raw_lines(context: Context) -> None:
    context.small_raw = [row["line"].strip() for row in context.table]


@given('the raw output has a line of {size:d} characters holding "{word}"')
def step_long_raw_line(context: Context, size: int, word: str) -> None:
    half = (size - len(word)) // 2
    context.small_raw.append("x" * half + word + "y" * (size - half - len(word)))


@when('the extracted line "{text}" is verified')
def step_verify(context: Context, text: str) -> None:
    context.small_verified = verify_lines([text.replace("\\|", "|")], RawIndex(context.small_raw))


@then("the kept line is raw line {number:d}")
def step_kept_raw(context: Context, number: int) -> None:
    verified = context.small_verified
    assert verified.lines == [context.small_raw[number - 1]], verified
    assert verified.dropped == 0, verified


@then('the kept line is "{text}"')
def step_kept_text(context: Context, text: str) -> None:
    assert context.small_verified.lines == [text], context.small_verified


@then("no line is kept and {count:d} is dropped")
def step_dropped(context: Context, count: int) -> None:
    verified = context.small_verified
    assert verified.lines == [] and verified.dropped == count, verified


@when('an extraction request is built in the "{style}" style for the focus "{focus}"')
def step_build(context: Context, style: str, focus: str) -> None:
    chunk = Chunk("   1| first line\n   2| ERROR deadlock here\n   3| last line", 1, 3)
    context.small_messages = build_messages(
        tool_name="read_file",
        focus=focus,
        task_context="",
        chunk=chunk,
        parts=1,
        part=1,
        style=style,  # type: ignore[arg-type]
    )


@then("the system message is the small instructions")
def step_small_system(context: Context) -> None:
    assert context.small_messages[0].content == SMALL_SYSTEM_PROMPT


@then('the user message ends with "{text}"')
def step_user_ends(context: Context, text: str) -> None:
    assert str(context.small_messages[-1].content).endswith(text), context.small_messages[-1]


@then("the user message shows the numbered lines before the question")
def step_lines_first(context: Context) -> None:
    content = str(context.small_messages[-1].content)
    assert content.index("   2| ERROR deadlock here") < content.index("Which lines"), content


@given('a pruning model that answers with the "{word}" lines and no markers')
def step_unmarked(context: Context, word: str) -> None:
    lines = [line for line in context.pruning_raw.split("\n") if word in line]
    context.pruning_model = ScriptedChatModel(replies=["\n".join(lines)], repeat_last=True)


@when("the unread range of output lines {first:d}-{last:d} is described for read_file output:")
def step_describe_unread(context: Context, first: int, last: int) -> None:
    lines = [row["line"].replace("\\|", "|").strip() for row in context.table]
    lines = [line if not line[:1].isdigit() else f"   {line}" for line in lines]
    context.small_description = UnreadRange(first, last, "timeout").describe("read_file", lines)


@then('the description is "{text}"')
def step_description(context: Context, text: str) -> None:
    assert context.small_description == text, context.small_description
