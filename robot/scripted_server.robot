*** Settings ***
Documentation       The scripted OpenAI-compatible server itself: it replays a scenario
...                 (a tool call, then an answer, errors) and records every request, through
...                 plain HTTP and through LangChain's ChatOpenAI (streaming included).
Resource            resources/servers.resource
Suite Setup         Start Scripted Server For Suite    n_ctx=2048
Suite Teardown      Stop Scripted Server
Test Setup          Reset Scripted Server


*** Test Cases ***
Server Endpoints Answer Like llama.cpp
    ${root}=    Evaluate    "${SCRIPTED_URL}".removesuffix("/v1")
    ${health}=    Http Get Json    ${root}/health
    Should Be Equal    ${health}[status]    ok
    ${props}=    Http Get Json    ${root}/props
    Should Be Equal As Integers    ${props}[default_generation_settings][n_ctx]    2048
    ${models}=    Http Get Json    ${SCRIPTED_URL}/models
    Should Be Equal As Integers    ${models}[data][0][meta][n_ctx]    2048

Replays A Tool Call Then An Answer And Records Both Requests
    Queue Tool Call    read_file    {"path": "notes.txt"}    prompt_tokens=120    completion_tokens=9
    Queue Answer    The notes say hello.    prompt_tokens=160    completion_tokens=6
    ${first}=    Chat With Tools    ${SCRIPTED_URL}    What do the notes say?
    Should Be Equal    ${first}[tool_calls][0][name]    read_file
    Should Be Equal    ${first}[tool_calls][0][args][path]    notes.txt
    Should Be Equal As Integers    ${first}[usage][input_tokens]    120
    ${second}=    Chat With Tools    ${SCRIPTED_URL}    And now?
    Should Be Equal    ${second}[content]    The notes say hello.
    Should Be Equal As Integers    ${second}[usage][output_tokens]    6
    Scripted Request Count Should Be    2
    ${names}=    Scripted Request Tool Names    1
    Should Be Equal    ${names}    ${{["read_file", "list_files"]}}
    ${roles}=    Scripted Request Roles    1
    Should Be Equal    ${roles}    ${{["user"]}}
    Scripted Request Should Contain    2    And now?    role=user
    ${left}=    Scripted Responses Left
    Should Be Equal As Integers    ${left}    0

Streams With A Final Usage Chunk
    Queue Answer    A streamed answer that is longer than one chunk.    prompt_tokens=42    completion_tokens=11
    ${reply}=    Chat Streaming    ${SCRIPTED_URL}    Stream please
    Should Be Equal    ${reply}[content]    A streamed answer that is longer than one chunk.
    Should Be Equal As Integers    ${reply}[usage][input_tokens]    42
    Should Be Equal As Integers    ${reply}[usage][output_tokens]    11
    ${request}=    Get Scripted Request    1
    Should Be True    ${request}[stream]

Streams Tool Calls
    Queue Tool Call    list_files    {"path": "."}
    ${reply}=    Chat Streaming    ${SCRIPTED_URL}    List the files
    Should Be Equal    ${reply}[tool_calls][0][name]    list_files
    Should Be Equal    ${reply}[tool_calls][0][args][path]    .

Replays A Context Overflow As llama.cpp's 400
    Queue Context Overflow    3030    2048
    ${error}=    Chat Expecting Error    ${SCRIPTED_URL}    A very long question
    Should Contain    ${error}    BadRequestError
    Should Contain    ${error}    exceed_context_size_error

Replays A Refusal Of Tools
    Queue Tools Refusal
    ${error}=    Chat Expecting Error    ${SCRIPTED_URL}    Use a tool
    Should Contain    ${error}    tools param requires --jinja flag

Records Sizes And The Largest Prompt
    Queue Answer    short
    Queue Answer    short
    Chat With Tools    ${SCRIPTED_URL}    ${{"x" * 50}}
    Chat With Tools    ${SCRIPTED_URL}    ${{"y" * 500}}
    ${count}=    Scripted Request Message Count    2
    Should Be Equal As Integers    ${count}    1
    ${largest}=    Largest Scripted Prompt Chars
    Should Be Equal As Integers    ${largest}    500

An Exhausted Scenario Answers 500 With A Clear Message
    ${error}=    Chat Expecting Error    ${SCRIPTED_URL}    Anyone there?
    Should Contain    ${error}    no response left
