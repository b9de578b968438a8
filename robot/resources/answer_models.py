"""Pydantic models that the typed-answer tests name as ``output_schema``.

Both test trees import this module as ``answer_models``: the Robot libraries put
``robot/resources`` on ``sys.path``, and ``features/steps/structured_steps.py`` appends
the same folder. :data:`NOT_A_MODEL` and :class:`PlainCity` are for the validation
errors of an ``output_schema`` that does not name a pydantic model.
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["NOT_A_MODEL", "City", "PlainCity"]


class City(BaseModel):
    """A city and the country it is in."""

    name: str
    country: str


class PlainCity:
    """A plain class with the fields of :class:`City`: not a pydantic model."""

    name: str = ""
    country: str = ""


NOT_A_MODEL = {"name": "Paris", "country": "France"}
"""A value, not a class."""
