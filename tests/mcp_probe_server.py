"""A stdio MCP server for the tests (run as a script: ``python mcp_probe_server.py LOG``).

Each process appends its ID to ``LOG`` when it starts, so a test counts the server
processes a run really started. Its tools:

- ``whoami(label)``: the label and the server's process ID;
- ``meet(label)``: waits (at most 30 s) until two calls are in the server at once;
- ``wait_here()``: writes a marker file ``waiting`` beside ``LOG`` holding its process
  ID, then never answers: a blocking sleep, so the server is stuck, closing its stdin
  does not end it, and only a signal does.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from mcp.server.fastmcp import FastMCP

LOG = Path(sys.argv[1])
with LOG.open("a") as log:
    log.write(f"{os.getpid()}\n")
app = FastMCP("probe", log_level="WARNING")
arrived: list[str] = []
everyone = asyncio.Event()


@app.tool()
def whoami(label: str) -> str:
    """The server's process ID."""
    return f"{label}: {os.getpid()}"


@app.tool()
async def meet(label: str) -> str:
    """Wait (at most 30 s) until two calls are here at once."""
    arrived.append(label)
    if len(arrived) == 2:
        everyone.set()
    try:
        await asyncio.wait_for(everyone.wait(), 30)
    except TimeoutError:
        return f"{label}: alone in {os.getpid()}"
    return f"{label}: met in {os.getpid()}"


@app.tool()
def wait_here() -> str:
    """Say that the call began (a marker file holding this process ID), then never answer."""
    marker = LOG.parent / "waiting"
    part = marker.with_suffix(".part")
    part.write_text(str(os.getpid()))
    part.replace(marker)  # whole or absent: a test polls for it
    time.sleep(3600)
    return "never"


app.run("stdio")
