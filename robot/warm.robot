*** Settings ***
Documentation       The warm runner as a user meets it (ADR 0031): ``leanloop warm start`` in a
...                 private runtime folder, runs handed to it that answer, stream and exit as a
...                 cold run does (tool calls in the caller's workspace), ``warm status`` that
...                 counts them, and ``warm stop``; and where it meets the other promises: a
...                 session's turns go on across warm and cold runs, and a run whose caller is
...                 killed ends it and leaves a turn ``--resume`` finishes with each tool run once,
...                 and a runner of other code sends the run cold and stops. The
...                 runner, the CLI and the scripted server are real processes on 127.0.0.1.
Resource            resources/servers.resource
Library             resources/BudgetLibrary.py
Library             resources/SessionLibrary.py
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
    Should Contain    ${warm.stderr}    stop: answer · 2 steps · 1 tool call · 2 requests · 720 prompt tokens ·
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


A Session Goes On Across Warm And Cold Turns
    ${file}=    Session Agents File    warm-session    ${SCRIPTED_URL}
    Queue Tool Call    lookup    {"key": "tide"}
    Queue Answer    High tide is at tide-value.
    ${first}=    Leanloop    run    ${file}    When is high tide?    --session    w1
    Should Be Equal As Integers    ${first.rc}    0    ${first.stderr}
    Queue Answer    You asked when high tide is.
    ${second}=    Leanloop    run    ${file}    What did I ask?    --session    w1    warm=0
    Should Be Equal As Integers    ${second.rc}    0    ${second.stderr}
    Queue Answer    Twice.
    ${third}=    Leanloop    run    ${file}    How often did I ask?    --session    w1
    Should Be Equal    ${third.stdout}    Twice.
    # Each turn's request carries the turns before it, whichever process ran them.
    Scripted Request Should Contain    3    When is high tide?    role=user
    Scripted Request Should Contain    3    High tide is at tide-value.
    Scripted Request Should Contain    4    What did I ask?    role=user
    Scripted Request Should Contain    4    When is high tide?    role=user
    ${status}=    Leanloop    warm    status
    Should Not Contain    ${status.stdout}    , 0 runs,

A Warm Run Whose Caller Is Killed Leaves A Turn That --resume Finishes
    [Documentation]    As ``sessions.robot``'s SIGKILL test, through the runner: the caller is
    ...    killed while step 3's reply streams slowly. Its run, the runner's child, hears
    ...    the caller go and ends as on SIGTERM: the turn is finished as failed (not left
    ...    claimed, as a killed cold process leaves it), and ``--resume`` through the
    ...    runner runs steps 3 and 4 from the stored steps, each tool once.
    ${file}=    Session Agents File    warm-resume    ${SCRIPTED_URL}
    Queue Tool Call    lookup    {"key": "a"}
    Queue Tool Call    lookup    {"key": "b"}
    Queue Slow Tool Call    lookup    {"key": "c"}    chunk_delay=1.5
    ${python}=    Python Executable
    ${run}=    Start Process    ${python}    -m    leanloop    run    ${file}
    ...    Look up the keys a, b, c and d.    --session    k1
    ...    env:XDG_RUNTIME_DIR=${RUNTIME}    env:LEANLOOP_WARM=${EMPTY}
    Wait Until Tool Log Has    ${file}    2
    Wait Until Scripted Requests Reach    3
    Send Signal To Process    SIGKILL    ${run}
    ${killed}=    Wait For Process    ${run}    timeout=10s    on_timeout=kill
    Should Be Equal As Integers    ${killed.rc}    -9
    Wait Until Keyword Succeeds    30s    0.2s    No Warm Run Is In Flight
    ${log}=    Tool Log    ${file}
    Should Be Equal    ${log}    ${{ ["a", "b"] }}
    Queue Tool Call    lookup    {"key": "c"}
    Queue Tool Call    lookup    {"key": "d"}
    Queue Answer    The keys a, b, c and d hold their values.
    ${resumed}=    Leanloop    run    ${file}    --session    k1    --resume
    Should Be Equal As Integers    ${resumed.rc}    0    ${resumed.stderr}
    Should Be Equal    ${resumed.stdout}    The keys a, b, c and d hold their values.
    ${log}=    Tool Log    ${file}
    Should Be Equal    ${log}    ${{ ["a", "b", "c", "d"] }}


A Runner Of Other Code Refuses The Run, Which Goes Cold, And Stops
    [Documentation]    A runner whose code stamp is not the caller's (an upgrade, an edited
    ...    editable install) takes no run: the run goes cold and answers, the runner exits.
    ${file}=    Warm Agents File    warm-stale
    ${stale_runtime}=    Set Variable    ${TEMPDIR}${/}leanloop-warm-stale-runtime
    Remove Directory    ${stale_runtime}    recursive=True
    ${python}=    Python Executable
    ${socket}=    Run Process    ${python}    -c
    ...    from leanloop.cli.warm import socket_path; print(socket_path())
    ...    env:XDG_RUNTIME_DIR=${stale_runtime}
    ${runner}=    Start Process    ${python}    -m    leanloop.cli.warm_server    ${socket.stdout}
    ...    --stamp    other    --idle    60    env:XDG_RUNTIME_DIR=${stale_runtime}
    Wait Until Keyword Succeeds    60s    0.2s    Stale Runner Is Up    ${stale_runtime}
    Queue Answer    The code word is river-1.
    ${run}=    Run Process    ${python}    -m    leanloop    run    ${file}    ${QUESTION}
    ...    env:XDG_RUNTIME_DIR=${stale_runtime}    env:LEANLOOP_WARM=${EMPTY}
    Should Be Equal As Integers    ${run.rc}    0    ${run.stderr}
    Should Be Equal    ${run.stdout}    The code word is river-1.
    ${ended}=    Wait For Process    ${runner}    timeout=60s    on_timeout=kill
    Should Be Equal As Integers    ${ended.rc}    0


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

No Warm Run Is In Flight
    ${status}=    Leanloop    warm    status
    Should Contain    ${status.stdout}    , 0 running,

Stale Runner Is Up
    [Arguments]    ${runtime}
    ${python}=    Python Executable
    ${status}=    Run Process    ${python}    -m    leanloop    warm    status
    ...    env:XDG_RUNTIME_DIR=${runtime}
    Should Contain    ${status.stdout}    stale (the code changed)
