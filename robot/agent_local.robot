*** Settings ***
Documentation       An agent against the real llama-server: a read_file → answer loop whose
...                 usage figures land in the run report, and `leanloop demo` on the same server.
...                 The 0.5B model's answers are often wrong: the tests assert structure.
Resource            resources/servers.resource
Suite Setup         Start Local Llama Server For Suite    ctx_size=4096
Suite Teardown      Stop Local Llama Server
Test Tags           local-model


*** Test Cases ***
The Model Calls read_file And The Usage Lands In The Report
    ${folder}=    Set Variable    ${TEMPDIR}${/}agent-local-read
    Remove Directory    ${folder}    recursive=True
    Create File    ${folder}${/}workspace${/}notes.txt    The launch code is 4711.\n
    ${file}=    Write Agents File    ${folder}    ${LLAMA_URL}
    ...    You answer questions about the files in the workspace. The notes are in notes.txt. Use the tools to look at the files before you answer.
    ${result}=    Ask Agent    ${file}    What launch code do the notes give?
    Log    ${result}
    ${report}=    Set Variable    ${result}[report]
    ${names}=    Evaluate    [call["name"] for call in $report["tool_calls"]]
    List Should Contain Value    ${names}    read_file
    Should Be Equal    ${report}[stop_reason]    answer
    ${count}=    Get Length    ${report}[requests]
    Should Be True    ${count} >= 2    the model answered without a tool request: ${report}
    FOR    ${request}    IN    @{report}[requests]
        Should Be True    isinstance($request["input_tokens"], int) and $request["input_tokens"] > 0
        Should Be True    isinstance($request["output_tokens"], int) and $request["output_tokens"] > 0
    END
    Should Not Be Empty    ${result}[answer]

The Demo Answers On A Running Server And Leaves It Running
    ${result}=    Run Leanloop    demo    --port    ${LLAMA_PORT}
    Should Be Equal As Integers    ${result.rc}    0    ${result.stderr}
    Should Contain    ${result.stdout}    answer:
    Should Contain    ${result.stdout}    stop reason:
    Should Contain    ${result.stdout}    input tokens
    Should Not Contain    ${result.stderr}    Traceback
    ${health}=    Http Get Json    ${LLAMA_ROOT}/health
    Should Be Equal    ${health}[status]    ok
