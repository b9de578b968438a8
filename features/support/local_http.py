"""A test HTTP server on 127.0.0.1, served from a daemon thread: the parts every fake shares."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["LocalHttpServer"]


class _Server(ThreadingHTTPServer):
    # The standard library listens with a backlog of 5; a hundred clients connecting at
    # once then get connections reset, which real servers (backlog 511 and more) do not do.
    request_queue_size = 512
    daemon_threads = True


class LocalHttpServer:
    """Binds a free port on 127.0.0.1 for ``handler``; :meth:`start` serves, :meth:`stop` ends.

    ``base_url`` is the ``/v1`` URL an OpenAI-compatible client talks to.
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._httpd = _Server(("127.0.0.1", 0), handler)

    @property
    def base_url(self) -> str:
        """The ``/v1`` URL a ChatOpenAI client talks to."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> None:
        """Serve on a daemon thread."""
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()
