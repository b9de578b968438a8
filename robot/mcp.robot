*** Settings ***
Documentation       MCP servers in an agents file, through langchain-mcp-adapters: a real server
...                 from the package index (mcp-server-time) started over stdio, and the test's
...                 own FastMCP server over streamable HTTP on 127.0.0.1. A scripted main model
...                 calls one tool of each; what the model gets back is plain text. A server
...                 whose command does not exist is one error line naming it, when the agent
...                 is built and when `leanloop validate --check-models` starts it; that
...                 validation lists the tools of a real server and locates a reference to a
...                 tool the server does not have.
Library             Collections
Library             OperatingSystem
Library             Process
Library             resources/McpLibrary.py
Suite Setup         Start Docs Server
Suite Teardown      Stop Test Mcp Server


*** Variables ***
${FOLDER}           ${TEMPDIR}${/}leanloop-mcp-robot


*** Test Cases ***
The Model Calls A Tool Of Each Server And Gets Plain Text Back
    ${file}=    Write Mcp Agents File    ${FOLDER}${/}both    ${DOCS_URL}
    ${result}=    Ask Mcp Agent    ${file}    Which port, and what time is it?
    Should Be Equal    ${result}[answer]    The service listens on port 8931.
    Length Should Be    ${result}[tool_messages]    2
    ${time}=    Set Variable    ${result}[tool_messages][0]
    ${docs}=    Set Variable    ${result}[tool_messages][1]
    Should Be Equal    ${time}[content_type]    str
    Should Be Equal    ${docs}[content_type]    str
    Should Start With    ${time}[content]    {
    Should Contain    ${time}[content]    "timezone": "UTC"
    Should Not Contain    ${time}[content]    "type": "text"
    Should Be Equal    ${docs}[content]    ops.md: the service listens on port 8931 (token ok, query port)
    ${calls}=    Set Variable    ${result}[report][tool_calls]
    Should Be Equal    ${calls}[0][name]    get_current_time
    Should Be Equal    ${calls}[1][name]    search_docs
    Should Be True    ${calls}[0][ok] and ${calls}[1][ok]

A Server Command That Does Not Exist Is One Line Naming It
    ${file}=    Write Agents File With Server Command    ${FOLDER}${/}ghost    leanloop-no-such-mcp-server
    ${message}=    Build Agent Expecting Error    ${file}
    ${lines}=    Evaluate    len($message.splitlines())
    Should Be Equal As Integers    ${lines}    1
    Should Contain    ${message}    MCP server 'ghost'
    Should Contain    ${message}    leanloop-no-such-mcp-server
    Should Contain    ${message}    agents.yaml:

The CLI Run Of That File Exits 2 With The Same One Line
    ${file}=    Write Agents File With Server Command    ${FOLDER}${/}ghost-cli    leanloop-no-such-mcp-server
    ${python}=    Evaluate    sys.executable    modules=sys
    ${run}=    Run Process    ${python}    -m    leanloop    run    ${file}    hello    timeout=120s
    Should Be Equal As Integers    ${run.rc}    2
    ${lines}=    Evaluate    len($run.stderr.strip().splitlines())
    Should Be Equal As Integers    ${lines}    1
    Should Contain    ${run.stderr}    MCP server 'ghost' (command 'leanloop-no-such-mcp-server') could not be started

A Server Command That Does Not Exist Fails Validation-Time Start With One Line Naming It
    ${file}=    Write Agents File With Server Command    ${FOLDER}${/}ghost-validate    leanloop-no-such-mcp-server
    ${run}=    Run Leanloop    validate    --check-models    ${file}
    Should Be Equal As Integers    ${run}[rc]    2    ${run}[stderr]
    @{lines}=    Evaluate    $run["stderr"].strip().splitlines()
    Length Should Be    ${lines}    1
    # The JSON file (see the keyword) has the key "ghost" on line 4, column 5.
    Should Start With    ${lines}[0]    error: ${file}:4:5: mcp_servers.ghost:
    Should Contain    ${lines}[0]    MCP server 'ghost' (command 'leanloop-no-such-mcp-server') could not be started
    Should Be Equal    ${run}[stdout]    failed: clock (1 problem)\n

Validation Starts mcp-server-time And Names Its Tools
    ${file}=    Write Time Agents File    ${FOLDER}${/}time-validate    mcp:time/get_current_time
    ${run}=    Run Leanloop    validate    --check-models    ${file}
    Should Be Equal As Integers    ${run}[rc]    0    ${run}[stderr]
    Should Be Empty    ${run}[stderr]
    @{lines}=    Evaluate    $run["stdout"].strip().splitlines()
    Length Should Be    ${lines}    1
    Should Start With    ${lines}[0]    ok: clock (model: ScriptedChatModel; MCP server time:
    Should Contain    ${lines}[0]    get_current_time
    Should Contain    ${lines}[0]    convert_time

Validation Locates A Reference To A Tool The Server Does Not Have
    ${file}=    Write Time Agents File    ${FOLDER}${/}time-missing
    ...    mcp:time/get_current_time    mcp:time/get_weather
    ${run}=    Run Leanloop    validate    --check-models    ${file}
    Should Be Equal As Integers    ${run}[rc]    2    ${run}[stderr]
    @{lines}=    Evaluate    $run["stderr"].strip().splitlines()
    Length Should Be    ${lines}    1
    Should Start With    ${lines}[0]
    ...    error: ${file}:12:9: agents.clock.tools[1]: MCP server 'time' has no tool 'get_weather' (it has
    Should Contain    ${lines}[0]    get_current_time
    Should Be Equal    ${run}[stdout]    failed: clock (1 problem)\n


*** Keywords ***
Start Docs Server
    Remove Directory    ${FOLDER}    recursive=True
    ${url}=    Start Test Mcp Server    ${FOLDER}${/}server
    Set Suite Variable    ${DOCS_URL}    ${url}
