*** Settings ***
Documentation       The fault-injection script, ``tools/fault_injection.py``, against scripted
...                 servers on 127.0.0.1 (no model): SIGINT, SIGTERM and SIGHUP sent to the CLI
...                 while a stdio MCP server's tool call is in flight; a ``--session`` run with
...                 an ``agent:`` sub-agent, a turn cut by SIGTERM and ``--resume``; bytes that
...                 are not UTF-8 wherever a string enters the CLI. Every invocation must leave
...                 no process running, print no traceback and, with ``--json``, print one JSON
...                 object; a signal ends the run with ``128 + signum`` and one line saying so.
...                 The script runs once (Suite Setup); each test checks its cases in its report.
Library             resources/FaultInjectionLibrary.py
Suite Setup         Run Fault Injection Script    ${OUTPUT_DIR}${/}fault_injection.json
Test Timeout        1 minute


*** Test Cases ***
SIGTERM During An MCP Call Ends The Run With 143 And Stops The MCP Server
    Fault Case Should Have Held    run-sigterm

SIGHUP During An MCP Call Ends The Run With 129 And Stops The MCP Server
    Fault Case Should Have Held    run-sighup

SIGHUP During An MCP Call In Chat Ends With 129 And Stops The MCP Server
    Fault Case Should Have Held    chat-sighup

SIGINT During An MCP Call Ends The Run With 130 And Stops The MCP Server
    Fault Case Should Have Held    run-sigint

A Session Turn With A Sub-Agent, Cut By SIGTERM, Resumes From The Stored Conversation
    Fault Case Should Have Held    session-subagent

Bytes That Are Not UTF-8 Are Refused In One Line, Or Used As Given In A Path
    Fault Case Should Have Held
    ...    bytes-question    bytes-session    bytes-agent    bytes-paths    bytes-content    bytes-chat

The Script Ends With 0 Orphans, 0 Tracebacks And Valid JSON For Every --json Run
    Fault Script Should Have Passed
