"""Session-store URLs shown in messages, without their passwords.

Apart from :mod:`leanloop.sessions.stores` so that the SQL stores can use it: ``stores``
opens them (on use, from within a function), and a store importing ``stores`` back would
close an import circle. The redaction itself is leanloop's one for every URL it shows
(:mod:`leanloop.redact`): a store's URL and a model's ``base_url`` hide the same things.
"""

from __future__ import annotations

from leanloop.redact import redact_url

__all__ = ["redact_url"]
