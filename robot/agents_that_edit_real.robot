*** Settings ***
Documentation       Agents that edit, with a person's approval, on the real embedded model (issue
...                 41, ADR 0036 and 0037). A tiny workspace holds ``calc.py`` whose ``add``
...                 subtracts and ``test_calc.py`` (a plain assert run as ``python
...                 test_calc.py``); the agent has ``read_file``, ``str_replace`` (asks) and
...                 ``run_command`` (``python`` only, does not ask), and a system prompt that
...                 lists the calls step by step. ``leanloop run`` runs on a pty and the test
...                 answers the approval prompts; what is checked is what is true afterwards:
...                 the file on disk, the test run by the suite itself, the run page's approvals
...                 and the messages the session stored (what the model was sent). The third
...                 test pauses a Python run with no approver and resumes it in a new process.
...                 The last two serve the agent with ``leanloop serve`` (a real process on a
...                 loopback port) and talk to it with the official ``openai`` client: the
...                 answer to the question is a pause (``stop_reason: paused`` and the pending
...                 ``str_replace``), a new question meanwhile is refused (409
...                 ``approval_pending``), and the session's next request carries the decision
...                 in ``extra_body={"leanloop": {"approvals": ...}}``; the run goes on and
...                 ends. After an approved fix the 0.5B runs the test and then repeats its
...                 calls (``repeated_calls``, a 502 ``ended_without_answer`` carrying the
...                 report): the ending is checked to be one of the honest ones, not an answer.
...                 Not here yet: the whole fix approved on a pty ending with an answer. On the
...                 0.5B the edit is approved, the file fixed and the test passes, then the
...                 model calls ``run_command`` again and again until the repeat guard ends
...                 the run honestly (exit 3, ``repeated_calls``): the answer-after-repeats
...                 request asks it to answer the *task*, which it reads as a call to make.
...                 Model: Qwen2.5-Coder-0.5B (the suite server's default); see the tests'
...                 notes for what it was measured to do.
Resource            resources/servers.resource
Library             resources/EditRealLibrary.py
Library             resources/ServeLibrary.py
Suite Setup         Start Local Llama Server For Suite    ctx_size=8192
Suite Teardown      Stop Local Llama Server
Test Teardown       Stop Run
Test Tags           local-model
Test Timeout        15 minutes


*** Variables ***
${REASON}       do not edit yet: first run run_command with argv ["python", "test_calc.py"] to see the failure


*** Test Cases ***
A Denied Edit Is Told To The Model And The Run Ends Honestly
    ${folder}=    Write Edit Workspace    denied    ${LLAMA_URL}
    Start Run On A Pty    ${folder}    fix-denied
    ${rc}=    Answer Approvals Until Exit    n    ${REASON}
    ${rows}=    Page Approvals    ${folder}
    Should Be Equal    ${rows}[0][tool]    str_replace
    Should Be Equal    ${rows}[0][decision]    reject
    Should Be Equal    ${rows}[0][reason]    ${REASON}
    # The rejection and its reason are what the model was sent next.
    ${messages}=    Session Messages    ${folder}    fix-denied
    ${told}=    Index Of Message Containing    ${messages}    the user rejected this call: ${REASON}
    Should Be True    ${told} >= 0    the model was never told of the rejection
    # Whatever it did next is checked, not assumed: an edit approved later fixed the file,
    # none left it as it was.
    ${approved}=    Evaluate    [r for r in $rows[1:] if r["decision"] == "approve"]
    IF    $approved
        Calc Should Be    ${folder}    fixed    an edit was approved after the rejection
    ELSE
        Calc Should Be    ${folder}    buggy    no edit was approved
    END
    Should Be True    ${rc} in (0, 3)    the run should end with an answer or its rounds (exit ${rc})

A Paused Python Run Resumes In A New Process And Fixes The File
    ${folder}=    Write Edit Workspace    resume    ${LLAMA_URL}
    ${file}=    Set Variable    ${folder}${/}agents.yaml
    ${paused}=    Run Resume Helper    start    ${file}    py-resume    Fix the bug in calc.py.
    Should Be Equal    ${paused}[stop_reason]    paused
    Should Not Be Empty    ${paused}[pending_calls]
    ${call}=    Set Variable    ${paused}[pending_calls][0]
    Should Be Equal    ${call}[tool]    str_replace
    Calc Should Be    ${folder}    buggy    the paused edit must not have run
    ${resumed}=    Run Resume Helper    resume    ${file}    py-resume    ${call}[id]
    Calc Should Be    ${folder}    fixed
    ${test}=    Run Workspace Test    ${folder}
    Should Be Equal As Integers    ${test.returncode}    0    ${test.stderr}
    Should Be Equal    ${resumed}[approvals][0][decision]    approve

An Edit Approved Through Serve By The OpenAI Client Fixes The File
    [Teardown]    Stop Serve Process
    ${folder}=    Write Edit Workspace    serve-approve    ${LLAMA_URL}
    ${base}=    Start Serve Process    agents_file=${folder}${/}agents.yaml
    ${token}=    Serve Token
    ${paused}=    Ask Over Serve    ${base}    ${token}    serve-approve
    ${call}=    Pause Should Wait For The Edit Of Calc    ${paused}
    Calc Should Be    ${folder}    buggy    the paused edit must not have run
    # A new question while the turn waits is refused, naming the call; nothing is lost.
    ${refused}=    Ask Over Serve    ${base}    ${token}    serve-approve    What does calc.py hold?
    Should Be Equal As Integers    ${refused}[status]    409    ${refused}
    Should Be Equal    ${refused}[code]    approval_pending
    Should Contain    ${refused}[message]    ${call}[id]
    Calc Should Be    ${folder}    buggy    a refused question must not run the paused edit
    ${decisions}=    Evaluate    {$call["id"]: "approve"}
    ${resumed}=    Ask Over Serve    ${base}    ${token}    serve-approve    decisions=${decisions}
    Decision Should Be In The Report    ${resumed}    ${call}    approve
    Should Be Equal As Integers    ${resumed}[leanloop][session][turn]    1
    ...    the decision should go on with the paused turn, not start a new one
    ${ended}=    Decide Pauses Over Serve    ${base}    ${token}    serve-approve    ${resumed}
    ...    approve
    Run Over Serve Should Have Ended    ${ended}
    Calc Should Be    ${folder}    fixed    the approved edit should have run
    ${test}=    Run Workspace Test    ${folder}
    Should Be Equal As Integers    ${test.returncode}    0    ${test.stderr}
    ${edits}=    Evaluate    [e["path"] for e in $resumed["leanloop"]["edits"]]
    Should Be Equal    ${edits}[0]    calc.py
    ${log}=    Serve Log
    Should Not Contain    ${log}    Traceback

An Edit Rejected Through Serve Is Told To The Model And Leaves The File
    [Teardown]    Stop Serve Process
    ${folder}=    Write Edit Workspace    serve-reject    ${LLAMA_URL}
    ${base}=    Start Serve Process    agents_file=${folder}${/}agents.yaml
    ${token}=    Serve Token
    ${paused}=    Ask Over Serve    ${base}    ${token}    serve-reject
    ${call}=    Pause Should Wait For The Edit Of Calc    ${paused}
    ${rejected}=    Create Dictionary    decision=reject    reason=${REASON}
    ${decisions}=    Evaluate    {$call["id"]: $rejected}
    ${resumed}=    Ask Over Serve    ${base}    ${token}    serve-reject    decisions=${decisions}
    Decision Should Be In The Report    ${resumed}    ${call}    reject    ${REASON}
    # Every later edit is rejected too: whatever the model tries, calc.py stays as it was.
    ${ended}=    Decide Pauses Over Serve    ${base}    ${token}    serve-reject    ${resumed}
    ...    ${rejected}
    Run Over Serve Should Have Ended    ${ended}
    Calc Should Be    ${folder}    buggy    every edit was rejected
    ${messages}=    Session Messages    ${folder}    serve-reject
    ${told}=    Index Of Message Containing    ${messages}    the user rejected this call: ${REASON}
    Should Be True    ${told} >= 0    the model was never told of the rejection
    ${log}=    Serve Log
    Should Not Contain    ${log}    Traceback


*** Keywords ***
Pause Should Wait For The Edit Of Calc
    [Documentation]    ``reply`` is a completion (200, ``finish_reason: stop``) of a run paused
    ...    before one ``str_replace`` of ``calc.py``; returns that pending call.
    [Arguments]    ${reply}
    Should Be Equal As Integers    ${reply}[status]    200    ${reply}
    Should Be Equal    ${reply}[finish_reason]    stop
    Should Contain    ${reply}[content]    waiting for approval of 1 tool call
    Should Be Equal    ${reply}[leanloop][stop_reason]    paused
    ${pending}=    Set Variable    ${reply}[leanloop][pending_calls]
    Length Should Be    ${pending}    1
    Should Be Equal    ${pending}[0][tool]    str_replace
    Should Be Equal    ${pending}[0][args][path]    calc.py
    Should Contain    ${pending}[0][preview]    +++ b/calc.py
    RETURN    ${pending}[0]

Decision Should Be In The Report
    [Documentation]    The report of the reply to the request that carried the decision
    ...    records it for ``call``, made by the serve client.
    [Arguments]    ${reply}    ${call}    ${decision}    ${reason}=${None}
    ${records}=    Create List
    FOR    ${record}    IN    @{reply}[leanloop][approvals]
        IF    $record["call_id"] == $call["id"]    Append To List    ${records}    ${record}
    END
    Length Should Be    ${records}    1    ${reply}[leanloop][approvals]
    Should Be Equal    ${records}[0][decision]    ${decision}
    Should Be Equal    ${records}[0][by]    serve client
    Should Be Equal    ${records}[0][reason]    ${reason}

Run Over Serve Should Have Ended
    [Documentation]    The run ended, not paused: with an answer (200, ``stop``) or honestly
    ...    without one (502 ``ended_without_answer``, the report in the error object, its
    ...    stop reason the rounds or the repeat guard).
    [Arguments]    ${reply}
    ${reason}=    Set Variable    ${reply}[leanloop][stop_reason]
    IF    $reason == "answer"
        Should Be Equal As Integers    ${reply}[status]    200    ${reply}
        Should Be Equal    ${reply}[finish_reason]    stop
        Should Not Be Empty    ${reply}[content]
    ELSE
        Should Be Equal As Integers    ${reply}[status]    502    ${reply}
        Should Be Equal    ${reply}[code]    ended_without_answer
        Should Be True    $reason in ("max_rounds", "repeated_calls")    ${reply}[leanloop][events]
        Should Contain    ${reply}[message]    stop reason ${reason}
    END
