"""Hypothesis strategies for text a model or a file can hand leanloop, shared by the
Behave properties (features/steps/properties_steps.py) and the pytest properties
(tests/protocol/test_properties.py, tests/pruning/test_marker_properties.py)."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["ANY_CHAR", "ANY_TEXT", "LONG", "mutations", "soup"]

# Every code point: lone surrogates (which cannot be encoded), NUL and control characters,
# line and paragraph separators, the BOM — what a model or a file can put in a string.
ANY_CHAR = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.characters(max_codepoint=0x20),
    st.sampled_from(["\x85", "\u2028", "\u2029", "\ufeff", "\x7f", "\u200b"]),
)
ANY_TEXT = st.text(alphabet=ANY_CHAR, max_size=300)

# Long runs of one character (a 5,000-digit number, a name too long for the system).
LONG = st.tuples(st.sampled_from(["9", "a", "日", " "]), st.integers(300, 5_000)).map(
    lambda t: t[0] * t[1]
)


def soup(pieces: list[str], *, max_pieces: int = 60, long: bool = False) -> st.SearchStrategy[str]:
    """Text made of the tokens a reader cares about, with bits of arbitrary text."""
    token = st.one_of(
        st.sampled_from(pieces),
        st.text(alphabet=ANY_CHAR, max_size=4),
        *([LONG] if long else []),
    )
    return st.lists(token, max_size=max_pieces).map("".join)


def mutations(samples: list[str], pieces: list[str]) -> st.SearchStrategy[str]:
    """Valid samples with tokens spliced in, slices cut out, or cut off at any point."""
    edit = st.tuples(st.integers(0, 10_000), st.integers(0, 6), st.sampled_from(pieces) | ANY_TEXT)

    def apply(args: tuple[str, list[tuple[int, int, str]], int | None]) -> str:
        text, edits, cut = args
        for where, remove, insert in edits:
            at = where % (len(text) + 1)
            text = text[:at] + insert + text[at + remove :]
        return text if cut is None else text[: cut % (len(text) + 1)]

    return st.tuples(
        st.sampled_from(samples),
        st.lists(edit, min_size=1, max_size=5),
        st.none() | st.integers(0, 10_000),
    ).map(apply)
