*** Settings ***
Documentation       Pruning a 50 KB log with the real embedded model (the acceptance check for
...                 chunks that fit, ADR 0006). The main model is scripted: it calls read_file on
...                 app.log (400 lines, three of them ERROR ... deadlock) with an
...                 output_prune_context, then answers. The pruning model is the real llama-server
...                 with Qwen2.5-Coder 0.5B at --ctx-size 4096: the log does not fit one request, so
...                 the pass sizes chunks from the server's own token count (POST /tokenize), reads
...                 them best-first (the parts with the focus words first) within its time limit
...                 (pruning_deadline), and must finish pruned, keeping the three lines verbatim,
...                 within five minutes. Parts it did not reach are named with the call that reads
...                 them: at about 80 prompt tokens a second on two cores, 50 KB (some 28,000
...                 tokens) cannot all be read in five minutes.
Resource            resources/servers.resource
Library             resources/PruningRealLibrary.py
Suite Setup         Start Local Llama Server For Suite    ctx_size=4096
Suite Teardown      Stop Local Llama Server


*** Variables ***
${QUESTION}         Why did the nightly job stop?
${FOCUS}            the ERROR lines that report a deadlock
${MAX_SECONDS}      300
# 400 lines of about 125 characters: the 50 KB of the acceptance check.
${LOG_LINES}        400
${MIN_RAW_CHARS}    50000
# The first request has no measured speed to scale its timeout from.
${TIMEOUT_FLOOR}    300
# The whole pass; the rest of the five minutes is the run around it.
${PASS_DEADLINE}    240
${TEST_TIMEOUT}     6 minutes


*** Test Cases ***
The Real Model Prunes A 50 KB Log To Its Three Deadlock Lines Within Five Minutes
    # In `./dev test`; `./dev nox -s pruning_real` runs it alone. The pass deadline bounds it.
    [Tags]    local-model    real-pruning
    # The criterion is five minutes; a slower run fails here instead of holding the suite.
    [Timeout]    ${TEST_TIMEOUT}
    ${folder}=    Set Variable    ${TEMPDIR}${/}pruning-real
    Remove Directory    ${folder}    recursive=True
    ${errors}=    Write Deadlock Log    ${folder}    lines=${LOG_LINES}
    ${raw}=    Read File Output    ${folder}
    ${raw_chars}=    Get Length    ${raw}
    Should Be True    ${raw_chars} >= ${MIN_RAW_CHARS}    the read_file result should be about 50 KB, not ${raw_chars}
    ${ratio}=    Chars Per Token Of    ${raw}    ${LLAMA_URL}
    Log    characters a token of the numbered log: ${ratio}    console=True
    Should Not Be Equal    ${ratio}[server]    ${None}    the llama-server should count tokens (/tokenize)
    ${file}=    Write Real Pruning Agents File    ${folder}    ${LLAMA_URL}    ${FOCUS}
    ...    pruning_timeout=${TIMEOUT_FLOOR}    pruning_deadline=${PASS_DEADLINE}
    ${run}=    Run Real Pruning Agent    ${file}    ${QUESTION}
    Log    ${run}[log]
    Log Many    @{run}[answers]
    ${event}=    Set Variable    ${run}[pruned_events][0]
    Log    pruned in ${run}[seconds] s: ${event}[chunks] chunk(s), ${run}[prune_requests] extraction request(s), ${event}[chars_raw] -> ${event}[chars_out] characters    console=True
    Should Be Equal    ${run}[answer]    Three deadlocks stopped the job.
    # the tool result is pruned
    ${report}=    Set Variable    ${run}[report]
    ${call}=    Set Variable    ${report}[tool_calls][0]
    Should Be Equal    ${call}[name]    read_file
    Should Be True    $call["pruned"] is True    the read_file result was not pruned: ${report}
    Should Be Empty    ${report}[pruning_fallbacks]
    Should Be Equal    ${event}[fallback]    ${None}
    Should Be True    ${event}[chunks] > 1    a 50 KB log cannot fit one 4096-token request
    Length Should Be    ${run}[tool_messages]    1
    ${message}=    Set Variable    ${run}[tool_messages][0]
    Should Start With    ${message}    [PRUNE_INFO_START]
    Should Contain    ${message}    [PRUNE_INFO_END]
    Should Contain    ${message}    [PRUNE_OUTPUT_START]
    Should End With    ${message}    [PRUNE_OUTPUT_END]
    # Parts the time limit did not reach are named, each with the call that reads it.
    ${unread}=    Evaluate    [l for l in $message.splitlines() if "were not read" in l]
    Log    parts not reached: ${unread}    console=True
    FOR    ${line}    IN    @{unread}
        Should Contain    ${line}    ask for them with read_file(offset=
    END
    ${length}=    Get Length    ${message}
    Should Be True    ${length} < ${raw_chars}
    # the three relevant lines, verbatim
    Lines Should Be Kept Verbatim    ${message}    ${errors}
    # in time
    Should Be True    ${run}[seconds] < ${MAX_SECONDS}    the run took ${run}[seconds] s
