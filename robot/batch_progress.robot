*** Settings ***
Documentation       What ``leanloop batch`` shows while it runs (issue 39): on a terminal, one
...                 progress line on stderr, redrawn in place, with the tasks done, running and
...                 failed, the rate and the ETA; under ``--json``, or with its output in files,
...                 only what a program reads (the summary lines, or one JSON object), no
...                 carriage return, no escape sequence. Real batch processes on pseudo-terminals
...                 against the fake model server on 127.0.0.1; the server holds its answers
...                 after the first N while a test reads the line of a batch mid-run: no check
...                 waits on a clock.
Library             resources/BatchProgressLibrary.py
Suite Setup         Start Progress Model Server
Suite Teardown      Stop Progress Model Server
Test Teardown       End Batch
Test Timeout        3 minutes


*** Test Cases ***
On A Terminal The Batch Shows Done, Running, Failed, Rate And ETA While A Task Runs
    ${folder}=    Batch Folder With Tasks    terminal    5    failing=t1
    Hold Answers After    2
    Start Batch On A Terminal    ${folder}
    # Two tasks ended (one failed), the third is held at the server: the line says so now.
    ${shown}=    Terminal Should Show    2/5 done · 1 running · 1 failed · [0-9.]+/(s|min|h) · ETA \\d+:\\d\\d
    Release Answers
    ${result}=    Wait For Batch On Terminals
    Should Be Equal As Integers    ${result}[rc]    1
    ${frames}=    Progress Frames    ${result}[stderr]
    Should Contain    ${frames}[-1]    5/5 done · 0 running · 1 failed
    Should Match Regexp    ${frames}[-1]    ^\\[#+\\] 5/5 done
    # Drawn in place: every drawing starts with a carriage return, none with a new line.
    Should Be True    len($frames) >= 6    ${frames}
    Should Contain    ${result}[stdout]    \nbatch: 5/5 tasks done (5 this run, 0 earlier)

With --json On A Terminal Stdout Is One JSON Object And Stderr Shows Nothing
    ${folder}=    Batch Folder With Tasks    json-terminal    3    failing=t2
    Start Batch On Two Terminals    ${folder}    --json
    ${result}=    Wait For Batch On Terminals
    Should Be Equal As Integers    ${result}[rc]    1
    Should Be Equal    ${result}[stderr]    ${EMPTY}
    ${summary}=    Should Be One JSON Object    ${result}[stdout]
    Should Be Equal As Integers    ${summary}[tasks]    3
    Should Be Equal As Integers    ${summary}[failed]    1
    Should Be Equal As Integers    ${summary}[answered]    2

Off A Terminal The Output Is The Summary Alone
    ${folder}=    Batch Folder With Tasks    files    4
    ${result}=    Run Batch Off A Terminal    ${folder}
    Should Be Equal As Integers    ${result}[rc]    0
    Should Be Equal    ${result}[stderr]    ${EMPTY}
    Output Should Be Machine Readable    ${result}[stdout]
    Should Start With    ${result}[stdout]    batch: 4/4 tasks done (4 this run, 0 earlier)

Off A Terminal With --json The Output Is One JSON Object
    ${folder}=    Batch Folder With Tasks    files-json    2
    ${result}=    Run Batch Off A Terminal    ${folder}    --json
    Should Be Equal As Integers    ${result}[rc]    0
    Should Be Equal    ${result}[stderr]    ${EMPTY}
    Output Should Be Machine Readable    ${result}[stdout]
    ${summary}=    Should Be One JSON Object    ${result}[stdout]
    Should Be Equal As Integers    ${summary}[ran]    2
