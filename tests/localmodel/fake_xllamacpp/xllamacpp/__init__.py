"""A stand-in for the xllamacpp wheel (tests/localmodel): the fake model server behind it.

Put its folder first on ``PYTHONPATH`` and ``python -m leanloop.localmodel.prebuilt`` runs
this instead of llama.cpp. ``Server`` prints the parameters it got (one JSON line, into the
server's log) and serves leanloop's fake model server on them; ``FAKE_XLLAMACPP_MODE=fail``
makes it fail as llama.cpp does when the model does not load.
"""

from __future__ import annotations

import json
import os
import sys
from types import SimpleNamespace
from typing import Any

from leanloop.testing.server import FakeModelServer

BUILD_INFO = {"build_target": "fake"}


def get_system_info() -> str:
    return "CPU : FAKE = 1 |"


class CommonParams:
    """The fields leanloop sets, with llama.cpp's defaults."""

    def __init__(self) -> None:
        self.model = SimpleNamespace(path="", hf_repo="")
        self.hostnames = ["127.0.0.1"]
        self.port = 0
        self.n_ctx = 0
        self.n_parallel = 1
        self.ui = True
        self.model_alias: set[str] = set()
        self.use_jinja = True
        self.chat_template = ""
        self.offline = False


class Server:
    def __init__(self, params: CommonParams) -> None:
        seen: dict[str, Any] = {key: value for key, value in vars(params).items() if key != "model"}
        seen["model"] = params.model.path
        seen["model_alias"] = sorted(params.model_alias)
        print("fake xllamacpp params " + json.dumps(seen), flush=True)
        if os.environ.get("FAKE_XLLAMACPP_MODE") == "fail":
            print("E srv load_model: failed to load model", file=sys.stderr, flush=True)
            raise RuntimeError("Failed to init server, please check the input params.")
        self._server = FakeModelServer(
            model=params.model.path,
            n_ctx=params.n_ctx or 4096,
            host=params.hostnames[0],
            port=params.port,
        )
        self._server.start()
        self.listening_address = f"http://{params.hostnames[0]}:{params.port}"
