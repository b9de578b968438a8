"""How big the model's context window really is, and who said so.

Resolution order, first answer wins (``Window.source`` records which):

1. ``config``: ``context_window`` in the model's configuration.
2. The server that loaded the model, asked asynchronously (1.5 s per request): llama.cpp
   ``GET /props``, an OpenAI-compatible ``GET /v1/models`` (llama.cpp ``meta.n_ctx``, vLLM
   ``max_model_len``), LM Studio ``GET /api/v0/models``, Ollama ``/api/ps`` then
   ``/api/show``. Hosted OpenAI is never asked.
3. ``profile``: LangChain's static ``model.profile["max_input_tokens"]``.
4. A default: 128,000 tokens for a hosted API, 32,768 for a local server that will not say.

Ollama is different: it loads a model at the ``num_ctx`` each request asks for, and
leanloop sends the window it budgets for with every request (see
:func:`leanloop.budget.run.sized_model`). So for ``provider: ollama`` the window is
``config``, else ``server:ollama-ps`` (the ``context_length`` of the loaded model in
``GET /api/ps``), else ``server:ollama-show`` (a ``num_ctx`` line in the Modelfile's
parameters), else ``default:ollama``: 8,192 tokens, or the trained length when that is
smaller. The trained length alone (``/api/show``'s ``model_info``) is never the window:
Ollama does not load a model that big unless asked, and asking for it may not fit memory.

A local server decides its window when it loads the model, often far below what the model
was trained for, so only the server's own answer is trusted over the configuration. Server
answers are cached per (endpoint, model) for 30 s and "unknown" for 3 s, so a step does not
pay for a probe every time and a server that starts late is noticed soon; resolutions of one
(endpoint, model) at the same time share one probe, so the runs that share a resolver (the
agents of a :class:`~leanloop.budget.shared.SharedState`) ask a server once while its
answer holds, however many turns start together.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import ipaddress
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit

import httpx

from leanloop.exceptions import InvalidArgument
from leanloop.httpclients import shared_ssl_context
from leanloop.redact import redact_url

__all__ = [
    "DEFAULT_HOSTED_WINDOW",
    "DEFAULT_LOCAL_WINDOW",
    "OLLAMA_DEFAULT_URL",
    "OLLAMA_DEFAULT_WINDOW",
    "PROBE_TIMEOUT_S",
    "SMALL_WINDOW_TOKENS",
    "TEMPLATE_DROPS_TOOLS",
    "Window",
    "WindowResolver",
    "is_own_host",
    "small_window_warning",
]

logger = logging.getLogger(__name__)

DEFAULT_HOSTED_WINDOW = 128_000
"""Window assumed for a hosted API whose model profile does not say."""

TEMPLATE_DROPS_TOOLS = "leanloop:answer-turn-drops-tools"
"""The mark a chat template carries when it leaves the tool list out after tool results."""
DEFAULT_LOCAL_WINDOW = 32_768
"""Window assumed for a local server that will not say."""
SMALL_WINDOW_TOKENS = 8_192
"""Below this, tool use works poorly: results are trimmed almost every step."""
PROBE_TIMEOUT_S = 1.5
"""Seconds allowed for each request to the server."""
OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"
OLLAMA_DEFAULT_WINDOW = 8_192
"""The ``num_ctx`` asked of an Ollama whose loaded model and configuration do not say: safe
for memory on a small machine, and far above Ollama's own default (2,048 or 4,096), which
would cut the front of the conversation without a word."""
ANSWER_TTL_S = 30.0
UNKNOWN_TTL_S = 3.0

_HOSTED_OPENAI_HOST = "api.openai.com"
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)

ClientFactory = Callable[[], httpx.AsyncClient]
Clock = Callable[[], float]


@dataclass(frozen=True)
class Window:
    """A context window in tokens and where the figure came from.

    Attributes:
        tokens: The window, in tokens (at least 1).
        source: ``config``, ``server:llama.cpp``, ``server:openai-models``,
            ``server:lm-studio``, ``server:ollama-ps``, ``server:ollama-show``, ``profile``,
            ``default:hosted``, ``default:local`` or ``default:ollama``.
        drops_tools_on_answer_turns: See the field.
        note: Why the figure is only a default (the probe failed, or the host is hosted
            and says nothing), so reports can say so; ``None`` for a figure a server,
            the configuration or the model profile gave.
    """

    tokens: int
    source: str
    note: str | None = None
    drops_tools_on_answer_turns: bool = False
    """The server's chat template leaves the tool list out after tool results (it says so
    with the ``leanloop:answer-turn-drops-tools`` mark, as leanloop's own template does)."""
    served: str | None = None
    """The model the server says it serves: llama.cpp's model file name (``/props``
    ``model_path``) or the ``/v1/models`` id; ``None`` when it did not say."""
    n_params: int | None = None
    """The served model's parameter count (llama.cpp ``/v1/models`` ``meta.n_params``)."""


@dataclass(frozen=True)
class _Probed:
    """A server's answer (``window is None``: it would not say) and when to ask again."""

    window: Window | None
    expires: float


def small_window_warning(window: Window) -> str | None:
    """Return the one-line warning for a window under 8,192 tokens, else ``None``."""
    if window.tokens >= SMALL_WINDOW_TOKENS:
        return None
    return (
        f"the context window is only {window.tokens:,} tokens ({window.source}); tools work "
        f"poorly below {SMALL_WINDOW_TOKENS:,} and old results will be trimmed often; raise the "
        "server's context if you can (llama-server --ctx-size 16384, Ollama num_ctx 16384 "
        "in a Modelfile or the request options, LM Studio's context length setting)"
    )


class WindowResolver:
    """Resolves context windows, caching server answers per (endpoint, model).

    Args:
        clock: Monotonic seconds; inject a fake one in tests.
        client_factory: Builds the ``httpx.AsyncClient`` used for one resolution's probes.
        answer_ttl: Seconds a server's answer is reused.
        unknown_ttl: Seconds a server's silence is reused.
        timeout: Seconds allowed for each request to the server.
    """

    def __init__(
        self,
        *,
        clock: Clock = time.monotonic,
        client_factory: ClientFactory | None = None,
        answer_ttl: float = ANSWER_TTL_S,
        unknown_ttl: float = UNKNOWN_TTL_S,
        timeout: float = PROBE_TIMEOUT_S,
    ) -> None:
        self._clock = clock
        self._client_factory = client_factory or _default_client
        self._answer_ttl = answer_ttl
        self._unknown_ttl = unknown_ttl
        self._timeout = timeout
        self._cache: dict[tuple[str, str, str], _Probed] = {}
        # The probe under way per key; its future's result is the answer (``None``: the
        # prober was cancelled). A thread-safe future: waiters may be on other loops.
        self._flights: dict[tuple[str, str, str], concurrent.futures.Future[_Probed | None]] = {}
        # Resolutions from several event loops or threads may share one resolver.
        self._lock = threading.Lock()

    async def resolve(
        self,
        *,
        configured: int | None,
        provider: str | None,
        base_url: str | None,
        model_name: str | None,
        profile: Mapping[str, Any] | None,
        api_key: str | None = None,
    ) -> Window:
        """Return the model's window, by the order in the module docstring.

        Args:
            configured: ``context_window`` from the configuration, if set.
            provider: ``openai``, ``ollama``, ``openai-compatible`` or ``None`` (a class path).
            base_url: The server's base URL, if any.
            model_name: The model name the server knows.
            profile: The chat model's ``profile`` mapping, if any.
            api_key: Sent as a bearer token to servers that want one; never logged.

        Raises:
            InvalidArgument: ``configured`` is zero or negative.
        """
        if configured is not None:
            if isinstance(configured, bool) or configured < 1:
                msg = f"context_window must be a positive number of tokens, got {configured!r}"
                raise InvalidArgument(msg)
            return Window(configured, "config")
        if provider == "ollama":
            return await self._ollama(base_url, model_name or "", api_key)
        local = _is_local(provider, base_url)
        if local:
            found = await self._probe_cached(provider, base_url, model_name or "", api_key)
            if found is not None:
                return found
        from_profile = _positive_int((profile or {}).get("max_input_tokens"))
        if from_profile is not None:
            return Window(from_profile, "profile")
        # The notes are shown (window, the report, serve's replies): no credentials.
        shown = redact_url(base_url) if base_url else base_url
        if local and not _is_hosted(base_url):
            note = f"the server at {shown} did not say its window; set context_window"
            return Window(DEFAULT_LOCAL_WINDOW, "default:local", note)
        where = f"{shown} (a hosted API)" if base_url else "the hosted API"
        note = f"{where} did not say its window; set context_window if it is smaller"
        return Window(DEFAULT_HOSTED_WINDOW, "default:hosted", note)

    def clear(self) -> None:
        """Forget every cached server answer."""
        with self._lock:
            self._cache.clear()

    async def served(
        self,
        *,
        provider: str | None,
        base_url: str | None,
        model_name: str | None,
        api_key: str | None = None,
    ) -> Window | None:
        """What a local OpenAI-compatible server says of itself (its window, the model it
        serves, its size), whatever the configuration says of the window; ``None`` for a
        hosted API, Ollama's own API, or a server that did not answer. Cached as
        :meth:`resolve`'s probe is (the same requests answer both)."""
        if provider == "ollama" or not base_url or not _is_local(provider, base_url):
            return None
        return await self._probe_cached(provider, base_url, model_name or "", api_key)

    async def _ollama(self, base_url: str | None, model: str, api_key: str | None) -> Window:
        """The window an Ollama run asks for: the loaded model's, the Modelfile's, a default."""
        found = await self._probe_cached("ollama", base_url, model, api_key)
        # The probe always answers for Ollama (its default included); this is for the types.
        return found or Window(OLLAMA_DEFAULT_WINDOW, "default:ollama", _ollama_note(model, None))

    async def _probe_cached(
        self, provider: str | None, base_url: str | None, model: str, api_key: str | None
    ) -> Window | None:
        """The server's answer for (provider, endpoint, model): cached, or asked once.

        Resolutions that need the same answer at the same time (serve's concurrent turns,
        a run's profile and its window) share one probe: the first asks, the others wait
        for its answer, from any event loop or thread. Should the one asking be cancelled,
        a waiting one asks in its place.
        """
        ollama = provider == "ollama"
        base = (base_url or OLLAMA_DEFAULT_URL).rstrip("/")
        key = (provider or "", base, model)
        while True:
            with self._lock:
                cached = self._cache.get(key)
                if cached is not None and cached.expires > self._clock():
                    return cached.window
                flight = self._flights.get(key)
                if flight is None:
                    flight = self._flights[key] = concurrent.futures.Future()
                    break
            # Shielded: a waiter's cancel (its client went away) must not cancel the
            # shared future, which the others wait on too.
            probed = await asyncio.shield(asyncio.wrap_future(flight))
            if probed is not None:
                return probed.window
        try:
            headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
            async with self._client_factory() as client:
                probe = _Probe(
                    client, base=base, model=model, headers=headers, timeout=self._timeout
                )
                found = await (probe.ollama_run() if ollama else probe.openai_compatible())
        except BaseException:
            with self._lock:
                del self._flights[key]
            flight.set_result(None)  # no answer: a waiter asks again
            raise
        # An Ollama answer read from /api/show (or a default) describes a model that is not
        # loaded yet; ask again soon, since /api/ps knows better once it is.
        provisional = found is None or found.source in ("server:ollama-show", "default:ollama")
        ttl = self._unknown_ttl if provisional else self._answer_ttl
        answer = _Probed(found, self._clock() + ttl)
        with self._lock:
            self._cache[key] = answer
            del self._flights[key]
        flight.set_result(answer)
        logger.debug("window probe %s model=%r: %s", redact_url(base), model, found)
        return found


class _Probe:
    """The requests of one resolution against one server; every failure means "unknown"."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        base: str,
        model: str,
        headers: Mapping[str, str],
        timeout: float,
    ) -> None:
        self._client = client
        self._base = base
        self._root = base.removesuffix("/v1")
        self._model = model
        self._headers = dict(headers)
        self._timeout = timeout

    async def openai_compatible(self) -> Window | None:
        """Ask every kind of local server at once; the first in priority order wins."""
        answers = await asyncio.gather(
            self._llama_props(),
            self._openai_models(),
            self._lm_studio(),
            self.ollama(),
        )
        found = next((answer for answer in answers if answer is not None), None)
        if found is None:
            return None
        # What the model is may come from another answer than the window's.
        served = next((a.served for a in answers if a is not None and a.served), None)
        n_params = next((a.n_params for a in answers if a is not None and a.n_params), None)
        return dataclasses.replace(found, served=found.served or served, n_params=n_params)

    async def ollama(self) -> Window | None:
        """Ollama behind an OpenAI-compatible URL: ``/api/ps``, else ``/api/show``.

        Through ``/v1`` no ``num_ctx`` can be sent, so nothing better than the Modelfile's
        or the trained length is known when the model is not loaded.
        """
        running, shown = await asyncio.gather(self._ollama_ps(), self._ollama_show())
        if running is not None:
            return running
        return (shown.window or shown.trained) if shown is not None else None

    async def ollama_run(self) -> Window:
        """Ollama asked through its own API (``provider: ollama``): see the module docstring.

        The loaded model's ``/api/ps`` entry, else the Modelfile's ``num_ctx``, else
        :data:`OLLAMA_DEFAULT_WINDOW` (the trained length when smaller); never the trained
        length alone.
        """
        running, shown = await asyncio.gather(self._ollama_ps(), self._ollama_show())
        if running is not None:
            return running
        if shown is not None and shown.window is not None:
            return shown.window
        trained = shown.trained.tokens if shown is not None and shown.trained else None
        tokens = min(OLLAMA_DEFAULT_WINDOW, trained or OLLAMA_DEFAULT_WINDOW)
        return Window(tokens, "default:ollama", _ollama_note(self._model, trained))

    async def _llama_props(self) -> Window | None:
        body = await self._json("GET", f"{self._root}/props")
        if not isinstance(body, Mapping):
            return None
        settings = body.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, Mapping) else None
        found = _window(n_ctx if n_ctx is not None else body.get("n_ctx"), "server:llama.cpp")
        template = body.get("chat_template")
        if found is not None and isinstance(template, str) and TEMPLATE_DROPS_TOOLS in template:
            found = dataclasses.replace(found, drops_tools_on_answer_turns=True)
        path = body.get("model_path")
        if found is not None and isinstance(path, str) and path.strip():
            found = dataclasses.replace(found, served=PurePath(path.strip()).name)
        return found

    async def _openai_models(self) -> Window | None:
        entry = _pick(await self._json("GET", f"{self._base}/models"), "data", self._model)
        if entry is None:
            return None
        meta = entry.get("meta")
        n_ctx = meta.get("n_ctx") if isinstance(meta, Mapping) else None
        value = n_ctx if n_ctx is not None else entry.get("max_model_len")
        found = _window(value, "server:openai-models")
        if found is None:
            return None
        served = entry.get("id")
        n_params = _positive_int(meta.get("n_params")) if isinstance(meta, Mapping) else None
        return dataclasses.replace(
            found,
            served=PurePath(served).name if isinstance(served, str) else None,
            n_params=n_params,
        )

    async def _lm_studio(self) -> Window | None:
        entry = _pick(await self._json("GET", f"{self._root}/api/v0/models"), "data", self._model)
        return _window(entry and entry.get("loaded_context_length"), "server:lm-studio")

    async def _ollama_ps(self) -> Window | None:
        url = f"{self._root}/api/ps"
        body = await self._json("GET", url, retry_post=True)
        # Only the entry naming this model: another loaded model's window says nothing.
        entry = _pick(body, "models", self._model, named_only=True)
        return _window(entry and entry.get("context_length"), "server:ollama-ps")

    async def _ollama_show(self) -> _Shown | None:
        if not self._model:
            return None
        body = await self._json("POST", f"{self._root}/api/show", json={"model": self._model})
        if not isinstance(body, Mapping):
            return None
        shown = _Shown()
        parameters = body.get("parameters")
        if isinstance(parameters, str) and (match := _NUM_CTX.search(parameters)):
            shown.window = _window(int(match.group(1)), "server:ollama-show")
        info = body.get("model_info")
        if isinstance(info, Mapping):
            arch = info.get("general.architecture")
            shown.trained = _window(info.get(f"{arch}.context_length"), "server:ollama-show")
        return shown

    async def _json(
        self, method: str, url: str, *, json: Any = None, retry_post: bool = False
    ) -> Any:
        """The decoded JSON body of a 2xx answer, or ``None`` for anything else."""
        try:
            async with asyncio.timeout(self._timeout):
                response = await self._send(method, url, json)
                if response.status_code == httpx.codes.METHOD_NOT_ALLOWED and retry_post:
                    response = await self._send("POST", url, json)
        except Exception as exc:  # any failure of a probe means "unknown"
            # Timeouts, refused connections, bad URLs and transport errors (some arrive
            # wrapped in an ExceptionGroup) all mean the server did not say.
            logger.debug("window probe %s %s failed: %s", method, url, type(exc).__name__)
            return None
        if not response.is_success:
            return None
        try:
            return response.json()
        except ValueError:
            return None

    def _send(self, method: str, url: str, json: Any) -> Awaitable[httpx.Response]:
        return self._client.request(method, url, json=json, headers=self._headers)


@dataclass
class _Shown:
    """What Ollama's ``/api/show`` says: the Modelfile's ``num_ctx``, the trained length."""

    window: Window | None = None
    trained: Window | None = None


def _ollama_note(model: str, trained: int | None) -> str:
    """Why an Ollama window is only a default, and how to choose another."""
    name = repr(model) if model else "the model"
    where = f"Ollama reports no loaded {name} and no context_window is set"
    if trained is not None and trained < OLLAMA_DEFAULT_WINDOW:
        what = f"num_ctx {trained:,}, a default: the length the model was trained for"
        return f"{where}; requests ask for {what}; set context_window to change it"
    what = f"num_ctx {OLLAMA_DEFAULT_WINDOW:,}, leanloop's default"
    what += f" (the model was trained for {trained:,})" if trained else ""
    return f"{where}; requests ask for {what}; set context_window for a bigger window"


def _default_client() -> httpx.AsyncClient:
    # The process's one SSL context: loading the CA bundle costs tens of milliseconds.
    return httpx.AsyncClient(timeout=PROBE_TIMEOUT_S, verify=shared_ssl_context())


def _is_local(provider: str | None, base_url: str | None) -> bool:
    """Whether a server of our own may be asked (hosted OpenAI and class paths are not)."""
    if provider == "ollama":
        return True
    if not base_url:
        return False
    try:
        host = urlsplit(base_url).hostname or ""
    except ValueError:  # not a URL at all: there is no server to ask
        return False
    return host != _HOSTED_OPENAI_HOST


def _is_hosted(base_url: str | None) -> bool:
    """Whether ``base_url`` names a public host (see :func:`is_own_host`)."""
    if not base_url:
        return False
    try:
        host = urlsplit(base_url).hostname or ""
    except ValueError:
        return False
    return not is_own_host(host)


def is_own_host(host: str) -> bool:
    """Whether ``host`` is a server of our own rather than a hosted API.

    Loopback, private and link-local addresses, ``localhost``, ``.local``/``.internal``
    names and one-label names (a container's service name) are ours; anything else is a
    hosted API: its default window is the hosted one, and it is not sent texts to count.
    """
    if host == "localhost" or "." not in host or host.endswith((".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _pick(body: Any, key: str, model: str, *, named_only: bool = False) -> Mapping[str, Any] | None:
    """The entry of ``body[key]`` naming ``model``, or the only entry (unless ``named_only``);
    ``None`` otherwise."""
    if not isinstance(body, Mapping):
        return None
    entries = [e for e in body.get(key) or () if isinstance(e, Mapping)]
    names = ("id", "name", "model")
    for entry in entries:
        known = {str(entry.get(n)) for n in names if entry.get(n) is not None}
        if model and (model in known or f"{model}:latest" in known):
            return entry
    return entries[0] if len(entries) == 1 and not named_only else None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def _window(value: Any, source: str) -> Window | None:
    tokens = _positive_int(value)
    return Window(tokens, source) if tokens is not None else None
