"""``python -m leanloop`` runs the CLI."""

from __future__ import annotations

import sys

from leanloop.cli import main

sys.exit(main())
