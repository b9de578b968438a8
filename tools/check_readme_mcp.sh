#!/usr/bin/env bash
# Issue 29 acceptance: "the MCP example works in a clean venv following the README literally".
#
# Builds the wheel the way README's Install section says, installs it with the `mcp` extra
# in a brand-new Python 3.11 venv (not the project's .venv), writes an agents file whose
# MCP server line is the README's own (`time: {command: uvx, args: [mcp-server-time]}`,
# read out of README.md so a change there is checked too), and runs
#   leanloop validate / validate --check-models / run "what time is it in Tokyo?"
# against the project's scripted fake model server, so no real model or API key is needed.
# The model is scripted to call the time server's tool; the check is that the result in
# the run report really came from mcp-server-time (a current timestamp in Tokyo's offset).
#
# Usage: tools/check_readme_mcp.sh            (PYTHON=python3.12 to try another Python;
#                                              KEEP=1 to keep the temp folder for a look)
# Needs: python3.11 with venv, and the package index (PyPI) for the dependencies, uv and
# mcp-server-time. Prints PASS or FAIL; exits non-zero on failure.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3.11}
WORK=$(mktemp -d -t leanloop-mcp-check.XXXXXX)
SERVER_PID=""
START=$SECONDS

cleanup() {
    # The fake model server is the only process this script leaves running; stop it by
    # its own pid (uvx's server is a child of leanloop, which stops it when the run ends).
    if [[ -n $SERVER_PID ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ ${KEEP:-0} == 1 ]]; then
        echo "kept: $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
fail() {
    echo "FAIL: $*" >&2
    # leanloop writes each stdio MCP server's stderr (uvx's included) to its own log.
    for log in "$WORK"/run/*.log "$WORK"/run/*.err "$WORK"/home/.cache/leanloop/logs/mcp/*.log; do
        [[ -s $log ]] && { echo "--- $log" >&2; tail -n 40 "$log" >&2; }
    done
    echo "FAIL ($((SECONDS - START)) s)" >&2
    exit 1
}
# Any other command that fails (set -e) still ends with FAIL and the logs, not silently.
trap 'rc=$?; fail "line $LINENO: $BASH_COMMAND (exit $rc)"' ERR

# --- 1. A copy of the checkout ------------------------------------------------------------
# Building writes build/ and src/*.egg-info next to the sources; other people work in this
# tree, so the wheel is built from a copy of its files (tracked and new, not ignored ones),
# which includes uncommitted edits: the check is of the tree as it is now.
step "copy the checkout to $WORK/src"
mkdir -p "$WORK/src"
(
    cd "$ROOT"
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do
            if [[ -e $f ]]; then printf '%s\0' "$f"; fi   # skip files deleted but not committed
        done |
        xargs -0 cp --parents -t "$WORK/src"
)

# --- 2. A clean venv, and the README's install commands ---------------------------------------
step "new venv ($PYTHON) in $WORK/venv"
"$PYTHON" -m venv "$WORK/venv"
# Activated as a user would: uvx (installed below) must be on PATH for leanloop to start it.
# shellcheck disable=SC1091
source "$WORK/venv/bin/activate"

step "build the wheel (README, Install: python -m pip wheel --no-deps -w dist .)"
(cd "$WORK/src" && python -m pip wheel -q --no-deps -w dist .)
WHEEL=$(ls "$WORK"/src/dist/leanloop-*.whl)
echo "$WHEEL"

# README's MCP example: `python -m pip install '.[mcp]'` or the wheel with [mcp] (leanloop is
# not on PyPI); the wheel is what a user gets from a release.
step "install the wheel with the mcp extra"
python -m pip install -q "$WHEEL[mcp]"

# README's example: `python -m pip install uv` for uvx.
step "install uv (for uvx, as README says)"
python -m pip install -q uv
command -v uvx >/dev/null || fail "uvx is not on PATH after pip install uv"

# --- 3. A fresh home: nothing cached, as for a new user ----------------------------------------
# uvx then really downloads mcp-server-time from the index into $HOME/.cache/uv.
# The MCP SDK starts a stdio server with only HOME, LOGNAME, PATH, SHELL, TERM and USER of
# leanloop's environment (plus the file's `env:`), so SSL_CERT_FILE does not reach uvx: on a
# network that re-signs TLS (such as the one this check was written on, which sets
# SSL_CERT_FILE), uv must be told to trust the system's certificates in its own config file.
export HOME="$WORK/home"
mkdir -p "$HOME/.config/uv"
if [[ -n ${SSL_CERT_FILE:-} ]]; then
    echo "system-certs = true" >"$HOME/.config/uv/uv.toml"
fi

# --- 4. The agents file: README's MCP server line, a model pointed at the fake server ---------
mkdir -p "$WORK/run"
cd "$WORK/run"
# The `time:` line of README's MCP example, word for word (fail if README no longer has it).
TIME_LINE=$(grep -m1 -E '^  time: \{command: uvx, args: \[mcp-server-time\]\}' "$ROOT/README.md") ||
    fail "README.md has no 'time: {command: uvx, args: [mcp-server-time]}' line any more"
cat >agents.yaml <<EOF
version: 1
mcp_servers:
$TIME_LINE
agents:
  clock:
    # README's clock agent, with base_url pointing at the scripted fake server.
    model: {provider: openai, model: gpt-4o-mini, api_key: "\${OPENAI_API_KEY}",
            base_url: "http://127.0.0.1:\${FAKE_PORT}/v1"}
    tools: ["mcp:time"]                       # every tool of the server
EOF

# The model's two replies: call the time server's tool (its real name, checked below by
# validate --check-models), then answer. The answer is scripted; the tool result is not.
cat >replies.json <<'EOF'
[
  {"content": "", "tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}]},
  {"content": "The time server answered; see the tool result."}
]
EOF

# --- 5. The fake model server, from the installed wheel -------------------------------------
step "start the fake model server (python -m leanloop.testing.server --port 0)"
# Created before the server starts: the loop below may read it before the server's shell does.
: >server.log
python -m leanloop.testing.server --port 0 --script replies.json >server.log 2>&1 &
SERVER_PID=$!
FAKE_PORT=""
for _ in $(seq 1 100); do   # up to 20 s; it prints "… listening on PORT" once it listens
    FAKE_PORT=$(sed -n 's/.*listening on \([0-9][0-9]*\)$/\1/p' server.log)
    [[ -n $FAKE_PORT ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || fail "the fake model server exited"
    sleep 0.2
done
[[ -n $FAKE_PORT ]] || fail "the fake model server did not say its port"
echo "listening on $FAKE_PORT"
export FAKE_PORT
export OPENAI_API_KEY=sk-not-used   # the README's model reads it; the fake server ignores it

# --- 6. validate, validate --check-models, run -------------------------------------------------
step "leanloop validate agents.yaml"
leanloop validate agents.yaml | tee validate.log
grep -q '^ok: 1 agent (clock)' validate.log || fail "validate did not say ok"

# --check-models starts the MCP server (uvx downloads it the first time) and lists its tools.
step "leanloop validate --check-models agents.yaml"
leanloop validate --check-models agents.yaml >check.log 2>check.err ||
    fail "validate --check-models failed (exit $?)"
cat check.log
grep -q 'MCP server time: .*get_current_time' check.log ||
    fail "the time server does not list get_current_time"

step 'leanloop run agents.yaml --json "what time is it in Tokyo?"'
set +e
leanloop run agents.yaml --json "what time is it in Tokyo?" >run.json 2>run.err
RC=$?
set -e
cat run.err
[[ $RC == 0 ]] || fail "leanloop run exited $RC"

# --- 7. The tool result is the real server's: a current time in Tokyo -------------------------
step "check the tool result in the run report"
python - run.json <<'EOF' || fail "the run report does not hold a tool result from mcp-server-time"
import json, sys
from datetime import datetime, timedelta, timezone

report = json.load(open(sys.argv[1]))
calls = report["tool_calls"]
assert report["stop_reason"] == "answer", report["stop_reason"]
assert [c["name"] for c in calls] == ["get_current_time"], [c["name"] for c in calls]
call = calls[0]
assert call["ok"], call
# leanloop repairs a near-miss tool name (get_time -> get_current_time) and says so in the
# result; the scripted name must be the server's own, so a repair is a failure here.
assert not call["repaired"], f"the model's tool name was repaired: {call['notes']}"
result = json.loads(call["result_preview"])   # the server's JSON text, as the model saw it
print("tool result:", json.dumps(result))
assert result["timezone"] == "Asia/Tokyo", result
when = datetime.fromisoformat(result["datetime"])
# Tokyo's offset and a time within minutes of now: no script could have written it.
assert when.utcoffset() == timedelta(hours=9), when
drift = abs(datetime.now(timezone.utc) - when)
assert drift < timedelta(minutes=5), f"{when} is {drift} away from now"
print(f"ok: {result['datetime']} is Tokyo's time now (off by {drift.total_seconds():.1f} s)")
EOF

echo
echo "PASS ($((SECONDS - START)) s)"
