*** Settings ***
Documentation       The ``leanloop run`` command as a user meets it, against the scripted server:
...                 how a run ended is always said (exit code 3 and a stderr line when it ended
...                 other than with the model's answer), a failed run still prints its JSON report
...                 with the error naming the server, and the answer streams to stdout as it is
...                 generated.
Resource            resources/servers.resource
Library             resources/BudgetLibrary.py
Library             resources/CliLibrary.py
Library             String
Suite Setup         Start Scripted Server For Suite    n_ctx=${SCRIPTED_CTX}
Suite Teardown      Stop Scripted Server
Test Setup          Reset Scripted Server


*** Variables ***
${SCRIPTED_CTX}     4096
${SYSTEM}           You answer questions about the files in the workspace. Read files with read_file before answering.


*** Test Cases ***
A Run That Answers Exits 0 And Ends With The Summary Line
    ${file}=    CLI Agents File    cli-answer
    Queue Tool Call    read_file    {"path": "part_1.txt"}    prompt_tokens=300
    Queue Answer    The code word is river-1.    prompt_tokens=420
    ${result}=    Run Leanloop    run    ${file}    Which code word does part 1 hold?
    Should Be Equal As Integers    ${result.rc}    0
    Should Be Equal    ${result.stdout}    The code word is river-1.
    ${last}=    Last Line    ${result.stderr}
    Should Start With    ${last}    stop: answer · 2 steps · 1 tool call · 2 requests · 720 prompt tokens ·
    Should Contain    ${result.stderr}    step 1 · read_file(path=part_1.txt) · ok ·

Repeated Calls End With Exit 3 And Say So
    ${file}=    CLI Agents File    cli-repeats    max_repeated_calls=1    max_rounds=8
    FOR    ${i}    IN RANGE    4
        Queue Tool Call    read_file    {"path": "part_1.txt"}
    END
    Queue Answer    Part 1 holds river-1.
    ${result}=    Run Leanloop    run    ${file}    Which code word does part 1 hold?
    Ended Otherwise    ${result}    repeated_calls
    Should Contain    ${result.stderr}    repeat, not run

Running Out Of Rounds Ends With Exit 3 And Says So
    ${file}=    CLI Agents File    cli-rounds    max_rounds=1
    Queue Tool Call    read_file    {"path": "part_1.txt"}
    Queue Answer    Part 1 holds river-1.
    ${result}=    Run Leanloop    run    ${file}    Which code word does part 1 hold?
    Ended Otherwise    ${result}    max_rounds
    Should Be Equal    ${result.stdout}    Part 1 holds river-1.

A Spent Budget Ends With Exit 3 And Says So
    ${file}=    CLI Agents File    cli-budget    trim_tool_results=false    max_rounds=12
    ...    count=8    size=2000
    FOR    ${n}    IN RANGE    1    9
        Queue Tool Call    read_file    {"path": "part_${n}.txt"}    prompt_tokens=0
    END
    Queue Answer    The parts hold river-1 to river-4.    prompt_tokens=0
    ${result}=    Run Leanloop    run    ${file}    Which code words do the parts hold?
    Ended Otherwise    ${result}    budget_exhausted
    Should Contain    ${result.stderr}    budget spent

The JSON Report Of A Run That Ended Otherwise Says How, And Exits 3
    ${file}=    CLI Agents File    cli-json-rounds    max_rounds=1
    Queue Tool Call    read_file    {"path": "part_1.txt"}
    Queue Answer    Part 1 holds river-1.
    ${result}=    Run Leanloop    run    ${file}    Which code word?    --json
    Should Be Equal As Integers    ${result.rc}    3
    ${report}=    Parse Json Output    ${result.stdout}
    Should Be Equal    ${report}[stop_reason]    max_rounds
    Should Be Equal    ${report}[answer]    Part 1 holds river-1.

With The Server Stopped, --json Prints A Report With The Error Naming The URL, Exit 1
    ${port}=    Free Port
    ${folder}=    Set Variable    ${TEMPDIR}${/}leanloop-cli-down
    Remove Directory    ${folder}    recursive=True
    ${file}=    Write Budget Agents File    ${folder}    http://127.0.0.1:${port}/v1    ${SYSTEM}
    ...    model=nothing-there    context_window=4096
    ${result}=    Run Leanloop    run    ${file}    Which code word?    --json
    Should Be Equal As Integers    ${result.rc}    1
    ${report}=    Parse Json Output    ${result.stdout}
    Should Be Equal    ${report}[stop_reason]    failed
    Should Be Equal    ${report}[answer]    ${None}
    Should Contain    ${report}[error]    http://127.0.0.1:${port}/v1
    Should Contain    ${report}[error]    leanloop local start
    Should Contain    ${result.stderr}    error: the request to the model failed at step 1
    Should Not Contain    ${result.stderr}    Traceback

The Answer Streams To Stdout Before The Run Ends
    [Documentation]    The server sends the answer in 16-character pieces, one every 0.4 s:
    ...    the first characters must reach stdout while the rest is still coming.
    ${file}=    CLI Agents File    cli-stream
    Queue Answer    The code word for part one is river-1, and part two holds river-2.
    ...    chunk_delay=0.4
    ${result}=    Run Leanloop Watching Stdout    run    ${file}    Which code word?    --quiet
    Should Be Equal As Integers    ${result}[rc]    0
    Should Be Equal    ${result}[stdout]    The code word for part one is river-1, and part two holds river-2.\n
    Should Not Be Equal    ${result}[first_stdout_s]    ${None}
    ${lead}=    Evaluate    ${result}[ended_s] - ${result}[first_stdout_s]
    Log    first answer text after ${result}[first_stdout_s] s; the run ended after ${result}[ended_s] s
    Should Be True    ${lead} > 1.0    the first answer characters came only ${lead} s before the end


*** Keywords ***
CLI Agents File
    [Documentation]    A fresh folder with part files and an agents file on the scripted server.
    [Arguments]    ${name}    ${count}=2    ${size}=600    &{settings}
    ${folder}=    Set Variable    ${TEMPDIR}${/}leanloop-${name}
    Remove Directory    ${folder}    recursive=True
    Write Large Workspace Files    ${folder}    count=${count}    size=${size}
    ${file}=    Write Budget Agents File    ${folder}    ${SCRIPTED_URL}    ${SYSTEM}
    ...    model=cli-model    &{settings}
    RETURN    ${file}

Ended Otherwise
    [Arguments]    ${result}    ${reason}
    Should Be Equal As Integers    ${result.rc}    3    the run should exit 3 (ended by ${reason})
    Should Not Be Empty    ${result.stdout}    the composed answer is still printed
    Should Contain    ${result.stderr}    leanloop: the run ended by ${reason}
    Should Contain    ${result.stderr}    stop: ${reason}

Last Line
    [Arguments]    ${text}
    ${lines}=    Split To Lines    ${text}
    RETURN    ${lines}[-1]
