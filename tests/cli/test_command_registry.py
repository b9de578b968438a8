"""Every ``leanloop`` command goes through one table, ``leanloop.cli.command.COMMANDS``
(issue 40): ``--help`` lists its rows in order, each command the main parser reads ends in
a handler, and a command with a parser of its own is handed its words before that parser.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from leanloop.cli import command
from leanloop.cli.command import COMMANDS, Command


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subparsers nowhere else
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _leaves(
    name: str, parser: argparse.ArgumentParser
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    children = _subparsers(parser)
    if not children:
        yield name, parser
    for child, sub in children.items():
        yield from _leaves(f"{name} {child}", sub)


def test_the_main_parser_lists_the_table_in_order() -> None:
    listed = _subparsers(command._parser())  # the parser main() reads with

    assert list(listed) == [row.name for row in COMMANDS]
    assert len({row.name for row in COMMANDS}) == len(COMMANDS)


@pytest.mark.parametrize("row", [row for row in COMMANDS if row.arguments is not None], ids=str)
def test_every_command_the_main_parser_reads_ends_in_a_handler(row: Command) -> None:
    parser = _subparsers(command._parser())[row.name]

    for name, leaf in _leaves(row.name, parser):
        assert callable(leaf.get_default("handler")), f"`leanloop {name}` has no handler"


def test_a_command_with_its_own_parser_gets_its_words_before_the_main_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[list[str]] = []

    def own(words: list[str]) -> int:
        seen.append(list(words))
        return 7

    monkeypatch.setitem(command._OWN_PARSERS, "serve", own)

    assert command.main(["serve", "--no-such-option", "x"]) == 7
    assert seen == [["--no-such-option", "x"]]


def test_a_row_names_exactly_one_way_to_build_its_parser() -> None:
    with pytest.raises(ValueError, match="either arguments or own_parser"):
        Command("nothing", "a command without a parser")
    with pytest.raises(ValueError, match="either arguments or own_parser"):
        Command("both", "two parsers", lambda parser: None, own_parser=lambda words: 0)
