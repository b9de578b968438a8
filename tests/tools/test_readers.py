"""Which tools read a named resource, and the names a request gives (issue 37)."""

from __future__ import annotations

from langchain_core.tools import StructuredTool, tool

from leanloop.tools.readers import (
    READS_KEY,
    file_like_words,
    fill_reader_argument,
    reader_parameter,
)


def read_doc(name: str) -> str:
    """Read a document by its name."""
    return name


def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return city


def open_page(path: str, offset: int = 0) -> str:
    """Open a page of the handbook."""
    return f"{path}{offset}"


def write_note(path: str, text: str) -> str:
    """Write a note to a file."""
    return path + text


def test_a_function_whose_one_string_parameter_names_a_file_is_a_reader() -> None:
    assert reader_parameter(StructuredTool.from_function(read_doc)) == "name"
    assert reader_parameter(StructuredTool.from_function(open_page)) == "path"


def test_other_shapes_are_not_readers() -> None:
    assert reader_parameter(StructuredTool.from_function(get_weather)) is None  # not a file
    assert reader_parameter(StructuredTool.from_function(write_note)) is None  # two required


def test_a_tool_says_so_itself_either_way() -> None:
    declared = StructuredTool.from_function(get_weather, metadata={READS_KEY: "city"})
    opted_out = StructuredTool.from_function(read_doc, metadata={READS_KEY: None})

    assert reader_parameter(declared) == "city"
    assert reader_parameter(opted_out) is None


def test_a_decorated_tool_is_read_the_same_way() -> None:
    @tool
    def fetch_file(filename: str) -> str:
        """Fetch a file from the archive."""
        return filename

    assert reader_parameter(fetch_file) == "filename"


def test_file_like_words_keep_paths_and_drop_versions_and_sentence_ends() -> None:
    words = file_like_words("Read bio.txt. Then config/app.yaml, not version 2.5 or 1.0.3.")
    assert words == ["bio.txt", "config/app.yaml"]


def test_the_missing_name_is_the_one_the_request_gives() -> None:
    reader = StructuredTool.from_function(read_doc)

    filled = fill_reader_argument(reader, {}, ["bio.txt"])

    assert filled == (
        {"name": "bio.txt"},
        "filled in name: bio.txt (the one file the request names)",
    )
    assert fill_reader_argument(reader, {}, ["bio.txt", "notes.txt"]) is None  # which one?
    assert fill_reader_argument(reader, {"name": "x.md"}, ["bio.txt"]) is None  # given
    assert fill_reader_argument(StructuredTool.from_function(get_weather), {}, ["a.txt"]) is None
