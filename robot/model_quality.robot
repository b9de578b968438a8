*** Settings ***
Documentation       Three tasks of the model-quality report (benchmarks/model_quality) on the
...                 real llama-server with leanloop's defaults. The 0.5B model's answers are
...                 often wrong, so the tests assert structure: the run finishes with an answer,
...                 no identical call executes twice, the report counts its repairs and repeats,
...                 and a file the question names is read before the first step.
Resource            resources/servers.resource
Library             resources/QualityLibrary.py
Suite Setup         Start Local Llama Server For Suite    ctx_size=8192
Suite Teardown      Stop Local Llama Server
Test Tags           local-model


*** Test Cases ***
A Task Naming The File By Path Finishes With The File Read
    Check Quality Task    port    prefetched=config/app.yaml

A Task Naming The File By Name Finishes With The File Read
    Check Quality Task    todo    prefetched=notes/todo.txt

A Task Naming No File Finishes Without Running A Call Twice
    Check Quality Task    license    prefetched=${EMPTY}


*** Keywords ***
Check Quality Task
    [Arguments]    ${key}    ${prefetched}
    ${result}=    Run Quality Task    ${key}    ${LLAMA_URL}
    Log    ${result}
    ${report}=    Set Variable    ${result}[report]
    Should Contain    ${{["answer", "max_rounds", "repeated_calls"]}}    ${report}[stop_reason]
    Should Not Be Empty    ${result}[answer]
    No Call Should Have Run Twice    ${report}
    Should Be Equal As Integers    ${result}[repeats_executed]    0
    ${repairs}=    Report Should Count Its Repairs    ${report}
    Log    ${repairs} repaired calls, ${report}[repeated_calls] repeats answered from memory
    IF    $prefetched
        Should Be Equal    ${report}[prefetched]    ${{[$prefetched]}}
        Should Be True    ${result}[file_read]
    ELSE
        Should Be Empty    ${report}[prefetched]
    END
