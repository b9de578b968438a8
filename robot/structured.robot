*** Settings ***
Documentation       Typed answers (`output_schema`): after the run, one tool-less request asks for
...                 the answer in the schema, as `response_format` json_schema on an
...                 OpenAI-compatible server. Against the scripted server, which records what
...                 the agent sent, and against the real embedded model, whose llama-server holds
...                 the reply to the schema with a grammar.
Resource            resources/servers.resource
Library             resources/StructuredLibrary.py
Suite Setup         Start Scripted Server For Suite    n_ctx=4096
Suite Teardown      Stop Servers


*** Variables ***
${QUESTION}         What is the capital of France?


*** Test Cases ***
The Scripted Server's Reply Becomes A City Through response_format json_schema
    Reset Scripted Server
    ${folder}=    Set Variable    ${TEMPDIR}${/}structured-scripted
    Remove Directory    ${folder}    recursive=True
    ${file}=    Write Typed Agents File    ${folder}    ${SCRIPTED_URL}    model=scripted-model
    Queue Answer    Paris is the capital of France.    prompt_tokens=40    completion_tokens=8
    Queue Answer    {"name": "Paris", "country": "France"}    prompt_tokens=150    completion_tokens=12
    ${result}=    Ask For A Typed Answer    ${file}    ${QUESTION}
    Typed Answer Should Be A    ${result}    City
    Should Be Equal    ${result['parsed'].name}    Paris
    Should Be Equal    ${result['parsed'].country}    France
    Scripted Request Count Should Be    2
    ${first}=    Get Scripted Request    1
    Dictionary Should Not Contain Key    ${first}    response_format
    ${second}=    Get Scripted Request    2
    Should Be Equal    ${second}[response_format][type]    json_schema
    Should Be Equal    ${second}[response_format][json_schema][name]    City
    Dictionary Should Not Contain Key    ${second}    tools
    Scripted Request Should Contain    2    Paris is the capital of France.    role=user
    Scripted Request Should Contain    2    ${QUESTION}    role=user
    ${report}=    Set Variable    ${result}[report]
    Should Be Equal    ${report}[structured]    ${{{"schema": "City", "method": "native", "repairs": 0}}}
    Should Be Equal    ${report}[requests][-1][kind]    structured
    Should Be Equal As Integers    ${report}[requests][-1][input_tokens]    150

The Real Embedded Model Answers With A City
    [Documentation]    The 0.5B model at temperature 0 answers in a sentence; the structuring
    ...    request, held to the schema by llama-server's grammar, turns it into a City.
    [Tags]    local-model
    [Setup]    Start Local Llama Server For Suite    ctx_size=2048
    ${folder}=    Set Variable    ${TEMPDIR}${/}structured-real
    Remove Directory    ${folder}    recursive=True
    ${file}=    Write Typed Agents File    ${folder}    ${LLAMA_URL}
    ${result}=    Ask For A Typed Answer    ${file}    ${QUESTION}
    Log    ${result}    console=True
    Typed Answer Should Be A    ${result}    City
    Typed Field Should Contain    ${result}    name    Paris
    Typed Field Should Contain    ${result}    country    France
    Should Be Equal    ${result}[report][structured][method]    native
    Should Be Equal    ${result}[report][stop_reason]    answer
    [Teardown]    Stop Local Llama Server


*** Keywords ***
Stop Servers
    Stop Scripted Server
    Stop Local Llama Server
