*** Settings ***
Documentation       Faults a run meets, injected one at a time: a scripted server that errs,
...                 throttles, sends broken JSON, cuts or stalls its stream, answers slowly or
...                 dies mid-run; no server at all; tools that hang, raise, return 3 MB or
...                 return something that cannot become text. Each run goes through
...                 ``leanloop run --json`` and must end with a clear outcome: the exit code of
...                 README's table (0 answered, 1 failed, 3 ended otherwise), one ``error:`` line
...                 for a failure, a JSON report, no traceback, no process left behind, and no
...                 tool call without its result in the last request. The model's ``timeout`` is
...                 2 s and ``tool_timeout`` 1 s. Ctrl-C on a run whose sync tool hangs ends the
...                 process within 3 s with exit code 130.
Library             resources/FaultServerLibrary.py
Test Setup          Fault Server For Test
Test Teardown       Stop Fault Server
Test Timeout        2 minutes


*** Test Cases ***
A 500 Then A Success Is Retried And Answers
    ${file}=    Agents File    http-500
    Queue HTTP Error    500
    Queue Answer    The code word is river.
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    0    answer
    Should Be Equal    ${result}[report][answer]    The code word is river.

A 429 With Retry-After Is Waited Out And Answers
    ${file}=    Agents File    http-429
    Queue HTTP Error    429    retry_after=1
    Queue Answer    The code word is river.
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    0    answer
    Should Be True    ${result}[elapsed_s] >= 1    Retry-After was not waited out

Errors That Persist Fail The Run With One Line, Exit 1
    ${file}=    Agents File    http-500-always    max_retries=1
    Queue HTTP Error    500
    Queue HTTP Error    500
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    1    failed    error: the request to the model failed at step 1

Malformed JSON Fails The Run With One Line, Exit 1
    ${file}=    Agents File    malformed    max_retries=0
    Queue Fault    malformed
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    1    failed    the request to the model failed

A Stream Cut Once Is Sent Again And Answers
    ${file}=    Agents File    cut-once
    Queue Fault    cut    The code word is riv
    Queue Answer    The code word is river.
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    0    answer
    Should Be Equal    ${result}[report][answer]    The code word is river.
    Should Contain    ${result}[stderr]    cut off

A Stream Cut Twice Fails The Run, Never Answers, Exit 1
    ${file}=    Agents File    cut-twice
    Queue Fault    cut    The code word is riv
    Queue Fault    cut    The code word is riv
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    1    failed    cut off
    Should Be Equal    ${result}[report][answer]    ${None}

A Stream Cut In A Tool Call Fails Without A Half Call In The History
    ${file}=    Agents File    cut-call
    Queue Tool Call    read_file    {"path": "notes.txt"}
    Queue Fault    cut    The code word
    Queue Fault    cut    The code word
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    1    failed    cut off
    No Tool Call Lacks Its Result

A Stalled Stream Fails At The Model Timeout, Exit 1
    ${file}=    Agents File    stall    max_retries=0
    Queue Fault    stall    The code word is    stall_s=20
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    1    failed    timed out
    # The run's own time (process start-up is slow on a loaded machine): timeout 2 s, no retry.
    Should Be True    ${result}[report][elapsed_s] < 8    the stall held the run ${result}[report][elapsed_s] s

A Slow Server Within The Timeout Answers
    ${file}=    Agents File    slow
    Queue Answer    The code word is river, as the notes say.    chunk_delay=0.5
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    0    answer
    Should Be Equal    ${result}[report][answer]    The code word is river, as the notes say.

Connection Refused Fails With The Server Named, Exit 1
    ${url}=    Free Port Url
    ${file}=    Agents File    refused    base_url=${url}
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    1    failed    nothing answered there
    Should Contain    ${result}[report][error]    ${url}

A Server Killed Mid-Run Fails The Run With One Line, Exit 1
    ${file}=    Agents File    killed    max_retries=1
    Queue Tool Call    read_file    {"path": "notes.txt"}
    Queue Fault    kill
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    1    failed    the request to the model failed at step 2
    Should Be Equal As Integers    ${result}[report][steps]    1

A Hung Tool Times Out And The Run Answers
    ${file}=    Agents File    hung-tool    tools=fault_tools:hang
    Queue Tool Call    hang    {"label": "x"}
    Queue Answer    The lookup timed out.
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    0    answer
    ${text}=    Last Tool Result Should Contain    timed out after 1 s
    No Tool Call Lacks Its Result

A Raising Tool Becomes An Error Result And The Run Answers
    ${file}=    Agents File    raising-tool    tools=fault_tools:explode
    Queue Tool Call    explode    {"reason": "boom"}
    Queue Answer    The tool failed.
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    0    answer
    Last Tool Result Should Contain    exploded: boom
    No Tool Call Lacks Its Result

A Huge Tool Result Is Capped And The Run Answers
    ${file}=    Agents File    huge-tool    tools=fault_tools:huge
    Queue Tool Call    huge    {"label": "x"}
    Queue Answer    It was long.
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    0    answer
    ${text}=    Last Tool Result Should Contain    huge line
    ${size}=    Get Length    ${text}
    Should Be True    ${size} < 100000    a 3 MB result reached the model as ${size} characters
    No Tool Call Lacks Its Result

Tool Results That Cannot Become Text Are Error Results And The Run Answers
    ${file}=    Agents File    nontext-tool    tools=fault_tools:nontext,fault_tools:bignumber
    Queue Tool Call    nontext    {"label": "x"}
    Queue Tool Call    bignumber    {"label": "y"}
    Queue Answer    Neither result was text.
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    0    answer
    No Tool Call Lacks Its Result
    Should Be Equal As Integers    ${result}[report][steps]    3    two tool rounds and the answer

A Run Out Of Rounds Against Faulty Tools Ends Otherwise, Exit 3
    ${file}=    Agents File    rounds-tool    tools=fault_tools:explode    max_rounds=1
    Queue Tool Call    explode    {"reason": "boom"}
    Queue Answer    Nothing was found.
    ${result}=    Run Leanloop Json    ${file}    Which code word?
    Outcome Should Be    ${result}    3    max_rounds
    No Tool Call Lacks Its Result

Ctrl-C During A Hung Sync Tool Exits Within 3 s With 130
    ${file}=    Agents File    sigint    tools=fault_tools:hang    tool_timeout=600
    Queue Tool Call    hang    {"label": "x"}
    Queue Answer    never reached
    ${result}=    Interrupt Leanloop During Hung Tool    ${file}    Which code word?
    Should Be Equal As Integers    ${result}[rc]    130
    Should Be True    ${result}[after_sigint_s] < 3    exited ${result}[after_sigint_s] s after Ctrl-C
    Should Contain    ${result}[stderr]    interrupted
    Should Be Empty    ${result}[left]

Ctrl-C While An Async Tool Blocks The Event Loop Still Exits Within 3 s With 130
    [Documentation]    The loop cannot even cancel the run: the process ends 2 s later anyway.
    ${file}=    Agents File    sigint-block    tools=fault_tools:block    tool_timeout=600
    Queue Tool Call    block    {"label": "x"}
    Queue Answer    never reached
    ${result}=    Interrupt Leanloop During Hung Tool    ${file}    Which code word?
    Should Be Equal As Integers    ${result}[rc]    130
    Should Be True    ${result}[after_sigint_s] < 3    exited ${result}[after_sigint_s] s after Ctrl-C
    Should Contain    ${result}[stderr]    interrupted
    Should Be Empty    ${result}[left]

A Second Ctrl-C Ends The Run At Once With 130
    [Documentation]    The event loop is blocked, so only the second Ctrl-C (0.5 s after the
    ...    first, well before the 2 s grace) can have ended the process this soon.
    ${file}=    Agents File    sigint-twice    tools=fault_tools:block    tool_timeout=600
    Queue Tool Call    block    {"label": "x"}
    Queue Answer    never reached
    ${result}=    Interrupt Leanloop During Hung Tool    ${file}    Which code word?
    ...    signals=2    gap_s=0.5
    Should Be Equal As Integers    ${result}[rc]    130
    Should Be True    ${result}[after_sigint_s] < 1.8    exited ${result}[after_sigint_s] s after the first Ctrl-C
    Should Be Empty    ${result}[left]


*** Keywords ***
Fault Server For Test
    ${url}=    Start Fault Server    n_ctx=4096
    Set Test Variable    ${FAULT_URL}    ${url}

Agents File
    [Documentation]    An agents file on this test's fault server (``timeout: 2``).
    [Arguments]    ${name}    ${base_url}=${FAULT_URL}    &{keys}
    ${file}=    Write Fault Agents File    ${name}    ${base_url}    &{keys}
    RETURN    ${file}
