"""Names in src/ that vulture cannot see used: read by a framework, by users, or by asdict.

``nox -s dead_code`` runs ``vulture`` over ``src/`` and this file (``[tool.vulture]`` in
pyproject.toml); a name written here counts as used. This file is only parsed, never
imported or run. Each entry says who uses the name. Add a name only when its user is
outside src/ by design (a framework hook, a public field); code that nothing uses should
go, not come here.
"""

# ruff: noqa: B018 - the attribute accesses are the whitelist

from __future__ import annotations

from types import SimpleNamespace

import leanloop
from leanloop.agent import LLMAgent
from leanloop.budget.fit import FitResult
from leanloop.budget.overflow import Overflow
from leanloop.budget.tokens import MessageCounter, TokenEstimator
from leanloop.cache_usage import RequestTally
from leanloop.events import EventRecorder
from leanloop.protocol.stream import HoldBack
from leanloop.pruning.extract import PruneOutcome, Pruner
from leanloop.report import RequestRecord, RunReport
from leanloop.serve.progress import ProgressHandler
from leanloop.sessions.model import Turn
from leanloop.sessions.sql import SqlStore
from leanloop.spec.types import ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.testing.server import FakeModelServer, _HTTPServer
from leanloop.tools.registry import ToolOutcome

# --- Python and framework hooks ----------------------------------------------------------

# PEP 562: the package's lazy exports and __version__.
leanloop.__getattr__

# LangChain's BaseChatModel: the provider name and the async generation hook.
ScriptedChatModel._llm_type
ScriptedChatModel._agenerate

# LangChain's AsyncCallbackHandler: the callback manager calls on_custom_event.
EventRecorder.on_custom_event

# Parameters that someone else's signature fixes, whether or not the body reads them:
_parameters = SimpleNamespace()
_parameters.signum  # cli/command.py: signal.signal's handler(signum, frame)
_parameters.run_id  # events.py: on_custom_event(name, data, *, run_id, tags, ...)
_parameters.tags
_parameters.string  # tools/_filetools.py: a Protocol of the `regex` module's
_parameters.concurrent  # Pattern.search/match(string, *, timeout, concurrent)

# --- Public fields and methods (documented API, read by callers and tests) ---------------

# RunReport / RequestRecord: the run report users get (and `to_dict`/`asdict` exports);
# the loop only writes these fields.
RunReport.window_note
RunReport.trimmed_results
RunReport.tokens_saved_by_trimming
RunReport.chars_saved_by_pruning
RunReport.overflow_recoveries
RunReport.repeated_calls
RunReport.stop_reason
RunReport.elapsed_s
RunReport.set_aside
RequestRecord.estimated_tokens
RequestRecord.char_estimate_tokens

# ModelSpec.temperature: a portable model option, passed on by name (spec/options.py).
ModelSpec.temperature

# Results callers inspect: whether fitting still ran over, where a pruning ratio came from.
FitResult.over
PruneOutcome.ratio_source

# ToolOutcome (ToolRegistry.run): a call its time limit could not stop in time, and how
# long it really ran; the text and notes say it too.
ToolOutcome.blocked_loop
ToolOutcome.ran_s

# serve/main.py replaces uvicorn.Server.capture_signals on the instance: uvicorn's serve()
# calls it (the graceful SIGTERM that exits 0).
_parameters.capture_signals

# LLMAgent.from_model: the public Python-first constructor (README, tests/agent).
LLMAgent.from_model

# Public helpers of the budget and protocol packages (documented in their docstrings).
Overflow.to_error
MessageCounter.count_fn
TokenEstimator.observations
HoldBack.saw_call

# Test hooks, documented as such: how many messages a counter measured.
MessageCounter.computations

# Read through PORTABLE_OPTIONS with getattr (models._arguments): the model option.
ModelSpec.max_retries
# Public API of a stored turn (leanloop.sessions), for callers inspecting a session.
Turn.last_step
# Public API of a session store (leanloop.sessions.SessionStore): a turn begun on its own;
# run_turn begins its turns with start_turn (the session read in the same transaction).
SqlStore.begin_turn

# Read through RunReport.to_dict (asdict): the pruning pass's completion tokens.
RequestTally.completion_tokens

# The fake model server (leanloop.testing.server): http.server calls the handler's do_GET,
# do_POST and log_message and reads protocol_version, close_connection; socketserver reads
# request_queue_size and daemon_threads. chat_bodies is public API for the tests using it.
RequestHandler = SimpleNamespace()  # made in _server_http.make_handler
RequestHandler.protocol_version
RequestHandler.log_message
RequestHandler.do_GET
RequestHandler.do_POST
RequestHandler.close_connection
_HTTPServer.request_queue_size
_HTTPServer.daemon_threads
FakeModelServer.chat_bodies

# ScriptedChatModel: LangChain calls _generate (sync invoke); peak_in_flight and
# wait_for_requests are its documented test hooks (module docstring).
ScriptedChatModel._generate
ScriptedChatModel.peak_in_flight
ScriptedChatModel.wait_for_requests

# serve/progress.py: LangChain calls ProgressHandler.on_tool_start with these keywords
# (the override keeps AsyncCallbackHandler's signature).
ProgressHandler.on_tool_start
_parameters.parent_run_id
_parameters.inputs

# pruning/extract.py: a public method for code that builds a Pruner and changes a setting
# (the Behave steps that size chunks read without an allowance or a shapes request).
Pruner.with_settings

# localmodel/prebuilt.py `configure`: xllamacpp's CommonParams fields, read by llama.cpp's
# native server (the prebuilt engine, ADR 0033).
_common_params = SimpleNamespace()
_common_params.hostnames
_common_params.n_parallel
_common_params.model_alias
_common_params.use_jinja
_common_params.chat_template
_common_params.offline

# agent/runnable.py `aresume`: the public API that goes on with a paused turn (ADR 0037),
# called by users and the Behave steps, not inside src/.
LLMAgent.aresume

# report.py `pending_calls`: the calls a paused run waits for, read from the report's dict
# by the CLI, serve, batch and users (ADR 0037).
RunReport.pending_calls
