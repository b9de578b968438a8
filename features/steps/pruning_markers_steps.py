"""Steps for features/pruning_markers.feature: parsing, escaping and building marker blocks."""

from __future__ import annotations

from behave import given, then, use_step_matcher, when
from behave.runner import Context

from leanloop.pruning import (
    RESERVED_MARKERS,
    PruneFormatError,
    PruneParse,
    escape_reserved,
    format_pruned,
    parse_prune_response,
    restore_reserved,
)


@given("the pruning answer:")
def step_answer(context: Context) -> None:
    context.pruning_answer = context.text


# The re matcher lets the answer be empty; switched back at once, since it is global.
use_step_matcher("re")


@given('the pruning answer "(?P<answer>.*)"')
def step_answer_inline(context: Context, answer: str) -> None:
    context.pruning_answer = answer


use_step_matcher("parse")


@given("the pruning answer ends with blank lines")
def step_answer_newline(context: Context) -> None:
    context.pruning_answer += "\n\n"


@given("a pruning answer with {size:d} characters of output lines")
def step_big_answer(context: Context, size: int) -> None:
    lines, total = [], 0
    while total < size:
        lines.append(f"{len(lines):07d}| kept line with some words in it, verbatim as it was")
        total += len(lines[-1]) + 1
    context.pruning_big_lines = lines
    context.pruning_answer = "[PRUNE_OUTPUT_START]\n" + "\n".join(lines) + "\n[PRUNE_OUTPUT_END]"
    assert len(context.pruning_answer) >= size


@when("the pruning answer is parsed")
def step_parse(context: Context) -> None:
    context.pruning_parse = None
    context.pruning_error = None
    try:
        context.pruning_parse = parse_prune_response(context.pruning_answer)
    except PruneFormatError as error:
        context.pruning_error = error


def _parsed(context: Context) -> PruneParse:
    assert context.pruning_error is None, f"parsing failed: {context.pruning_error}"
    return context.pruning_parse


@then('the parsed pruning info is "{info}"')
def step_info(context: Context, info: str) -> None:
    assert _parsed(context).info == info, _parsed(context).info


@then("the pruning answer has no info block")
def step_no_info(context: Context) -> None:
    assert _parsed(context).info is None, _parsed(context).info


@then("the parsed pruning output is:")
def step_output(context: Context) -> None:
    assert _parsed(context).output == context.text, repr(_parsed(context).output)


@then("the parsed pruning output is empty")
def step_output_empty(context: Context) -> None:
    assert _parsed(context).output == "", repr(_parsed(context).output)


@then("the parsed pruning output has all of those output lines")
def step_output_all(context: Context) -> None:
    assert _parsed(context).output.split("\n") == context.pruning_big_lines


@then("parsing failed with a pruning marker format error")
def step_failed(context: Context) -> None:
    assert isinstance(context.pruning_error, ValueError), context.pruning_parse
    assert "[PRUNE_OUTPUT_START]" in str(context.pruning_error)


@given("the pruning tool output:")
def step_tool_output(context: Context) -> None:
    context.pruning_tool_output = context.text
    assert "[PRUNE_OUTPUT_END]" in context.text


@when("the pruning tool output is escaped")
def step_escape(context: Context) -> None:
    context.pruning_escaped = escape_reserved(context.pruning_tool_output)


@then("the escaped pruning tool output contains no reserved marker")
def step_no_marker(context: Context) -> None:
    for marker in RESERVED_MARKERS:
        assert marker not in context.pruning_escaped, (marker, context.pruning_escaped)
    assert "[\\PRUNE_OUTPUT_END]" in context.pruning_escaped


@then("restoring the escaped pruning tool output gives the original back")
def step_restore(context: Context) -> None:
    restored = restore_reserved(context.pruning_escaped)
    assert restored == context.pruning_tool_output, restored


@then("a pruning answer quoting the escaped output whole keeps it all as content")
def step_quote_whole(context: Context) -> None:
    answer = (
        "[PRUNE_INFO_START]\nkept everything\n[PRUNE_INFO_END]\n"
        f"[PRUNE_OUTPUT_START]\n{context.pruning_escaped}\n[PRUNE_OUTPUT_END]\n"
    )
    parsed = parse_prune_response(answer)
    assert parsed.info == "kept everything", parsed.info
    assert restore_reserved(parsed.output) == context.pruning_tool_output, parsed.output


@when('a pruned tool message is built from info "{info}" and output "{output}"')
def step_build(context: Context, info: str, output: str) -> None:
    context.pruning_info, context.pruning_output = info, output.replace("\\n", "\n")
    context.pruning_message = format_pruned(context.pruning_info, context.pruning_output)


@then("the pruned tool message is:")
def step_message(context: Context) -> None:
    assert context.pruning_message == context.text, repr(context.pruning_message)


@then("parsing the pruned tool message gives the info and output back")
def step_round_trip(context: Context) -> None:
    parsed = parse_prune_response(context.pruning_message)
    assert (parsed.info, parsed.output) == (context.pruning_info, context.pruning_output)
