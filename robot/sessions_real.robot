*** Settings ***
Documentation       Sessions on the real embedded model: two ``leanloop run --session``
...                 processes against llama-server with the 0.5B model. The second turn's
...                 request carries the first, so the model can answer from it (measured: the
...                 0.5B answers with the name given in turn 1).
Resource            resources/servers.resource
Library             resources/SessionLibrary.py
Library             resources/CliLibrary.py
Suite Setup         Start Local Llama Server For Suite    ctx_size=4096
Suite Teardown      Stop Local Llama Server
Test Timeout        5 minutes


*** Test Cases ***
The Real Model Answers Turn 2 From Turn 1
    [Tags]    local-model
    ${file}=    Plain Session Agents File    real-name    ${LLAMA_URL}
    ${first}=    Run Leanloop    run    ${file}    My name is Ada Lovelace. Please remember it.
    ...    --session    r1
    Should Be Equal As Integers    ${first.rc}    0    ${first.stderr}
    ${second}=    Run Leanloop    run    ${file}    What is my name?    --session    r1    --json
    Should Be Equal As Integers    ${second.rc}    0    ${second.stderr}
    ${report}=    Parse Json Output    ${second.stdout}
    Should Contain    ${report}[answer]    Ada
    Should Be Equal As Integers    ${report}[session][turn]    2
    Should Be Equal As Integers    ${report}[session][earlier_turns]    1
    ${request}=    Set Variable    ${report}[requests][0]
    Should Be True    ${request}[counted]    the budget's figure should be llama-server's own count
    Should Be Equal As Integers    ${request}[estimated_tokens]    ${request}[input_tokens]
