*** Settings ***
Documentation       ``leanloop serve`` as a real process (``python -m leanloop.serve``) on a
...                 loopback port, with scripted models only: curl and the official ``openai``
...                 client talk to it; each refusal has its status in OpenAI's error shape, and
...                 SIGTERM ends it cleanly with no traceback in its log (ADR 0025). One test
...                 (tagged ``real-model``, left out of the everyday run) serves an agent on the
...                 real embedded model instead, its own llama-server and serve process beside
...                 the scripted one.
Library             resources/ServeLibrary.py
Library             resources/ServerLibrary.py
Library             Collections
Suite Setup         Start Serve Process    --max-body-bytes    4096
Suite Teardown      Stop Serve Process


*** Test Cases ***
Curl Lists The Agents
    ${token}=    Serve Token
    ${reply}=    Curl    /models    -H    Authorization: Bearer ${token}
    Should Be Equal As Integers    ${reply}[status]    200
    ${ids}=    Evaluate    [m["id"] for m in $reply["json"]["data"]]
    Should Be Equal    ${ids}    ${{["broken", "echo", "slow", "stalling"]}}

Curl Gets An Answer With Usage And The Report
    ${token}=    Serve Token
    ${reply}=    Curl    /chat/completions    -H    Authorization: Bearer ${token}
    ...    -H    Content-Type: application/json
    ...    -d    {"model": "echo", "messages": [{"role": "user", "content": "Which port?"}]}
    Should Be Equal As Integers    ${reply}[status]    200
    Should Be Equal    ${reply}[json][choices][0][message][content]    You said: Which port? Before that: nothing
    Should Be True    ${reply}[json][usage][completion_tokens] > 0
    Should Be Equal    ${reply}[json][leanloop][stop_reason]    answer

Curl Streams Chunks That End With DONE
    ${token}=    Serve Token
    ${reply}=    Curl    /chat/completions    -N    -H    Authorization: Bearer ${token}
    ...    -d    {"model": "echo", "stream": true, "messages": [{"role": "user", "content": "Stream it."}]}
    Should Be Equal As Integers    ${reply}[status]    200
    ${events}=    Sse Payloads    ${reply}[body]
    Should Be Equal    ${events}[-1]    [DONE]
    ${text}=    Evaluate    "".join(e["choices"][0]["delta"].get("content", "") for e in $events[:-1])
    Should Be Equal    ${text}    You said: Stream it. Before that: nothing
    Should Be Equal    ${events}[-2][choices][0][finish_reason]    stop
    Should Be Equal    ${events}[-2][leanloop][stop_reason]    answer
    Should Be True    ${events}[-2][usage][completion_tokens] > 0

Curl Gets Each Refusal With Its Status
    ${token}=    Serve Token
    ${auth}=    Set Variable    Authorization: Bearer ${token}
    ${reply}=    Curl    /chat/completions    -H    ${auth}    -d    {"model": "echo", "messages": [
    Refusal Should Be    ${reply}    400    invalid_json
    ${reply}=    Curl    /chat/completions    -H    ${auth}
    ...    -d    {"model": "nobody", "messages": [{"role": "user", "content": "Hi"}]}
    Refusal Should Be    ${reply}    404    model_not_found
    ${reply}=    Curl    /chat/completions
    ...    -d    {"model": "echo", "messages": [{"role": "user", "content": "Hi"}]}
    Refusal Should Be    ${reply}    401    invalid_api_key
    ${reply}=    Curl    /chat/completions    -H    Authorization: Bearer wrong
    ...    -d    {"model": "echo", "messages": [{"role": "user", "content": "Hi"}]}
    Refusal Should Be    ${reply}    401    invalid_api_key
    ${big}=    Evaluate    '{"model": "echo", "messages": [{"role": "user", "content": "' + 'x' * 10000 + '"}]}'
    ${reply}=    Curl    /chat/completions    -H    ${auth}    -d    ${big}
    Refusal Should Be    ${reply}    413    request_too_large
    ${reply}=    Curl    /chat/completions    -H    ${auth}
    ...    -d    {"model": "broken", "messages": [{"role": "user", "content": "Hi"}]}
    Refusal Should Be    ${reply}    502    model_error
    ${log}=    Serve Log
    Should Not Contain    ${log}    Traceback

The OpenAI Client Gets An Answer
    ${reply}=    Openai Chat    echo    Hello.
    Should Be Equal    ${reply}[content]    You said: Hello. Before that: nothing
    Should Be True    ${reply}[usage][completion_tokens] > 0
    Should Be Equal    ${reply}[leanloop][stop_reason]    answer

The OpenAI Client Streams An Answer
    ${reply}=    Openai Chat    echo    Stream please.    stream=${True}
    Should Be Equal    ${reply}[content]    You said: Stream please. Before that: nothing
    Should Be True    ${reply}[chunks] > 3
    Should Be Equal    ${reply}[leanloop][stop_reason]    answer

A Second Request Of A Session Continues The Conversation
    ${reply}=    Openai Chat    echo    My name is Ada.    What is my name?    session=robot-1
    Should Be Equal    ${reply}[content]    You said: What is my name? Before that: My name is Ada.
    Should Be Equal    ${reply}[leanloop][session][thread_id]    robot-1
    Should Be Equal As Integers    ${reply}[leanloop][session][turn]    2

It Refuses To Start Without A Token Off Loopback
    ${result}=    Run Serve Expecting Refusal    --host    0.0.0.0
    Should Be Equal As Integers    ${result}[rc]    2
    Should Contain    ${result}[stderr]    set LEANLOOP_SERVE_TOKEN
    ${result}=    Run Serve Expecting Refusal    --host    0.0.0.0    --no-auth
    Should Be Equal As Integers    ${result}[rc]    2
    Should Contain    ${result}[stderr]    --no-auth is refused

The Real Model Answers Over Serve And A Session Continues
    [Documentation]    The 0.5B's answers are often wrong: the test asserts that answers came,
    ...    with the report, and that each request of the session saw the turns before it.
    [Tags]    local-model    real-model
    [Setup]    Start Real Serve
    [Teardown]    Stop Real Serve
    ${first}=    Openai Chat    reader    What launch code do the notes in notes.txt give?
    ...    session=serve-real
    Should Not Be Empty    ${first}[content]
    Should Be Equal    ${first}[leanloop][session][thread_id]    serve-real
    Should Be Equal As Integers    ${first}[leanloop][session][turn]    1
    Should Be True    ${first}[usage][completion_tokens] > 0
    ${second}=    Openai Chat    reader    Which file did you read for that?    stream=${True}
    ...    session=serve-real
    Should Not Be Empty    ${second}[content]
    Should Be Equal As Integers    ${second}[leanloop][session][turn]    2
    Should Be Equal As Integers    ${second}[leanloop][session][earlier_turns]    1
    ${token}=    Serve Token
    ${reply}=    Curl    /chat/completions    -H    Authorization: Bearer ${token}
    ...    -H    X-Leanloop-Session: serve-real
    ...    -d    {"model": "reader", "messages": [{"role": "user", "content": "Say the code once more."}]}
    Should Be Equal As Integers    ${reply}[status]    200    ${reply}[body]
    Should Not Be Empty    ${reply}[json][choices][0][message][content]
    Should Be Equal As Integers    ${reply}[json][leanloop][session][turn]    3
    Should Be Equal As Integers    ${reply}[json][leanloop][session][earlier_turns]    2
    ${log}=    Serve Log
    Should Not Contain    ${log}    Traceback

It Refuses Bad Values And A Token No Client Can Send In One Line, Exit 2
    [Documentation]    Each run is given the suite server's port, so a value wrongly taken
    ...    would end at the bind (exit 1), never in a server that goes on running.
    ${port}=    Serve Port
    ${result}=    Run Serve Expecting Refusal    --no-auth    --port    ${port}    --grace    -5
    One Line Refusal Should Be    ${result}    2    --grace must be a number of seconds at least 0
    ${result}=    Run Serve Expecting Refusal    --no-auth    --port    ${port}    --grace    nan
    One Line Refusal Should Be    ${result}    2    --grace must be a number of seconds at least 0
    ${result}=    Run Serve Expecting Refusal    --port    ${port}    token=${SPACE}tok-3n-secret
    One Line Refusal Should Be    ${result}    2    spaces or line breaks around it
    Should Not Contain    ${result}[stderr]    tok-3n-secret
    ${result}=    Run Serve Expecting Refusal    --port    ${port}    token=tok-3n-sécret
    One Line Refusal Should Be    ${result}    2    outside printable ASCII
    Should Not Contain    ${result}[stderr]    tok-3n

A Taken Port Exits 1 In One Line
    ${port}=    Serve Port
    ${result}=    Run Serve Expecting Refusal    --no-auth    --port    ${port}
    One Line Refusal Should Be    ${result}    1    cannot listen on 127.0.0.1:${port}
    Should Contain    ${result}[stderr]    another process has the port

Without A Token Only Local JSON Requests Run
    [Documentation]    What a web page could send: text/plain with another site's Origin (no
    ...    CORS preflight), form data, a rebinding site's Host. None runs the agent; a
    ...    local JSON request, as the OpenAI clients send, does.
    [Setup]    Start Serve Process    --no-auth
    [Teardown]    Stop Serve Process
    ${question}=    Set Variable    {"model": "echo", "messages": [{"role": "user", "content": "Hi"}]}
    ${reply}=    Curl    /chat/completions    -H    Content-Type: text/plain
    ...    -H    Origin: https://evil.example    -d    ${question}
    Refusal Should Be    ${reply}    403    origin_not_allowed
    ${reply}=    Curl    /chat/completions    -d    ${question}
    Refusal Should Be    ${reply}    415    unsupported_media_type
    ${reply}=    Curl    /chat/completions    -H    Host: rebind.evil.example:8080
    ...    -H    Content-Type: application/json    -d    ${question}
    Refusal Should Be    ${reply}    400    host_not_allowed
    ${reply}=    Curl    /models    -H    Host: rebind.evil.example
    Refusal Should Be    ${reply}    400    host_not_allowed
    ${reply}=    Curl    /chat/completions    -H    Content-Type: application/json
    ...    -H    Origin: http://localhost:5173    -d    ${question}
    Should Be Equal As Integers    ${reply}[status]    200    ${reply}[body]
    Should Be Equal    ${reply}[json][choices][0][message][content]    You said: Hi Before that: nothing
    ${log}=    Serve Log
    Should Not Contain    ${log}    Traceback

SIGTERM Ends The Server Cleanly
    [Documentation]    Last: it stops the suite's server (the teardown then has nothing to do).
    ${code}=    Stop Serve Process
    Should Be Equal As Integers    ${code}    0
    ${log}=    Serve Log
    Should Contain    ${log}    Shutting down
    Should Not Contain    ${log}    Traceback


*** Keywords ***
Start Real Serve
    [Documentation]    llama-server with the embedded model, and a serve process on it (the
    ...    scripted one is set aside until Stop Real Serve).
    ${llama}=    Start Local Llama Server    ctx_size=4096
    ${file}=    Real Model Agents File    ${llama}
    Start Serve Process    agents_file=${file}

Stop Real Serve
    ${code}=    Stop Serve Process
    Stop Local Llama Server
    Should Be Equal As Integers    ${code}    0

One Line Refusal Should Be
    [Arguments]    ${result}    ${rc}    ${text}
    Should Be Equal As Integers    ${result}[rc]    ${rc}    ${result}[stderr]
    ${lines}=    Evaluate    $result["stderr"].splitlines()
    Length Should Be    ${lines}    1    ${result}[stderr]
    Should Contain    ${lines}[0]    ${text}

Refusal Should Be
    [Arguments]    ${reply}    ${status}    ${code}
    Should Be Equal As Integers    ${reply}[status]    ${status}    ${reply}[body]
    Should Be Equal    ${reply}[json][error][code]    ${code}
    Dictionary Should Contain Key    ${reply}[json][error]    message
    Dictionary Should Contain Key    ${reply}[json][error]    type
