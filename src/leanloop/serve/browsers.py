"""Without a token: what keeps a web page in the user's browser from driving the server.

``leanloop serve --no-auth`` binds a loopback address only, so no other machine reaches
it; a web page the user has open does, though, through the browser. Three checks close
the ways it could (the :class:`~leanloop.serve.limits.Gate` runs them when no token is
set, before anything else):

* **Host** must name this machine (``localhost``, ``127.0.0.1``, ``[::1]``, any port).
  DNS rebinding points a site's own name at 127.0.0.1, so its page's requests count as
  same-origin and it could read the answers; they still carry the site's name as Host.
* **Origin**, when a browser sends one, must be a loopback origin: a page on another
  site is refused before its request runs anything, whatever it could read back.
* **Content-Type** must be ``application/json``. A page may send ``text/plain``, form
  data, or no type at all to any site without asking first (a "simple" request, no CORS
  preflight); JSON makes the browser ask, and this server never says yes.

With a token none of this is needed: a browser sends ``Authorization`` to another site
only after a preflight this server never grants, and a page cannot know the token.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from leanloop.serve.errors import ServeError

__all__ = ["check_host", "check_json", "check_origin", "is_loopback"]

_SHOWN_CHARS = 80
"""The most of a refused header a message repeats."""

_NO_AUTH = "without a token (--no-auth)"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_host(value: str | None) -> None:
    """Refuse a ``Host`` header that does not name this machine.

    No header at all is let through: every browser sends one (HTTP/1.1 requires it), so
    its absence is a hand-made client, not a web page.

    Raises:
        ServeError: 400 ``host_not_allowed``.
    """
    if value is None or _loopback_authority(value):
        return
    msg = (
        f"the Host header {_shown(value)} is not this machine: {_NO_AUTH} the server "
        "answers only requests addressed to localhost, 127.0.0.1 or [::1] (another name "
        "may be a web page's own, pointed here by DNS rebinding)"
    )
    raise ServeError(400, msg, code="host_not_allowed")


def check_origin(value: str | None) -> None:
    """Refuse a request a web page on another origin sent.

    Raises:
        ServeError: 403 ``origin_not_allowed`` for an ``Origin`` that is not
            ``http(s)://`` a loopback host (``null``, from a sandbox or a file, included).
    """
    if value is None or _loopback_origin(value):
        return
    msg = (
        f"the request comes from the web page {_shown(value)}: {_NO_AUTH} the server "
        "refuses requests from pages on other sites; serve with a bearer token "
        "(LEANLOOP_SERVE_TOKEN) to let them in"
    )
    raise ServeError(403, msg, code="origin_not_allowed")


def check_json(value: str | None) -> None:
    """Refuse a request body that is not labelled ``application/json``.

    Raises:
        ServeError: 415 ``unsupported_media_type``.
    """
    if value is not None and value.partition(";")[0].strip().lower() == "application/json":
        return
    given = f"labelled {_shown(value)}" if value is not None else "not labelled"
    msg = (
        f"the request body is {given}: {_NO_AUTH} the server takes only "
        "'Content-Type: application/json' (a web page can send other types to any site "
        "without asking the browser first)"
    )
    raise ServeError(415, msg, code="unsupported_media_type")


def _loopback_authority(value: str) -> bool:
    """Whether ``host[:port]`` (``[v6][:port]`` for IPv6) names a loopback host."""
    text = value.strip()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        return bool(bracket) and _port(rest) and is_loopback(host)
    host, colon, port = text.partition(":")
    if colon and (":" in port or not _port(colon + port)):
        return False  # an IPv6 address without brackets, or a port that is none
    return bool(host) and is_loopback(host)


def _port(text: str) -> bool:
    """Whether ``text`` is empty or ``:`` and a port number."""
    digits = text[1:]
    if not text:
        return True
    # isascii: "²" is a digit to isdigit() (a Host header is Latin-1), not to int().
    return text[0] == ":" and digits.isascii() and digits.isdigit() and int(digits) < 65_536


def _loopback_origin(value: str) -> bool:
    parts = urlsplit(value.strip())
    if parts.scheme not in {"http", "https"} or parts.path or parts.query or parts.fragment:
        return False
    return _loopback_authority(parts.netloc) if "@" not in parts.netloc else False


def _shown(value: str | None) -> str:
    """``value`` quoted for a message, cut to its first characters."""
    text = value or ""
    return repr(text[:_SHOWN_CHARS] + ("…" if len(text) > _SHOWN_CHARS else ""))
