*** Settings ***
Documentation       The token budget end to end, against servers.
...
...                 Scripted OpenAI-compatible server (``ServerLibrary``): it claims a window of
...                 ${SCRIPTED_CTX} tokens through ``/props`` and records every request body. The
...                 agents files give no ``context_window``, so the window is discovered from the
...                 server. Whether a recorded request fitted the claimed window is measured
...                 conservatively: all the characters the prompt carries (message texts, tool-call
...                 names and arguments, the tool schemas as compact JSON) divided by 3, rounded up,
...                 plus 8 tokens per message for the chat template (``Recorded Request Tokens`` in
...                 ``BudgetLibrary``). Real tokenizers give 3.5-4.5 characters a token for English
...                 and code, so a request under the window by this measure is under it for the server.
...
...                 Real llama-server at ``--ctx-size 2048`` (started by the first test that needs it):
...                 the window comes from ``/props``, a run over several large files ends cleanly with
...                 no request refused, and an agent told a wrong window (32,768) recovers from the
...                 server's 400 refusal. The 0.5B model's answers are often wrong: the tests assert
...                 how the run ends and what the report says, not what the model concluded.
Resource            resources/servers.resource
Library             resources/BudgetLibrary.py
Suite Setup         Start Scripted Server For Suite    n_ctx=${SCRIPTED_CTX}
Suite Teardown      Stop Budget Servers
Test Setup          Reset Scripted Server


*** Variables ***
${SCRIPTED_CTX}         4096
${REAL_CTX}             2048
${SYSTEM}               You answer questions about the files in the workspace. Read files with read_file before answering.
${SYNTHESIS_TEXT}       The context budget for this request is spent.
${TRIM_TEXT}            trimmed to save context
${LLAMA_STARTED}        ${FALSE}


*** Test Cases ***
Budget Exhaustion Ends With An Answer And No Request Exceeds The Claimed Window
    [Documentation]    Trimming is off and the script keeps reading large files: the requests grow
    ...    until trimming cannot help, the synthesis flow allows exactly one more tool round, and a
    ...    final request without tools ends the run. The call the script puts on that final
    ...    request is not run. No recorded request exceeds the claimed window.
    ...    The replies report ``prompt_tokens: 0`` (no count, which leanloop ignores): the scripted
    ...    server's own usage counts only the messages' JSON / 4 and leaves the tool schemas out,
    ...    which would teach the estimator a ratio no real server gives (about 4.8 characters a
    ...    token here); so this run plans on leanloop's own conservative 3.3.
    ${folder}=    Fresh Folder    budget-exhaustion
    ${names}=    Write Large Workspace Files    ${folder}    count=8    size=2000
    ${file}=    Write Budget Agents File    ${folder}    ${SCRIPTED_URL}    ${SYSTEM}
    ...    model=exhaustion-model    trim_tool_results=false    max_rounds=12
    FOR    ${name}    IN    @{names}
        Queue Tool Call    read_file    {"path": "${name}"}    prompt_tokens=0
    END
    Queue Answer    The parts list inventory; the code words are river-1 to river-4.    prompt_tokens=0
    ${result}=    Ask Budgeted Agent    ${file}    Which code words do the parts of the inventory hold?
    ${report}=    Set Variable    ${result}[report]
    Log Budget Figures    ${report}
    Should Be Equal    ${report}[stop_reason]    budget_exhausted
    Should Be Equal As Integers    ${report}[window]    ${SCRIPTED_CTX}
    Should Be Equal    ${report}[window_source]    server:llama.cpp
    Should Not Be Empty    ${result}[answer]
    ${synthesis}=    Budget Events Named    ${result}    leanloop.synthesis
    Length Should Be    ${synthesis}    1
    ${requests}=    Scripted Requests
    ${count}=    Get Length    ${requests}
    ${tokens}=    Recorded Request Tokens    ${requests}
    Log    measured request tokens (characters / 3 + 8 a message): ${tokens}    console=True
    Requests Should Fit Window    ${requests}    ${SCRIPTED_CTX}
    # The synthesis round: the instruction, tools still offered; then the final request.
    Scripted Request Should Contain    ${count - 1}    ${SYNTHESIS_TEXT}    role=user
    ${round_tools}=    Scripted Request Tool Names    ${count - 1}
    Should Not Be Empty    ${round_tools}
    Should Not Contain    ${{json.dumps($requests[-3]["messages"])}}    ${SYNTHESIS_TEXT}
    ${last_tools}=    Scripted Request Tool Names    ${count}
    Should Be Empty    ${last_tools}
    Scripted Request Should Contain    ${count}    ${SYNTHESIS_TEXT}    role=user
    # Every request but the final one ran its call; the call written on the final one did not.
    Length Should Be    ${report}[tool_calls]    ${count - 1}
    ${left}=    Scripted Responses Left
    Should Be True    ${left} > 0
    ${budgets}=    Budget Events Named    ${result}    leanloop.budget
    FOR    ${event}    IN    @{budgets}
        Should Be Equal As Integers    ${event}[window]    ${SCRIPTED_CTX}
        Should Be Equal    ${event}[window_source]    server:llama.cpp
    END

Budget Keys Are Accepted And Lower The Ceiling
    [Documentation]    ``token_budget_percent: 0.5`` and ``trim_keep_steps: 1`` load, validate and
    ...    show in the run: the ceiling is 0.5 × 4096 − 819 = 1229 tokens instead of the default's
    ...    2662, so three 2.4 KB results are already too much and are trimmed in the request view.
    ${folder}=    Fresh Folder    budget-config
    ${names}=    Write Large Workspace Files    ${folder}    count=3    size=2400
    ${file}=    Write Budget Agents File    ${folder}    ${SCRIPTED_URL}    ${SYSTEM}
    ...    model=config-model    token_budget_percent=0.5    trim_keep_steps=1
    ${validated}=    Run Leanloop    validate    ${file}
    Should Be Equal As Integers    ${validated.rc}    0    ${validated.stderr}
    FOR    ${name}    IN    @{names}
        Queue Tool Call    read_file    {"path": "${name}"}    prompt_tokens=0
    END
    Queue Answer    Three parts read.    prompt_tokens=0
    ${result}=    Ask Budgeted Agent    ${file}    Which code words do the parts of the inventory hold?
    ${report}=    Set Variable    ${result}[report]
    Log Budget Figures    ${report}
    Should Be Equal    ${report}[stop_reason]    answer
    Should Be Equal    ${result}[answer]    Three parts read.
    Length Should Be    ${report}[requests]    4
    FOR    ${request}    IN    @{report}[requests]
        Should Be Equal As Integers    ${request}[ceiling]    1229
        Should Be True    ${request}[estimated_tokens] <= ${request}[ceiling]
    END
    ${trims}=    Budget Events Named    ${result}    leanloop.trimmed
    Should Not Be Empty    ${trims}
    Should Be True    ${report}[trimmed_results] >= 2
    Scripted Request Should Contain    4    ${TRIM_TEXT}    role=tool
    ${requests}=    Scripted Requests
    Requests Should Fit Window    ${requests}    ${SCRIPTED_CTX}

An Agent Without Budget Keys Sends What It Always Sent On A Small Conversation
    [Documentation]    No budget keys: the first request is the system prompt and the question,
    ...    the second adds the call and its whole result, and an agent whose budget can never
    ...    act (trimming off, the whole window as budget) sends exactly the same messages.
    ${folder}=    Fresh Folder    budget-compat
    Create File    ${folder}${/}plain${/}workspace${/}notes.txt    The launch code is 4711.\n
    Create File    ${folder}${/}inert${/}workspace${/}notes.txt    The launch code is 4711.\n
    ${plain}=    Write Budget Agents File    ${folder}${/}plain    ${SCRIPTED_URL}    ${SYSTEM}
    ...    model=compat-model
    ${inert}=    Write Budget Agents File    ${folder}${/}inert    ${SCRIPTED_URL}    ${SYSTEM}
    ...    model=compat-model    trim_tool_results=false    token_budget_percent=1.0
    Queue Tool Call    read_file    {"path": "notes.txt"}
    Queue Answer    The launch code is 4711.
    ${result}=    Ask Budgeted Agent    ${plain}    What is the launch code?
    Should Be Equal    ${result}[answer]    The launch code is 4711.
    Should Be Equal    ${result}[report][stop_reason]    answer
    Should Be Equal As Integers    ${result}[report][trimmed_results]    0
    Should Be Equal As Integers    ${result}[report][overflow_recoveries]    0
    Should Be Empty    ${{[e for e in $result["events"] if e["name"] in ("leanloop.synthesis", "leanloop.trimmed", "leanloop.overflow_recovered")]}}
    Scripted Request Count Should Be    2
    ${roles_1}=    Scripted Request Roles    1
    ${roles_2}=    Scripted Request Roles    2
    Should Be Equal    ${roles_1}    ${{["system", "user"]}}
    Should Be Equal    ${roles_2}    ${{["system", "user", "assistant", "tool"]}}
    Scripted Request Should Contain    2    The launch code is 4711.    role=tool
    ${first}=    Get Scripted Request    1
    ${second}=    Get Scripted Request    2
    ${plain_1}=    Request Messages Without Ids    ${first}
    ${plain_2}=    Request Messages Without Ids    ${second}
    Should Be Equal    ${plain_2}[:2]    ${plain_1}
    Queue Tool Call    read_file    {"path": "notes.txt"}
    Queue Answer    The launch code is 4711.
    ${twin}=    Ask Budgeted Agent    ${inert}    What is the launch code?
    Should Be Equal    ${twin}[answer]    ${result}[answer]
    Scripted Request Count Should Be    4
    ${third}=    Get Scripted Request    3
    ${fourth}=    Get Scripted Request    4
    ${inert_1}=    Request Messages Without Ids    ${third}
    ${inert_2}=    Request Messages Without Ids    ${fourth}
    Should Be Equal    ${inert_1}    ${plain_1}
    Should Be Equal    ${inert_2}    ${plain_2}
    Should Be Equal    ${third}[tools]    ${first}[tools]

Real Server: The Window Comes From Props
    [Tags]    local-model
    [Documentation]    No ``context_window`` in the file: leanloop asks llama-server's ``/props``.
    Start Budget Llama Server
    ${props}=    Http Get Json    ${LLAMA_ROOT}/props
    Should Be Equal As Integers    ${props}[default_generation_settings][n_ctx]    ${REAL_CTX}
    ${folder}=    Fresh Folder    budget-real-window
    Create File    ${folder}${/}workspace${/}notes.txt    The launch code is 4711.\n
    ${file}=    Write Budget Agents File    ${folder}    ${LLAMA_URL}    ${SYSTEM}    max_rounds=1
    ${result}=    Ask Budgeted Agent    ${file}    What is the launch code written in notes.txt?
    ${report}=    Set Variable    ${result}[report]
    Log    ${report}
    Should Be Equal As Integers    ${report}[window]    ${REAL_CTX}
    Should Be Equal    ${report}[window_source]    server:llama.cpp
    Should Be Equal As Integers    ${report}[overflow_recoveries]    0
    Log Budget Figures    ${report}

Real Server: Reading Several Large Files Ends Cleanly With No Request Refused
    [Tags]    local-model
    [Documentation]    Four files of about 8 KB each, a question that needs all of them: the run
    ...    ends with one of the clean stop reasons, never an error, and the server never refused
    ...    a request (``overflow_recoveries`` is 0). Every request the loop sent was planned under
    ...    the ceiling or, in the synthesis flow, inside the window.
    Start Budget Llama Server
    ${folder}=    Fresh Folder    budget-real-files
    ${names}=    Write Large Workspace Files    ${folder}    count=4    size=8000
    ${file}=    Write Budget Agents File    ${folder}    ${LLAMA_URL}    ${SYSTEM}    max_rounds=4
    ${result}=    Ask Budgeted Agent    ${file}
    ...    Read part_1.txt, part_2.txt, part_3.txt and part_4.txt and list the code word of each part.
    ${report}=    Set Variable    ${result}[report]
    Log    ${report}
    Log Budget Figures    ${report}
    Should Contain    ${{["answer", "max_rounds", "repeated_calls", "budget_exhausted"]}}    ${report}[stop_reason]
    Should Not Be Empty    ${result}[answer]
    Should Be Equal As Integers    ${report}[window]    ${REAL_CTX}
    Should Be Equal As Integers    ${report}[overflow_recoveries]    0
    ...    msg=the server refused ${report}[overflow_recoveries] request(s) for size: ${report}[events]
    FOR    ${request}    IN    @{report}[requests]
        Should Be True    ${request}[estimated_tokens] < ${REAL_CTX}
        Should Be True    isinstance($request["reported_input_tokens"], int) and $request["reported_input_tokens"] < ${REAL_CTX}
    END

Real Server: A Wrong Configured Window Is Recovered From The Server's Refusal
    [Tags]    local-model
    [Documentation]    The file claims ``context_window: 32768`` against the 2,048-token server and
    ...    the question names a 10 KB file, which is read before the first request: the server
    ...    refuses it (HTTP 400 ``exceed_context_size_error``), leanloop learns the real window
    ...    from the error, trims and retries, and the run ends without an error.
    Start Budget Llama Server
    ${folder}=    Fresh Folder    budget-real-overflow
    Write Large Workspace Files    ${folder}    count=1    size=10000    prefix=big
    ${file}=    Write Budget Agents File    ${folder}    ${LLAMA_URL}    ${SYSTEM}
    ...    context_window=32768    max_rounds=3
    ${result}=    Ask Budgeted Agent    ${file}    What is the code word in big_1.txt?
    ${report}=    Set Variable    ${result}[report]
    Log    ${report}
    Log Budget Figures    ${report}
    Should Be True    ${report}[overflow_recoveries] >= 1
    Should Contain    ${{["answer", "budget_exhausted", "max_rounds", "repeated_calls"]}}    ${report}[stop_reason]
    Should Not Be Empty    ${result}[answer]
    Should Be Equal As Integers    ${report}[window]    ${REAL_CTX}
    Should Be Equal    ${report}[window_source]    server:error
    ${recovered}=    Budget Events Named    ${result}    leanloop.overflow_recovered
    Should Not Be Empty    ${recovered}
    Should Be Equal As Integers    ${recovered}[0][window]    ${REAL_CTX}

Real Server: The CLI Exits 0 After A Recovered Overflow
    [Tags]    local-model
    [Documentation]    The same wrong window through ``leanloop run --json``: exit code 0, no
    ...    traceback, the refusal reported on stderr and counted in the printed report.
    Start Budget Llama Server
    ${folder}=    Fresh Folder    budget-real-cli
    Write Large Workspace Files    ${folder}    count=1    size=10000    prefix=big
    ${file}=    Write Budget Agents File    ${folder}    ${LLAMA_URL}    ${SYSTEM}
    ...    context_window=32768    max_rounds=1
    ${result}=    Run Leanloop    run    --json    ${file}    What is the code word in big_1.txt?
    Should Be Equal As Integers    ${result.rc}    0    ${result.stderr}
    Should Not Contain    ${result.stderr}    Traceback
    Should Contain    ${result.stderr}    refused a request for its size
    ${report}=    Evaluate    json.loads($result.stdout)
    Should Be True    ${report}[overflow_recoveries] >= 1
    Should Be Equal    ${report}[window_source]    server:error
    Should Not Be Empty    ${report}[answer]


*** Keywords ***
Fresh Folder
    [Arguments]    ${name}
    ${folder}=    Set Variable    ${TEMPDIR}${/}leanloop-${name}
    Remove Directory    ${folder}    recursive=True
    RETURN    ${folder}

Start Budget Llama Server
    [Documentation]    Start the real llama-server at ${REAL_CTX} tokens once for the suite.
    IF    not ${LLAMA_STARTED}
        Start Local Llama Server For Suite    ctx_size=${REAL_CTX}
        Set Suite Variable    ${LLAMA_STARTED}    ${TRUE}
    END

Stop Budget Servers
    Stop Scripted Server
    Stop Local Llama Server

Log Budget Figures
    [Arguments]    ${report}
    ${lines}=    Evaluate    "\\n".join(f"{r['kind']} step {r['step']}: estimate {r['estimated_tokens']} / reported {r['reported_input_tokens']} / ceiling {r['ceiling']} / window {r['window']}" for r in $report["requests"])
    Log    window ${report}[window] (${report}[window_source]), chars/token ${report}[chars_per_token], trimmed ${report}[trimmed_results], recoveries ${report}[overflow_recoveries], stop ${report}[stop_reason]\n${lines}    console=True
