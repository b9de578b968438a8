"""An API key that an HTTP header cannot carry is a located load error, not a failed run."""

from __future__ import annotations

import os

import pytest

from leanloop.exceptions import SpecError
from leanloop.spec.load import load_specs_from_text

AGENTS = """\
version: 1
agents:
  a:
    model:
      provider: openai-compatible
      model: m
      base_url: http://127.0.0.1:9/v1
      api_key: "${KEY}"
"""


@pytest.mark.parametrize("key", ["clé", os.fsdecode(b"k\xff")])
def test_a_key_that_is_not_ascii_is_refused_where_it_is_set_and_never_shown(key: str) -> None:
    with pytest.raises(SpecError) as refused:
        load_specs_from_text(AGENTS, source="agents.yaml", environ={"KEY": key})
    message = str(refused.value)
    assert "agents.a.model.api_key" in message and "not ASCII" in message
    assert "agents.yaml:8:" in message
    assert key not in message


def test_an_ascii_key_loads() -> None:
    specs = load_specs_from_text(AGENTS, source="agents.yaml", environ={"KEY": "sk-abc"})
    assert specs["a"].model.api_key == "sk-abc"
