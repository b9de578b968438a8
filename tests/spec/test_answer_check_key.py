"""``answer_check: off`` as a user types it: YAML reads it as false, and it still means off."""

from __future__ import annotations

import pytest

from leanloop.spec.load import load_specs_from_text

AGENTS = """\
version: 1
agents:
  a:
    model:
      provider: openai-compatible
      model: m
      base_url: http://127.0.0.1:9/v1
    answer_check: {value}
"""


@pytest.mark.parametrize(
    ("value", "mode"),
    [("off", "off"), ("false", "off"), ("on", "auto"), ("'off'", "off"), ("note", "note")],
)
def test_answer_check_reads_as_written(value: str, mode: str) -> None:
    specs = load_specs_from_text(AGENTS.format(value=value), source="agents.yaml")
    assert specs["a"].answer_check == mode


def test_answer_check_defaults_to_auto() -> None:
    text = AGENTS.replace("    answer_check: {value}\n", "")
    assert load_specs_from_text(text, source="agents.yaml")["a"].answer_check == "auto"
