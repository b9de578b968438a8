"""URLs as leanloop shows and logs them: without the credentials they may carry.

A model's ``base_url`` (or a session store's URL) may hold a password
(``http://user:PASSWORD@host/v1``) or a key in its query (``?api_key=...``). Whatever
leanloop prints, logs, writes into a report or sends to a client of ``serve`` goes
through one of these:

- :func:`redact_url` for a URL leanloop has in hand;
- :func:`redact_text` for text that may hold URLs somewhere inside (an exception's
  message: httpx and the provider SDKs put the request's URL into theirs);
- :func:`redact_logs` for log records: httpx logs every request's URL at ``INFO``.

What is hidden: the password of the user part (the user name stays: it tells which
account was used), *every* query value and the fragment. A query key names what was set
and stays; its value is hidden whatever the key, since no list of secret-looking keys is
ever complete (``sig``, ``sv``, ``code``, a vendor's own). ``key=value`` pairs outside a
URL are hidden when the key names a secret (``password=``, ``api_key=``, ``token=``: a
libpq connection string, a logged keyword).

Only the standard library is imported: every layer may use it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK", "REPORT_TEXTS", "redact_logs", "redact_report", "redact_text", "redact_url"]

MASK = "***"
"""What stands where a secret was."""

# A URL inside text: a scheme, "://", then everything up to a space or a quote. Trailing
# punctuation is the sentence's, not the URL's (see _redacted_match).
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")
_TRAILING = ".,;:!?)]}"
# key=value outside a URL, for keys that name a secret (word-bounded: max_tokens= is none).
_SECRET_PAIR = re.compile(
    r"(?i)(?<![\w-])((?:[\w-]*[_-])?(?:password|passwd|pwd|key|apikey|token|secret|"
    r"signature|sig|auth|authorization|credentials?)=)([^&;,\s'\"()<>\[\]{}]+)"
)
_QUERY_SEPARATOR = re.compile(r"([&;])")
# The HTTP clients' loggers: their records are created there, so a filter on the logger
# sees them whatever handler (the user's own too) writes them.
_LIBRARY_LOGGERS = ("httpx", "openai._base_client", "anthropic._base_client")


def redact_url(url: str) -> str:
    """``url`` with its password, query values and fragment hidden.

    ``http://bob:pw@host:8080/v1?api_key=k&x=1#t`` → ``http://bob:***@host:8080/v1?
    api_key=***&x=***#***``. Text that is no URL keeps all but its secret pairs
    (``password=...``); nothing here raises, whatever the text.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _hide_pairs(url)
    authority, tail = _authority(rest)
    userinfo, at, host = authority.rpartition("@")
    if at and ":" in userinfo:
        authority = f"{userinfo.partition(':')[0]}:{MASK}@{host}"
    tail, hash_, fragment = tail.partition("#")
    path, question, query = tail.partition("?")
    if question:
        parts = _QUERY_SEPARATOR.split(query)
        path += "?" + "".join(_masked_pair(part) for part in parts)
    if hash_ and fragment:
        path += f"#{MASK}"
    return f"{scheme}://{authority}{_hide_pairs(path)}"


def redact_text(text: str) -> str:
    """``text`` with every URL in it redacted (:func:`redact_url`), and secret pairs hidden.

    For messages leanloop did not write itself: an exception's text, a log line.
    """
    return _hide_pairs(_URL.sub(_redacted_match, text))


REPORT_TEXTS = ("error", "window_note", "events")
"""The keys of a run report whose text leanloop wrote from errors and servers' answers."""


def redact_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a run report (``RunReport.to_dict()``) with :data:`REPORT_TEXTS` redacted.

    The question, the answer and the tool results are the user's own data and stay as
    they are: only the text built from errors and server URLs is rewritten.
    """
    shown = dict(report)
    for key in REPORT_TEXTS:
        value = shown.get(key)
        if isinstance(value, str):
            shown[key] = redact_text(value)
        elif isinstance(value, list):
            shown[key] = [redact_text(v) if isinstance(v, str) else v for v in value]
    return shown


def redact_logs(*handlers: logging.Handler) -> None:
    """Redact URLs in what the HTTP clients log, and in all that ``handlers`` write.

    httpx logs ``HTTP Request: POST http://user:pw@host/v1/...?api_key=...`` at ``INFO``
    (which ``serve``'s log shows): its logger gets the filter, once, whoever handles the
    records. A handler given (the CLI's and ``serve``'s own) redacts every record it
    writes, leanloop's and other libraries' alike, tracebacks included. Calling it again
    adds nothing.
    """
    for target in [*(logging.getLogger(name) for name in _LIBRARY_LOGGERS), *handlers]:
        if _FILTER not in target.filters:
            target.addFilter(_FILTER)


class _RedactingFilter(logging.Filter):
    """Rewrites a record's message (and its traceback's text) through :func:`redact_text`."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit: the handler reports it
            return True
        redacted = redact_text(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            # Formatted here, where it can be redacted; the formatter then uses exc_text.
            trace = logging.Formatter().formatException(record.exc_info)
            if redact_text(trace) != trace:
                record.exc_text = redact_text(trace)
        elif record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        return True


_FILTER = _RedactingFilter()


def _authority(rest: str) -> tuple[str, str]:
    """``rest`` (after ``scheme://``) split into the authority and what follows it.

    The authority ends at the first ``/``, ``?`` or ``#``; but a password may hold an
    unescaped ``?`` or ``#`` (users paste them so): when a ``user:...@`` comes before
    the first ``/``, the authority reaches that ``@``'s host, so the password is hidden
    whole rather than cut at its ``#``.
    """
    slash = rest.find("/")
    before_slash = rest if slash == -1 else rest[:slash]
    userinfo, at, _ = before_slash.rpartition("@")
    if at and ":" in userinfo:
        return before_slash, rest[len(before_slash) :]
    end = min((found for mark in "/?#" if (found := rest.find(mark)) != -1), default=len(rest))
    return rest[:end], rest[end:]


def _masked_pair(part: str) -> str:
    """One ``key=value`` of a query (or a separator) with its value hidden."""
    if part in {"", "&", ";"}:
        return part
    key, equals, _ = part.partition("=")
    return f"{key}={MASK}" if equals else MASK  # a bare value may be a key too


def _hide_pairs(text: str) -> str:
    return _SECRET_PAIR.sub(rf"\1{MASK}", text)


def _redacted_match(match: re.Match[str]) -> str:
    url = match.group(0)
    kept = len(url.rstrip(_TRAILING))
    return redact_url(url[:kept]) + url[kept:]
