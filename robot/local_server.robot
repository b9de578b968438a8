*** Settings ***
Documentation       The real llama-server with the embedded Qwen model, started at 2048 tokens:
...                 health, the window in /props, `leanloop local status`, usage figures,
...                 native tool calls through ChatOpenAI, and the 400 for an oversized prompt.
...                 The suite runs on the engine `leanloop local start` would use: the prebuilt
...                 wheel by default, the source build with `LEANLOOP_ENGINE=build`. The last
...                 test builds the source build (once per cache) and runs the same checks on
...                 it; it is tagged `source-build`, for the full run only.
Resource            resources/servers.resource
Suite Setup         Start Local Llama Server For Suite    ctx_size=2048
Suite Teardown      Stop Local Llama Server
Test Tags           local-model


*** Variables ***
${BUILD_PORT}       ${EMPTY}


*** Test Cases ***
The Server Is Healthy
    ${health}=    Http Get Json    ${LLAMA_ROOT}/health
    Should Be Equal    ${health}[status]    ok

Props Report The Requested Context Size
    ${props}=    Http Get Json    ${LLAMA_ROOT}/props
    Should Be Equal As Integers    ${props}[default_generation_settings][n_ctx]    2048
    ${models}=    Http Get Json    ${LLAMA_URL}/models
    Should Be Equal As Integers    ${models}[data][0][meta][n_ctx]    2048

Leanloop Local Status Shows The Port, Model And Window
    ${result}=    Run Leanloop    local    status    --port    ${LLAMA_PORT}
    Should Be Equal As Integers    ${result.rc}    0    ${result.stderr}
    Should Contain    ${result.stdout}    llama-server: running
    Should Contain    ${result.stdout}    port: ${LLAMA_PORT}
    Should Contain    ${result.stdout}    qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
    Should Contain    ${result.stdout}    model name: qwen2.5-coder-0.5b
    Should Contain    ${result.stdout}    n_ctx: 2048
    ${engine}=    Expected Local Engine
    Should Contain    ${result.stdout}    engine: ${engine} (

An Unknown Model Name Is One Error Line Listing The Catalog
    ${result}=    Run Leanloop    local    start    --model    no-such-model    --port    ${LLAMA_PORT}
    Should Be Equal As Integers    ${result.rc}    2
    Should Be Equal    ${result.stderr.strip()}
    ...    error: unknown model 'no-such-model'; known models: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b

A Second Server On The Same Port Is Refused
    ${result}=    Run Leanloop    local    start    --port    ${LLAMA_PORT}
    Should Be Equal As Integers    ${result.rc}    1
    Should Contain    ${result.stderr}    already runs on port ${LLAMA_PORT}
    Should Not Contain    ${result.stderr}    Traceback

A Chat Completion Returns Usage
    ${body}=    Post Chat Completion    ${LLAMA_URL}    Say hello in one word.    max_tokens=8
    Should Be True    ${body}[usage][prompt_tokens] > 0
    Should Be True    ${body}[usage][completion_tokens] > 0

Streaming Through ChatOpenAI Returns Usage
    ${reply}=    Chat Streaming    ${LLAMA_URL}    Say hello in one word.
    Should Be True    ${reply}[usage][input_tokens] > 0
    Should Be True    ${reply}[usage][output_tokens] > 0

Native Tool Calls Come Back Through ChatOpenAI
    ${reply}=    Chat With Tools    ${LLAMA_URL}    Read the file notes.txt and tell me what it says.
    Should Not Be Empty    ${reply}[tool_calls]    the model answered in text: ${reply}[content]
    Should Be Equal    ${reply}[tool_calls][0][name]    read_file
    Should Be True    ${reply}[usage][input_tokens] > 0

An Oversized Prompt Is Refused With exceed_context_size_error
    ${text}=    Repeat Text    lorem ipsum dolor sit amet    800
    ${body}=    Post Chat Completion    ${LLAMA_URL}    ${text}    expected_status=400
    Should Be Equal    ${body}[error][type]    exceed_context_size_error
    Should Be Equal As Integers    ${body}[error][n_ctx]    2048
    Should Be True    ${body}[error][n_prompt_tokens] > 2048

The Source Build Serves The Same API
    [Documentation]    `leanloop local setup --build` compiles llama-server for this CPU (10 to
    ...    17 minutes on two cores, once: a runnable binary in the cache is reused), and
    ...    `leanloop local start --engine build` runs it as the prebuilt engine runs: status
    ...    names the engine, /props the window, a tool call comes back. The engine the
    ...    cache had recorded is put back afterwards.
    [Tags]    real-model    source-build
    [Setup]    Save Engine Choice
    ${python}=    Python Executable
    ${setup}=    Run Process    ${python}    -m    leanloop    local    setup    --build
    ...    timeout=40 min
    Should Be Equal As Integers    ${setup.rc}    0    ${setup.stderr}
    Should Contain    ${setup.stdout}    engine: build (
    ${port}=    Free Port
    Set Test Variable    ${BUILD_PORT}    ${port}
    ${start}=    Run Leanloop    local    start    --engine    build    --port    ${port}
    ...    --ctx-size    2048
    Should Be Equal As Integers    ${start.rc}    0    ${start.stderr}
    ${status}=    Run Leanloop    local    status    --port    ${port}
    Should Contain    ${status.stdout}    engine: build (
    Should Contain    ${status.stdout}    n_ctx: 2048
    ${reply}=    Chat With Tools    http://127.0.0.1:${port}/v1
    ...    Read the file notes.txt and tell me what it says.
    Should Not Be Empty    ${reply}[tool_calls]    the model answered in text: ${reply}[content]
    Should Be Equal    ${reply}[tool_calls][0][name]    read_file
    [Teardown]    Stop The Source Build


*** Keywords ***
Stop The Source Build
    Restore Engine Choice
    IF    $BUILD_PORT    Run Leanloop    local    stop    --port    ${BUILD_PORT}
