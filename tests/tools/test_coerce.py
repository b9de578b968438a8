"""coerce_values (src/leanloop/tools/_coerce.py): one sensible reading, read and reported."""

from __future__ import annotations

from typing import Any

import pytest

from leanloop.tools._coerce import coerce_values

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "limit": {"type": "integer"},
        "ratio": {"type": "number"},
        "recursive": {"type": "boolean"},
        "pattern": {"type": "string"},
        "paths": {"type": "array", "items": {"type": "string"}},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "options": {"type": "object", "properties": {"depth": {"type": "integer"}}},
        "maybe_paths": {
            "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
        },
        "range": {"$ref": "#/$defs/Range"},
        "anything": {},
    },
    "$defs": {"Range": {"type": "object", "properties": {"start": {"type": "integer"}}}},
}


@pytest.mark.parametrize(
    ("name", "given", "read", "note"),
    [
        ("limit", "20", 20, 'read limit "20" as 20'),
        ("limit", " -3 ", -3, 'read limit " -3 " as -3'),
        ("ratio", "0.5", 0.5, 'read ratio "0.5" as 0.5'),
        ("recursive", "yes", True, 'read recursive "yes" as true'),
        ("recursive", "off", False, 'read recursive "off" as false'),
        ("recursive", 1, True, "read recursive 1 as true"),
        ("pattern", 8080, "8080", 'read pattern 8080 as "8080"'),
        ("pattern", True, "true", 'read pattern true as "true"'),
        ("paths", "a.py", ["a.py"], 'read paths "a.py" as ["a.py"]'),
        ("maybe_paths", "a.py", ["a.py"], 'read maybe_paths "a.py" as ["a.py"]'),
        ("options", '{"depth": 2}', {"depth": 2}, "read options from its JSON text"),
    ],
)
def test_a_value_with_one_sensible_reading_is_read_that_way_and_reported(
    name: str, given: Any, read: Any, note: str
) -> None:
    out, notes = coerce_values({name: given}, SCHEMA)

    assert out == {name: read}
    assert notes == [note]


@pytest.mark.parametrize(
    ("name", "given"),
    [
        ("limit", 20),
        ("ratio", 2),  # an integer is a number
        ("limit", 3.0),  # a whole float is an integer
        ("limit", "twenty"),  # no reading: the validator says what to send
        ("limit", True),  # a boolean is not a number
        ("ratio", "nan"),
        ("paths", "[broken"),  # broken JSON meant as a list is not wrapped
        ("maybe_paths", None),
        ("anything", "20"),
        ("unknown", "20"),
    ],
)
def test_a_value_that_fits_or_has_no_sensible_reading_is_left_alone(name: str, given: Any) -> None:
    out, notes = coerce_values({name: given}, SCHEMA)

    assert out == {name: given}
    assert notes == []


def test_items_and_properties_are_coerced_with_their_path_in_the_note() -> None:
    out, notes = coerce_values(
        {"ids": ["1", 2], "options": {"depth": "4"}, "range": {"start": "7"}}, SCHEMA
    )

    assert out == {"ids": [1, 2], "options": {"depth": 4}, "range": {"start": 7}}
    assert notes == [
        'read ids.0 "1" as 1',
        'read options.depth "4" as 4',
        'read range.start "7" as 7',
    ]


def test_a_json_list_given_as_text_is_decoded_and_its_items_coerced() -> None:
    out, notes = coerce_values({"ids": '[1, "2"]'}, SCHEMA)

    assert out == {"ids": [1, 2]}
    assert notes == ["read ids from its JSON text", 'read ids.1 "2" as 2']


def test_a_long_value_is_shortened_in_the_note() -> None:
    _, notes = coerce_values({"paths": "x" * 100}, SCHEMA)

    assert notes == [f'read paths "{"x" * 36}... as ["{"x" * 35}...']
