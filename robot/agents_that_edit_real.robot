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
...                 Not here yet: the whole fix approved on a pty ending with an answer. On the
...                 0.5B the edit is approved, the file fixed and the test passes, then the
...                 model calls ``run_command`` again and again until the repeat guard ends
...                 the run honestly (exit 3, ``repeated_calls``): the answer-after-repeats
...                 request asks it to answer the *task*, which it reads as a call to make.
...                 Model: Qwen2.5-Coder-0.5B (the suite server's default); see the tests'
...                 notes for what it was measured to do.
Resource            resources/servers.resource
Library             resources/EditRealLibrary.py
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
