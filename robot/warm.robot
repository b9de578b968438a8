*** Settings ***
Documentation       The warm runner as a user meets it (ADR 0031): ``leanloop warm start`` in a
...                 private runtime folder, runs handed to it that answer, stream and exit as a
...                 cold run does (tool calls in the caller's workspace), ``warm status`` that
...                 counts them, and ``warm stop``. The runner, the CLI and the scripted
...                 server are real processes on 127.0.0.1.
Resource            resources/servers.resource
Library             resources/BudgetLibrary.py
Library             String
Suite Setup         Start Warm Suite
Suite Teardown      Stop Warm Suite
Test Setup          Reset Scripted Server


*** Variables ***
${SYSTEM}       You answer questions about the files in the workspace. Read files with read_file before answering.
${QUESTION}     Which code word does part 1 hold?


*** Test Cases ***
A Warm Run Answers, Calls Tools And Exits As A Cold Run Does
    ${file}=    Warm Agents File    warm-answer
    Queue Tool Call    read_file    {"path": "part_1.txt"}    prompt_tokens=300
    Queue Answer    The code word is river-1.    prompt_tokens=420
    ${warm}=    Leanloop    run    ${file}    ${QUESTION}
    Queue Tool Call    read_file    {"path": "part_1.txt"}    prompt_tokens=300
    Queue Answer    The code word is river-1.    prompt_tokens=420
    ${cold}=    Leanloop    run    ${file}    ${QUESTION}    warm=0
    Should Be Equal As Integers    ${warm.rc}    0
    Should Be Equal As Integers    ${cold.rc}    0
    Should Be Equal    ${warm.stdout}    The code word is river-1.
    Should Be Equal    ${warm.stdout}    ${cold.stdout}
    Should Contain    ${warm.stderr}    step 1 · read_file(path=part_1.txt) · ok ·
    Should Contain    ${warm.stderr}    stop: answer · 1 step · 1 tool call · 2 requests · 720 prompt tokens ·
    ${status}=    Leanloop    warm    status
    Should Contain    ${status.stdout}    current, 1 run,

A Warm Run That Ends Otherwise Exits 3 And Says So
    ${file}=    Warm Agents File    warm-rounds    max_rounds=1
    Queue Tool Call    read_file    {"path": "part_1.txt"}
    Queue Answer    Part 1 holds river-1.
    ${result}=    Leanloop    run    ${file}    ${QUESTION}
    Should Be Equal As Integers    ${result.rc}    3
    Should Contain    ${result.stderr}    leanloop: the run ended by max_rounds

Bad Input Gets The Cold Status And Line
    ${file}=    Warm Agents File    warm-bad
    ${warm}=    Leanloop    run    ${file}
    ${cold}=    Leanloop    run    ${file}    warm=0
    Should Be Equal As Integers    ${warm.rc}    2
    Should Be Equal    ${warm.stderr}    ${cold.stderr}


*** Keywords ***
Start Warm Suite
    Start Scripted Server For Suite    n_ctx=4096
    ${runtime}=    Set Variable    ${TEMPDIR}${/}leanloop-warm-runtime
    Remove Directory    ${runtime}    recursive=True
    Create Directory    ${runtime}
    Set Suite Variable    ${RUNTIME}    ${runtime}
    ${started}=    Leanloop    warm    start
    Should Be Equal As Integers    ${started.rc}    0    ${started.stderr}
    Should Contain    ${started.stdout}    warm runner up

Stop Warm Suite
    ${stopped}=    Leanloop    warm    stop
    Should Contain    ${stopped.stdout}    warm runner stopped
    ${status}=    Leanloop    warm    status
    Should Be Equal As Integers    ${status.rc}    1
    Stop Scripted Server

Leanloop
    [Documentation]    ``python -m leanloop ARGS`` with the suite's runtime folder and warm runs
    ...    on (the suites run with LEANLOOP_WARM=0); ``warm=0`` runs it cold.
    [Arguments]    @{args}    ${warm}=${EMPTY}
    ${python}=    Python Executable
    ${result}=    Run Process    ${python}    -m    leanloop    @{args}    timeout=300s
    ...    env:XDG_RUNTIME_DIR=${RUNTIME}    env:LEANLOOP_WARM=${warm}
    Log    ${result.stdout}
    Log    ${result.stderr}
    RETURN    ${result}

Warm Agents File
    [Arguments]    ${name}    &{settings}
    ${folder}=    Set Variable    ${TEMPDIR}${/}leanloop-${name}
    Remove Directory    ${folder}    recursive=True
    Write Large Workspace Files    ${folder}    count=2    size=600
    ${file}=    Write Budget Agents File    ${folder}    ${SCRIPTED_URL}    ${SYSTEM}
    ...    model=cli-model    &{settings}
    RETURN    ${file}
