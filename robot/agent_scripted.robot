*** Settings ***
Documentation       An agent against the scripted OpenAI-compatible server: the read_file →
...                 answer loop, and what the agent really sent, as the server recorded it.
Resource            resources/servers.resource
Suite Setup         Start Scripted Server For Suite    n_ctx=4096
Suite Teardown      Stop Scripted Server
Test Setup          Reset Scripted Server


*** Variables ***
${FACT}             The launch code is 4711 and the owner is the platform team.


*** Test Cases ***
A Read File Then Answer Loop Sends The Tool Result Back
    ${file}=    Agent Workspace With Notes    ${TEMPDIR}${/}agent-scripted-loop
    Queue Tool Call    read_file    {"path": "notes.txt"}    prompt_tokens=300    completion_tokens=12
    Queue Answer    The launch code is 4711.    prompt_tokens=380    completion_tokens=8
    ${result}=    Ask Agent    ${file}    What is the launch code?
    Should Be Equal    ${result}[answer]    The launch code is 4711.
    Scripted Request Count Should Be    2
    ${tools}=    Scripted Request Tool Names    1
    List Should Contain Value    ${tools}    read_file
    ${roles}=    Scripted Request Roles    2
    Should Be Equal    ${roles}    ${{["system", "user", "assistant", "tool"]}}
    Scripted Request Should Contain    2    launch code is 4711    role=tool
    ${first}=    Scripted Request Chars    1
    ${second}=    Scripted Request Chars    2
    Should Be True    ${second} > ${first}

The Run Report Carries The Server's Usage Figures
    ${file}=    Agent Workspace With Notes    ${TEMPDIR}${/}agent-scripted-usage
    Queue Tool Call    read_file    {"path": "notes.txt"}    prompt_tokens=300    completion_tokens=12
    Queue Answer    4711    prompt_tokens=380    completion_tokens=8
    ${result}=    Ask Agent    ${file}    What is the launch code?
    ${report}=    Set Variable    ${result}[report]
    Should Be Equal    ${report}[stop_reason]    answer
    Should Be Equal    ${report}[tool_calls][0][name]    read_file
    Should Be Equal    ${report}[tool_calls][0][args][path]    notes.txt
    Length Should Be    ${report}[requests]    2
    Should Be Equal As Integers    ${report}[requests][0][input_tokens]    300
    Should Be Equal As Integers    ${report}[requests][1][input_tokens]    380
    Should Be Equal As Integers    ${report}[requests][1][output_tokens]    8


*** Keywords ***
Agent Workspace With Notes
    [Arguments]    ${folder}
    Remove Directory    ${folder}    recursive=True
    Create File    ${folder}${/}workspace${/}notes.txt    ${FACT}\n
    ${file}=    Write Agents File    ${folder}    ${SCRIPTED_URL}
    ...    You answer questions about the files in the workspace. Read files before answering.
    ...    model=scripted-model
    RETURN    ${file}
