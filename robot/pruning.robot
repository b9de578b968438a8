*** Settings ***
Documentation       Tool-output pruning end to end. Against the scripted OpenAI-compatible server
...                 (run through `leanloop run --json`): the recorded requests show the augmented
...                 schemas, the extraction call without tools, and the short pruned tool message
...                 that followed; the output_prune=false opt-out sends no extraction call; an agent
...                 without pruning keys sends what it always sent. Against the real llama-server
...                 (Qwen as main and pruning model): the run finishes, and a read_file result is a
...                 parsed pruned block or a clean fallback, never an error.
Resource            resources/servers.resource
Library             resources/PruningLibrary.py
Suite Setup         Start Scripted Server For Suite    n_ctx=32768
Suite Teardown      Stop Scripted Server
Test Setup          Reset Scripted Server


*** Variables ***
${QUESTION}         Why did the nightly job stop?


*** Test Cases ***
A Pruning Agent Sends Augmented Schemas, Then The Extraction Call, Then The Short Tool Message
    ${folder}=    Fresh Pruning Folder    pruning-scripted-on
    ${file}=    Write Pruning Agents File    ${folder}    ${SCRIPTED_URL}
    ${raw}=    Read File As The Agent Sees It    ${folder}
    ${raw_chars}=    Get Length    ${raw}
    Should Be True    ${raw_chars} >= 51200    the read_file result should be 50 KB, not ${raw_chars}
    Queue Tool Call    read_file    {"path": "app.log", "limit": 400, "output_prune_context": "the deadlock errors"}
    ${extraction}=    Extraction Answer Keeping    ${folder}    deadlock
    Queue Answer    ${extraction}
    Queue Answer    Three deadlocks stopped the job.
    ${run}=    Run Pruning CLI    ${file}
    Should Be Equal    ${run}[answer]    Three deadlocks stopped the job.
    Scripted Request Count Should Be    3
    # 1: the main request offers read_file with both optional meta-arguments, other tools without
    ${first}=    Get Scripted Request    1
    ${props}=    Tool Properties Of Request    ${first}    read_file
    Should Be Equal    ${props}[output_prune][type]    boolean
    Should Be Equal    ${props}[output_prune][default]    ${True}
    Should Be Equal    ${props}[output_prune_context][type]    string
    ${augmented}=    Tools With Pruning Arguments    ${first}
    Should Be Equal    ${augmented}    ${{["read_file"]}}
    # 2: the extraction call: no tools, the marker instructions, the focus and the numbered output
    ${second}=    Get Scripted Request    2
    Dictionary Should Not Contain Key    ${second}    tools
    ${roles}=    Scripted Request Roles    2
    Should Be Equal    ${roles}    ${{["system", "user"]}}
    Scripted Request Should Contain    2    [PRUNE_OUTPUT_START]    role=system
    Scripted Request Should Contain    2    verbatim    role=system
    Scripted Request Should Contain    2    The reader is looking for: the deadlock errors    role=user
    Scripted Request Should Contain    2    ERROR deadlock #2    role=user
    ${chars}=    Scripted Request Chars    2
    Should Be True    ${chars} > ${raw_chars}    the extraction call should carry the whole output
    # 3: the main request carries the short pruned block as the tool message
    ${third}=    Get Scripted Request    3
    ${messages}=    Tool Messages Of Request    ${third}
    Length Should Be    ${messages}    1
    Pruned Block Should Be Well Formed    ${messages}[0]    ${raw_chars}
    ${length}=    Get Length    ${messages}[0]
    Should Be True    ${length} <= 300    the pruned tool message has ${length} characters
    # the common path's one info line: what was kept, of how many, and how to get it all
    Should Contain    ${messages}[0]    [PRUNE_INFO_START]\n3/400 lines kept; output_prune=false for all\n[PRUNE_INFO_END]
    FOR    ${k}    IN    1    2    3
        Should Contain    ${messages}[0]    ERROR deadlock #${k}
    END
    Should Not Contain    ${messages}[0]    nothing unusual to report
    # the run report
    ${call}=    Set Variable    ${run}[tool_calls][0]
    Should Be True    $call["pruned"] is True
    Should Be Equal As Integers    ${call}[chars_raw]    ${raw_chars}
    Should Be Equal As Integers    ${call}[chars_out]    ${length}
    Should Be Equal As Integers    ${run}[chars_saved_by_pruning]    ${{${raw_chars} - ${length}}}
    Should Be Equal    ${call}[args]    ${{{"path": "app.log", "limit": 400}}}

The output_prune=false Opt-Out Sends No Extraction Call And The Raw Output
    ${folder}=    Fresh Pruning Folder    pruning-scripted-opt-out
    ${file}=    Write Pruning Agents File    ${folder}    ${SCRIPTED_URL}
    ${raw}=    Read File As The Agent Sees It    ${folder}
    Queue Tool Call    read_file    {"path": "app.log", "limit": 400, "output_prune": false}
    Queue Answer    I read the whole log.
    ${run}=    Run Pruning CLI    ${file}
    Should Be Equal    ${run}[answer]    I read the whole log.
    Scripted Request Count Should Be    2
    ${first}=    Get Scripted Request    1
    ${augmented}=    Tools With Pruning Arguments    ${first}
    Should Be Equal    ${augmented}    ${{["read_file"]}}
    ${second}=    Get Scripted Request    2
    Dictionary Should Contain Key    ${second}    tools
    ${messages}=    Tool Messages Of Request    ${second}
    Length Should Be    ${messages}    1
    Should Not Contain    ${messages}[0]    [PRUNE_INFO_START]
    ${head}=    Evaluate    $raw[:2000]
    Should Start With    ${messages}[0]    ${head}
    Should Contain    ${messages}[0]    ERROR deadlock #1
    ${call}=    Set Variable    ${run}[tool_calls][0]
    Should Be True    $call["pruned"] is False
    Should Be Equal As Integers    ${run}[chars_saved_by_pruning]    0
    Should Be Equal    ${call}[args]    ${{{"path": "app.log", "limit": 400}}}

An Agent Without Pruning Keys Sends No Meta-Arguments And No Extraction Call
    ${folder}=    Fresh Pruning Folder    pruning-scripted-off
    ${file}=    Write Pruning Agents File    ${folder}    ${SCRIPTED_URL}    pruning=${False}
    Queue Tool Call    read_file    {"path": "app.log", "limit": 400}
    Queue Answer    Three deadlocks.
    ${run}=    Run Pruning CLI    ${file}
    Should Be Equal    ${run}[answer]    Three deadlocks.
    Scripted Request Count Should Be    2
    FOR    ${index}    IN    1    2
        ${request}=    Get Scripted Request    ${index}
        ${augmented}=    Tools With Pruning Arguments    ${request}
        Should Be Empty    ${augmented}
    END
    ${second}=    Get Scripted Request    2
    ${messages}=    Tool Messages Of Request    ${second}
    Should Not Contain    ${messages}[0]    [PRUNE_INFO_START]
    Should Be True    $run["tool_calls"][0]["pruned"] is False

Qwen Prunes Its Own read_file Result Or Falls Back Cleanly
    [Documentation]    The real llama-server with the embedded Qwen model as both the main and
    ...    the pruning model. The 0.5B model is weak: the test asserts structure, not wisdom.
    ...    The log is kept small (about 1,600 characters, over the 1,000 of pruning_min_chars)
    ...    so that a CPU-only llama-server answers within the timeouts on a busy machine. The
    ...    question names the file, so leanloop's prefetch or the model reads it.
    [Tags]    local-model
    [Setup]    Start Local Llama Server For Suite    ctx_size=4096
    ${folder}=    Fresh Pruning Folder    pruning-local    lines=24    width=60
    ${file}=    Write Pruning Agents File    ${folder}    ${LLAMA_URL}    model=local-test
    ...    context_window=4096    max_tokens=200    pruning_timeout=420    max_rounds=1
    ...    pruning_min_chars=1000
    ...    system_prompt=You answer questions about app.log in the workspace. First call read_file with path app.log, then answer in one sentence.
    ${run}=    Run Pruning Agent    ${file}
    ...    Call read_file with path "app.log", then tell me which line of app.log mentions a deadlock.
    Log    ${run}
    ${report}=    Set Variable    ${run}[report]
    Should Not Be Empty    ${run}[answer]
    Should Contain Any    ${report}[stop_reason]    answer    max_rounds    budget_exhausted
    ${reads}=    Evaluate    [c for c in $report["tool_calls"] if c["name"] == "read_file"]
    IF    not $reads
        Log    Qwen did not call read_file; the run still finished with an answer.    console=True
    ELSE
        Read File Result Should Be Pruned Or Raw    ${run}    ${reads}[0]
    END
    [Teardown]    Stop Local Llama Server


*** Keywords ***
Fresh Pruning Folder
    [Documentation]    An empty folder under ${TEMPDIR} with the workspace and its large app.log.
    [Arguments]    ${name}    ${lines}=400    ${width}=121
    ${folder}=    Set Variable    ${TEMPDIR}${/}${name}
    Remove Directory    ${folder}    recursive=True
    Write Pruning Workspace    ${folder}    lines=${lines}    width=${width}
    RETURN    ${folder}

Run Pruning CLI
    [Documentation]    `leanloop run FILE --json QUESTION`; returns the parsed report (with answer).
    [Arguments]    ${file}
    ${result}=    Run Leanloop    run    ${file}    --json    ${QUESTION}
    Should Be Equal As Integers    ${result.rc}    0    ${result.stderr}
    Should Not Contain    ${result.stderr}    Traceback
    ${run}=    Parse Run Json    ${result.stdout}
    RETURN    ${run}

Read File Result Should Be Pruned Or Raw
    [Documentation]    The first read_file result reached the model as a parsed pruned block
    ...    shorter than the raw output, or as the raw (capped) output after a clean fallback.
    [Arguments]    ${run}    ${call}
    Should Be True    isinstance($call["pruned"], bool)
    ${main}=    Evaluate    [r for r in $run["requests"] if r["name"] != "leanloop.prune"]
    ${tool_texts}=    Evaluate    [m["content"] for r in $main for m in r["messages"] if m["role"] == "tool"]
    Should Not Be Empty    ${tool_texts}    no main request carried the read_file result
    ${text}=    Set Variable    ${tool_texts}[0]
    IF    $call["pruned"]
        Pruned Block Should Be Well Formed    ${text}    ${call}[chars_raw]
        Should Be True    ${call}[chars_out] < ${call}[chars_raw]
        ${extractions}=    Evaluate    [r for r in $run["requests"] if r["name"] == "leanloop.prune"]
        Should Not Be Empty    ${extractions}
    ELSE
        Should Not Start With    ${text}    [PRUNE_INFO_START]
        Should Be True    ${call}[chars_out] <= ${call}[chars_raw]
        Log    pruning fell back or was skipped; the tool message is the raw output    console=True
    END
    Should Not Contain    ${text}    Traceback
