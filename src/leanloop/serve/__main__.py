"""``python -m leanloop.serve agents.yaml ...``: the same as ``leanloop serve``."""

from __future__ import annotations

import sys

from leanloop.serve.main import serve_main

if __name__ == "__main__":
    sys.exit(serve_main(sys.argv[1:]))
