"""``leanloop serve``: the agents of an agents file behind OpenAI's chat-completions API.

Any client of the OpenAI API (the ``openai`` package, curl, editors) talks to an agent by
naming it as the ``model`` (ADR 0025)::

    LEANLOOP_SERVE_TOKEN=s3cret leanloop serve agents.yaml --port 8080
    curl -H "Authorization: Bearer s3cret" http://127.0.0.1:8080/v1/chat/completions \\
        -H "Content-Type: application/json" \\
        -d '{"model": "reader", "messages": [{"role": "user", "content": "Which port?"}]}'

A run that ends with the model's answer is ``finish_reason: "stop"``; one the context
budget ended, ``"length"``; one paused for approval of tool calls, ``"stop"`` with the
pending calls in the report (the session's next request sends the decisions under
``leanloop.approvals``); one that ended otherwise (its rounds used, calls repeated, a
reply that was no answer) is a 502 ``ended_without_answer`` whose error object holds the
text and the report. The report, under ``leanloop``, names the ``stop_reason`` every time
(:mod:`~leanloop.serve.streaming` has the table). ``--no-auth`` (loopback only) answers
only requests addressed to this machine, from no other site's web page, with JSON
bodies (:mod:`~leanloop.serve.browsers`).

The modules: :mod:`~leanloop.serve.app` (the routes), :mod:`~leanloop.serve.requests`
(a request into an agent's input and session), :mod:`~leanloop.serve.streaming` (OpenAI's
completion objects and server-sent events), :mod:`~leanloop.serve.progress` (a run's
chunks and progress events as one feed), :mod:`~leanloop.serve.approvals` (a session's
turn paused for approval: the decisions, the refusals), :mod:`~leanloop.serve.limits` (the token,
body size and concurrency), :mod:`~leanloop.serve.browsers` (without a token: no web
page drives the server), :mod:`~leanloop.serve.errors` (OpenAI's error shape) and
:mod:`~leanloop.serve.main` (the command line).

The names are imported on first use: ``serve_main`` needs FastAPI and uvicorn (the
``serve`` extra) only once it runs, and says how to install them when they are missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from leanloop._imports import lazy_exports

if TYPE_CHECKING:
    from leanloop.serve.app import create_app
    from leanloop.serve.errors import ServeError, ServeSetupError
    from leanloop.serve.limits import ServeSettings
    from leanloop.serve.main import TOKEN_ENV, serve_main

__all__ = [
    "TOKEN_ENV",
    "ServeError",
    "ServeSettings",
    "ServeSetupError",
    "create_app",
    "serve_main",
]

_getattr, __dir__ = lazy_exports(
    __name__,
    {
        "create_app": ".app",
        "ServeError": ".errors",
        "ServeSetupError": ".errors",
        "ServeSettings": ".limits",
        "TOKEN_ENV": ".main",
        "serve_main": ".main",
    },
)


def __getattr__(name: str) -> Any:
    return _getattr(name)
