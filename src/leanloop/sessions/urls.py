"""Session-store URLs shown in messages, without their passwords.

Apart from :mod:`leanloop.sessions.stores` so that the SQL stores can use it: ``stores``
opens them (on use, from within a function), and a store importing ``stores`` back would
close an import circle.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact_url"]

_PASSWORD_PARAM = re.compile(r"(?i)(\bpassword=)[^&;\s]*")


def redact_url(url: str) -> str:
    """``url`` without its password (``user:PASSWORD@`` or ``?password=``), for messages."""
    url = _PASSWORD_PARAM.sub(r"\1***", url)
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"  # IPv6
        port = f":{parts.port}" if parts.port is not None else ""
        netloc = f"{parts.username or ''}:***@{host}{port}"
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return re.sub(r"//[^/]*@", "//***@", url)  # unparsable: hide the whole user part
