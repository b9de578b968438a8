*** Settings ***
Documentation       Sessions through the CLI, against the scripted server: a second
...                 ``leanloop run --session`` process continues the conversation the first
...                 began; a run killed with SIGKILL half-way leaves an unfinished turn that
...                 a new question may not skip and ``--resume`` finishes with no tool run
...                 twice; ``leanloop chat`` takes one question a line from stdin, all in one
...                 session. Each test has its own folder, so its own session store.
Resource            resources/servers.resource
Library             resources/SessionLibrary.py
Library             String
Suite Setup         Start Sessions Server
Suite Teardown      Stop Everything
Test Setup          Reset Scripted Server
Test Timeout        2 minutes


*** Test Cases ***
A Second Run On The Same Session Continues The Conversation
    [Documentation]    Two processes, one session: turn 2's request carries turn 1's
    ...    question and answer before its own question, and its report counts turn 1.
    ${file}=    Session Agents File    continue    ${SCRIPTED_URL}
    Queue Answer    The harbour code is gull-7.
    ${first}=    Leanloop    run    ${file}    What is the harbour code?    --session    t1
    Should Be Equal As Integers    ${first.rc}    0    ${first.stderr}
    Should Be Equal    ${first.stdout}    The harbour code is gull-7.
    Queue Answer    You asked for the harbour code: gull-7.
    ${second}=    Leanloop    run    ${file}    What did I ask you before?    --session    t1
    ...    --json
    Should Be Equal As Integers    ${second.rc}    0    ${second.stderr}
    Scripted Request Count Should Be    2
    Request Should Carry Turn    2    What is the harbour code?    The harbour code is gull-7.
    ${current}=    Last User Message    2
    Should Contain    ${current}    What did I ask you before?
    ${report}=    Parse Report    ${second.stdout}
    Should Be Equal    ${report}[answer]    You asked for the harbour code: gull-7.
    Should Be Equal    ${report}[session][thread_id]    t1
    Should Be Equal As Integers    ${report}[session][turn]    2
    Should Be Equal As Integers    ${report}[session][earlier_turns]    1
    Should Be Equal    ${report}[session][resumed_from]    ${None}

A Run Killed After Step 2 Of 4 Resumes With Each Tool Run Once
    [Documentation]    Steps 1 and 2 run lookup a and b; step 3's reply streams slowly, and
    ...    the process is killed (SIGKILL) while it waits for it, after step 2 was stored.
    ...    A new question is then refused (exit 2, pointing at --resume); --resume runs
    ...    steps 3 and 4 from the stored steps, so the tool log holds a, b, c, d once each.
    ${file}=    Session Agents File    resume    ${SCRIPTED_URL}
    Queue Tool Call    lookup    {"key": "a"}
    Queue Tool Call    lookup    {"key": "b"}
    Queue Slow Tool Call    lookup    {"key": "c"}    chunk_delay=1.5
    ${python}=    Python Executable
    ${run}=    Start Process    ${python}    -m    leanloop    run    ${file}
    ...    Look up the keys a, b, c and d.    --session    k1
    Wait Until Tool Log Has    ${file}    2
    # Each completed step is stored before the next request: request 3 means step 2 is stored.
    Wait Until Scripted Requests Reach    3
    Sleep    0.3s    the process is now waiting for step 3's slow reply
    Send Signal To Process    SIGKILL    ${run}
    ${killed}=    Wait For Process    ${run}    timeout=10s    on_timeout=kill
    Log    ${killed.stderr}
    Should Be Equal As Integers    ${killed.rc}    -9    the run should have died by SIGKILL
    ${log}=    Tool Log    ${file}
    Should Be Equal    ${log}    ${{ ["a", "b"] }}

    ${refused}=    Leanloop    run    ${file}    Something else?    --session    k1
    Should Be Equal As Integers    ${refused.rc}    2    ${refused.stderr}
    Should Contain    ${refused.stderr}    --resume
    Scripted Request Count Should Be    3

    Queue Tool Call    lookup    {"key": "c"}
    Queue Tool Call    lookup    {"key": "d"}
    Queue Answer    The keys a, b, c and d hold their values.
    ${resumed}=    Leanloop    run    ${file}    --session    k1    --resume    --json
    Should Be Equal As Integers    ${resumed.rc}    0    ${resumed.stderr}
    ${report}=    Parse Report    ${resumed.stdout}
    Should Be Equal    ${report}[answer]    The keys a, b, c and d hold their values.
    Should Be Equal    ${report}[stop_reason]    answer
    Should Be Equal As Integers    ${report}[session][resumed_from]    2
    ${log}=    Tool Log    ${file}
    Should Be Equal    ${log}    ${{ ["a", "b", "c", "d"] }}
    Scripted Request Count Should Be    6
    # Nothing the killed process had done is lost: the first request after the resume
    # carries the question and both results of the stored steps.
    Scripted Request Should Contain    4    Look up the keys a, b, c and d.    role=user
    Scripted Request Should Contain    4    the value of a is a-value    role=tool
    Scripted Request Should Contain    4    the value of b is b-value    role=tool
    Should Contain    ${resumed.stderr}    step 3 · lookup(key=c) · ok
    Should Contain    ${resumed.stderr}    step 4 · lookup(key=d) · ok
    Should Not Contain    ${resumed.stderr}    step 1 ·

Chat Takes One Question A Line And Keeps Them In One Session
    [Documentation]    Two lines on stdin are two turns: both answers on stdout, a
    ...    ``stop:`` line per turn on stderr, and the second request carries the first turn.
    ${file}=    Session Agents File    chat    ${SCRIPTED_URL}
    Queue Tool Call    lookup    {"key": "tide"}
    Queue Answer    High tide is at tide-value.
    Queue Answer    I told you high tide is at tide-value.
    ${python}=    Python Executable
    ${chat}=    Run Process    ${python}    -m    leanloop    chat    ${file}    --session    c1
    ...    stdin=When is high tide?\nWhat did you tell me?\n    timeout=60s
    Log    ${chat.stdout}
    Log    ${chat.stderr}
    Should Be Equal As Integers    ${chat.rc}    0    ${chat.stderr}
    Should Be Equal    ${chat.stdout}
    ...    High tide is at tide-value.\nI told you high tide is at tide-value.
    ${stops}=    Get Lines Matching Regexp    ${chat.stderr}    ^stop: answer    partial_match=True
    ${count}=    Get Line Count    ${stops}
    Should Be Equal As Integers    ${count}    2    two turns, two stop lines: ${chat.stderr}
    Should Contain    ${chat.stderr}    step 1 · lookup(key=tide) · ok
    Scripted Request Count Should Be    3
    Request Should Carry Turn    3    When is high tide?    High tide is at tide-value.
    ${current}=    Last User Message    3
    Should Contain    ${current}    What did you tell me?
    ${log}=    Tool Log    ${file}
    Should Be Equal    ${log}    ${{ ["tide"] }}


*** Keywords ***
Leanloop
    [Documentation]    Run ``python -m leanloop`` with ${args} (at most a minute).
    [Arguments]    @{args}
    ${python}=    Python Executable
    ${result}=    Run Process    ${python}    -m    leanloop    @{args}    timeout=60s
    Log    ${result.stdout}
    Log    ${result.stderr}
    RETURN    ${result}

Start Sessions Server
    [Documentation]    The scripted server, with a window large enough that no run warns about it.
    Start Scripted Server For Suite    n_ctx=16384
    # Test 2 kills a run while its reply streams: the broken pipe is expected there.
    Ignore Dropped Connections

Stop Everything
    Terminate All Processes    kill=True
    Stop Scripted Server
