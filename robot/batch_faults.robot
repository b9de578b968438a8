*** Settings ***
Documentation       The fault script for ``leanloop batch`` (issue 38: N4, N5, N6, N8, N19, N20):
...                 real batch processes against the fake model server on 127.0.0.1, which
...                 answers ``echo: <question>``. Two batches at once on one results file, an
...                 ``expected`` that backtracks without end in ``re``, a question holding a lone
...                 surrogate, a line nested too deeply, a full disk (a file size limit: the write
...                 fails with ``EFBIG`` as a full disk's with ``ENOSPC``, the same one line), a
...                 byte order mark, SIGKILL mid-batch. Each ends with every task's result once,
...                 none lost, and no traceback; bad input is one located line, exit 2, before
...                 any request. The server holds its answers after the first N while a test
...                 needs a batch mid-run: no check waits on a clock.
Library             resources/BatchFaultLibrary.py
Library             Collections
Suite Setup         Start Batch Model Server
Suite Teardown      Stop Batch Model Server
Test Setup          Reset Batch Model Server
Test Timeout        3 minutes


*** Test Cases ***
Two Batches On One Results File: The Second Is Refused In One Line, Each Task Runs Once
    ${folder}=    Batch Folder    two-at-once
    Write Tasks    ${folder}    12
    Hold Answers After    1
    Start Batch    ${folder}    name=first
    Wait For Results    ${folder}    1    name=first
    ${held}=    Result Lines    ${folder}
    ${second}=    Run Batch    ${folder}    name=second
    Outcome Should Be    ${second}    2
    ...    error: out.jsonl: another `leanloop batch` is writing to it; wait for it to end
    ${untouched}=    Result Lines    ${folder}
    Lists Should Be Equal    ${untouched}    ${held}
    Release Answers
    ${first}=    Wait For Batch    first
    Outcome Should Be    ${first}    0
    Should Contain    ${first}[stdout]    12/12 tasks done (12 this run, 0 earlier)
    Results Should Hold Each Task Once    ${folder}    12
    Model Requests Should Be    12

An Expected Pattern That Backtracks Without End In re Does Not Hold The Batch
    # re.search("(a+)+$", "echo: aaa…ab") runs for hours holding the GIL; the batch matches
    # with the regex module and a time limit (a unit test injects the limit).
    ${folder}=    Batch Folder    redos
    ${a}=    Evaluate    "a" * 40 + "b"
    Write Task Lines    ${folder}
    ...    {"id": "t0", "question": "${a}", "expected": "(a+)+$"}
    ...    {"id": "t1", "question": "question 1", "expected": "question 1$"}
    ${result}=    Run Batch    ${folder}
    Outcome Should Be    ${result}    0
    Should Contain    ${result}[stdout]    accuracy: 1/2 correct
    ${rows}=    Results Should Hold Each Task Once    ${folder}    2
    Should Be Equal    ${rows}[0][correct]    ${False}

A Question Holding A Lone Surrogate Is Refused At Its Line Before Any Request
    ${folder}=    Batch Folder    surrogate
    Write Task Lines    ${folder}
    ...    {"id": "t0", "question": "question 0"}
    ...    {"id": "t1", "question": "half a character \\ud800"}
    ${result}=    Run Batch    ${folder}
    Outcome Should Be    ${result}    2
    ...    error: tasks.jsonl:2: question: holds '\\ud800', a lone surrogate: not text (UTF-8)
    Results File Should Not Exist    ${folder}
    Model Requests Should Be    0

A Line Nested Too Deeply Is Refused At Its Line
    ${folder}=    Batch Folder    nested
    ${deep}=    Nested Line    100000
    Write Task Lines    ${folder}    {"id": "t0", "question": "question 0"}    ${deep}
    ${result}=    Run Batch    ${folder}
    Outcome Should Be    ${result}    2    error: tasks.jsonl:2: not a task: nested too deeply to read
    Results File Should Not Exist    ${folder}

A Full Disk Ends The Batch In One Line, And A Run Again Finishes It
    ${folder}=    Batch Folder    disk-full
    Write Tasks    ${folder}    8
    ${full}=    Run Batch    ${folder}    file_size_limit=1500
    Outcome Should Be    ${full}    1
    ...    error: cannot write out.jsonl: File too large; rerun to resume
    ${kept}=    Result Lines    ${folder}
    ${again}=    Run Batch    ${folder}
    Outcome Should Be    ${again}    0
    ${after}=    Result Lines    ${folder}
    ${prefix}=    Get Slice From List    ${after}    0    ${{len($kept)}}
    Lists Should Be Equal    ${prefix}    ${kept}
    Results Should Hold Each Task Once    ${folder}    8

A Tasks File That Starts With A Byte Order Mark Runs
    ${folder}=    Batch Folder    bom
    Write Tasks    ${folder}    3    bom=True
    ${result}=    Run Batch    ${folder}
    Outcome Should Be    ${result}    0
    Results Should Hold Each Task Once    ${folder}    3

A Batch Killed With SIGKILL Resumes At Once Without Loss Or Duplicate
    ${folder}=    Batch Folder    kill-9
    Write Tasks    ${folder}    10
    Hold Answers After    3
    Start Batch    ${folder}    concurrency=2
    Wait For Results    ${folder}    3
    Kill Batch
    ${before}=    Result Lines    ${folder}
    Length Should Be    ${before}    3
    Release Answers
    # The killed batch's lock went with its process: the next one is not refused.
    ${again}=    Run Batch    ${folder}    concurrency=2
    Outcome Should Be    ${again}    0
    ${after}=    Result Lines    ${folder}
    ${prefix}=    Get Slice From List    ${after}    0    ${{len($before)}}
    Lists Should Be Equal    ${prefix}    ${before}
    Results Should Hold Each Task Once    ${folder}    10

No Batch Of The Suite Printed A Traceback
    No Batch Printed A Traceback
