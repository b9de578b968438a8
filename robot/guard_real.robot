*** Settings ***
Documentation       The repeat guard meets trimming on the real embedded model (ADR 0016). The agents
...                 file claims a 32,768-token window; llama-server runs at --ctx-size 2048, so the
...                 first request (two prefetched 4 KB files) is refused for its size and the
...                 recovery trims both files. Measured with Qwen2.5-Coder-0.5B at temperature 0:
...                 the model asks for handbook.md again, and the call runs again instead of being
...                 refused as a repeat (at most twice; a third ask is a repeat whose reminder says
...                 the whole file does not fit, ADR 0006 amendment 6); the run ends by
...                 repeated_calls or max_rounds (exit 3) with an answer.
Resource            resources/servers.resource
Library             resources/CliLibrary.py
Suite Setup         Start Local Llama Server For Suite    ctx_size=2048
Suite Teardown      Stop Local Llama Server


*** Test Cases ***
A Result Trimmed By The Overflow Recovery And Asked For Again Runs Again
    [Tags]    local-model
    ${folder}=    Set Variable    ${TEMPDIR}${/}leanloop-guard-real
    Remove Directory    ${folder}    recursive=True
    ${file}=    Write Handbook Workspace    ${folder}    ${LLAMA_URL}
    ${result}=    Run Leanloop    run    ${file}
    ...    Read handbook.md and config.ini: what is the on-call phone number and the service port?
    ...    --json
    Should Be True    ${result.rc} in (0, 3)    the run should end with an answer (rc ${result.rc})
    ${report}=    Parse Json Output    ${result.stdout}
    Should Be Equal As Integers    ${report}[overflow_recoveries]    1
    Should Be True    ${report}[trimmed_results] >= 2
    No Repeat Was Refused While Its Result Was Trimmed    ${report}
    ${notes}=    Evaluate    [n for c in $report["tool_calls"] for n in c["notes"]]
    ${reruns}=    Evaluate    [n for n in $notes if n.startswith("ran again")]
    Log    ${reruns}    console=True
    Should Not Be Empty    ${reruns}    the model asked for a trimmed file again, and the call ran
    Should Not Be Empty    ${report}[answer]
    IF    ${result.rc} == 3
        Should Contain    ${result.stderr}    leanloop: the run ended by ${report}[stop_reason]
    END
