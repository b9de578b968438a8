"""cut_to_line and cap_text (src/leanloop/textcap.py): cuts on a line end, with the way back."""

from __future__ import annotations

import re

from leanloop.textcap import cap_text, cut_to_line


def _numbered(count: int, width: int = 40) -> str:
    return "".join(f"{n:6d}|" + "x" * width + "\n" for n in range(1, count + 1))


def test_text_that_fits_is_left_alone() -> None:
    assert cut_to_line("one\ntwo\n", 8) == "one\ntwo\n"
    assert cap_text("one\ntwo\n", 8) == "one\ntwo\n"


def test_a_cut_ends_at_the_last_whole_line() -> None:
    assert cut_to_line("abc\ndef\nghi\n", 9) == "abc\ndef\n"


def test_a_single_line_longer_than_the_limit_is_cut_mid_line() -> None:
    assert cut_to_line("abcdefgh", 3) == "abc"


def test_a_capped_text_fits_and_says_how_much_was_left_out() -> None:
    text = "plain line of output without numbers\n" * 100

    capped = cap_text(text, 1_000)

    assert len(capped) <= 1_000
    kept, note = capped.rsplit("\n", 1)
    assert text.startswith(kept)
    omitted = len(text) - len(kept) - 1
    assert note == (
        f"[{omitted:,} of {len(text):,} characters left out to save context; "
        "ask for less at a time (a smaller range, a narrower pattern)]"
    )


def test_numbered_output_says_which_line_to_read_on_from() -> None:
    capped = cap_text(_numbered(200), 2_000)

    assert len(capped) <= 2_000
    shown = [int(n) for n in re.findall(r"^\s*(\d+)\|", capped, re.MULTILINE)]
    assert shown == list(range(1, len(shown) + 1))
    last = shown[-1]
    assert capped.endswith(f"read on from line {last + 1} (offset={last + 1})]")


def test_the_tools_continuation_line_is_kept_and_points_after_the_last_line_shown() -> None:
    footer = "[lines 1-200 of 812; next: read_file(path=app.log, offset=201)]"
    text = _numbered(200) + footer + "\n"

    capped = cap_text(text, 2_000)

    assert len(capped) <= 2_000
    *_, note, closing = capped.split("\n")
    last = int(re.findall(r"^\s*(\d+)\|", capped, re.MULTILINE)[-1])
    assert last < 200
    assert f"read on from line {last + 1}" in note
    assert closing == f"[lines 1-{last} of 812; next: read_file(path=app.log, offset={last + 1})]"


def test_a_continuation_line_at_the_end_of_file_gets_a_next_offset() -> None:
    text = _numbered(100) + "[lines 1-100 of 100; end of file]"

    capped = cap_text(text, 1_200)

    last = int(re.findall(r"^\s*(\d+)\|", capped, re.MULTILINE)[-1])
    assert capped.endswith(f"\n[lines 1-{last} of 100; next: offset={last + 1}]")
