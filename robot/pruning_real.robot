*** Settings ***
Documentation       Pruning large files with the real embedded model (the acceptance check for
...                 reading only what matters, ADR 0006 amendment 5). The main model is
...                 scripted: it calls read_file on a log without a `limit`, as small models
...                 do, with an output_prune_context, then answers. The call goes through the
...                 pruning pass, so read_file reads on to the end of the file; the pruning
...                 model is the real llama-server with Qwen2.5-Coder 0.5B at --ctx-size 4096.
...                 The pass scores small windows around the lines that hold the words it looks
...                 for, reads them best first in one or two requests, and stops when the
...                 windows left hold none of them: the three relevant lines must be kept
...                 verbatim within 45 seconds, and the parts not read are named with the
...                 read_file calls that read them.
Resource            resources/servers.resource
Library             resources/PruningRealLibrary.py
Suite Setup         Start Local Llama Server For Suite    ctx_size=4096
Suite Teardown      Stop Local Llama Server
Test Tags           local-model    real-pruning


*** Variables ***
${MAX_SECONDS}      45
# The first request has no measured speed to scale its timeout from.
${TIMEOUT_FLOOR}    300
# The whole pass; the pass is expected to stop long before it.
${PASS_DEADLINE}    240
${TEST_TIMEOUT}     4 minutes


*** Test Cases ***
The Real Model Prunes A 50 KB Log Read Without A Limit To Its Three Deadlock Lines
    [Timeout]    ${TEST_TIMEOUT}
    ${folder}=    Set Variable    ${TEMPDIR}${/}pruning-real-log
    Remove Directory    ${folder}    recursive=True
    ${errors}=    Write Deadlock Log    ${folder}    lines=400
    ${size}=    File Size    ${folder}    app.log
    Should Be True    ${size} >= 48000    the log should be about 50 KB, not ${size}
    ${page}=    Read File Output    ${folder}    limit=200    path=app.log
    Should Contain    ${page}    next: read_file(    a call without a limit shows only the first page
    ${ratio}=    Chars Per Token Of    ${page}    ${LLAMA_URL}
    Log    characters a token of the numbered log: ${ratio}    console=True
    Should Not Be Equal    ${ratio}[server]    ${None}    the llama-server should count tokens (/tokenize)
    ${file}=    Write Real Pruning Agents File    ${folder}    ${LLAMA_URL}
    ...    the ERROR lines that report a deadlock
    ...    pruning_timeout=${TIMEOUT_FLOOR}    pruning_deadline=${PASS_DEADLINE}
    ${run}=    Run Real Pruning Agent    ${file}    Why did the nightly job stop?
    Should Be Equal    ${run}[answer]    Three deadlocks stopped the job.
    The Whole File Went Through The Pass And Kept    ${run}    ${errors}    ${size}

The Real Model Prunes A 71 KB JSON Event Log To Its Three Certificate Errors Over 640 Lines
    [Timeout]    ${TEST_TIMEOUT}
    ${folder}=    Set Variable    ${TEMPDIR}${/}pruning-real-json
    Remove Directory    ${folder}    recursive=True
    ${errors}=    Write Json Log    ${folder}    lines=640
    ${size}=    File Size    ${folder}    events.jsonl
    ${file}=    Write Real Pruning Agents File    ${folder}    ${LLAMA_URL}
    ...    the error events about the expired certificate
    ...    pruning_timeout=${TIMEOUT_FLOOR}    pruning_deadline=${PASS_DEADLINE}
    ...    path=events.jsonl    answer=An expired certificate broke the gateway.
    ${run}=    Run Real Pruning Agent    ${file}    Why did the gateway fail?
    Should Be Equal    ${run}[answer]    An expired certificate broke the gateway.
    The Whole File Went Through The Pass And Kept    ${run}    ${errors}    ${size}


*** Keywords ***
The Whole File Went Through The Pass And Kept
    [Documentation]    The run pruned the whole file in time, kept ${errors} verbatim and
    ...    named every part it did not read (on the one info line of the common path, else
    ...    with the read_file call that reads it).
    [Arguments]    ${run}    ${errors}    ${size}
    Log    ${run}[log]
    Log Many    @{run}[answers]
    ${event}=    Set Variable    ${run}[pruned_events][0]
    Log    pruned in ${run}[seconds] s: ${event}[chunks] request(s), ${run}[prune_requests] extraction request(s), ${event}[chars_raw] -> ${event}[chars_out] characters    console=True
    ${report}=    Set Variable    ${run}[report]
    Log    the pass's requests: ${report}[extraction]    console=True
    ${call}=    Set Variable    ${report}[tool_calls][0]
    Should Be Equal    ${call}[name]    read_file
    Should Be True    $call["pruned"] is True    the read_file result was not pruned: ${report}
    Should Be Empty    ${report}[pruning_fallbacks]
    Should Be Equal    ${event}[fallback]    ${None}
    # read on from the first page to the end of the file
    Should Be True    ${event}[chars_raw] > ${size}    the pass saw ${event}[chars_raw] of ${size} characters
    Length Should Be    ${run}[tool_messages]    1
    ${message}=    Set Variable    ${run}[tool_messages][0]
    Should Start With    ${message}    [PRUNE_INFO_START]
    Should End With    ${message}    [PRUNE_OUTPUT_END]
    # the parts not read are named: on the common path on the one info line ("3/1200 lines
    # kept; unread 1-99, 130-1200; output_prune=false for all"), else each with its call
    ${info}=    Evaluate    $message.split("\\n[PRUNE_INFO_END]")[0].splitlines()[1:]
    ${compact}=    Evaluate    [l for l in $info if re.fullmatch(r"\\d+/\\d+ lines kept; unread .+; output_prune=false for all", l)]    modules=re
    ${unread}=    Evaluate    [l for l in $info if "not read (" in l]
    Log    parts not read: ${compact} ${unread}    console=True
    Should Be True    $compact or $unread    no part of the file is named as not read: ${info}
    FOR    ${line}    IN    @{unread}
        Should Contain    ${line}    read_file(offset=
    END
    Lines Should Be Kept Verbatim    ${message}    ${errors}
    Should Be True    ${run}[seconds] < ${MAX_SECONDS}    the run took ${run}[seconds] s
