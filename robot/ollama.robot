*** Settings ***
Documentation       Ollama runs at the window leanloop budgets for. Ollama loads a model at the
...                 `num_ctx` each request asks for (its own 4,096 when none does) and cuts the
...                 front of a longer prompt without a word; so every chat request of a run
...                 carries `options.num_ctx` equal to the window in the run report: the file's
...                 `context_window`, else the loaded model's `context_length` from `/api/ps`,
...                 else a default of 8,192 the report says is one — never the trained length
...                 `/api/show` reports alone. A scripted Ollama-API server records what each
...                 request sent; the agent runs through `leanloop run --json` as a user runs it.
Library             resources/OllamaApiLibrary.py
Suite Setup         Start Scripted Ollama Server    model=${MODEL}    trained=131072
Suite Teardown      Stop Scripted Ollama Server
Test Setup          Reset Scripted Ollama Server


*** Variables ***
${MODEL}            qwen3:4b
${SYSTEM}           You answer questions about the files in the workspace. Read files with read_file before answering.
${QUESTION}         What is the launch code?


*** Test Cases ***
The Configured Window Is Sent With Every Request
    [Documentation]    `context_window: 6000` in the file: every chat request asks for 6,000.
    ${file}=    Write Ollama Agents File    ${TEMPDIR}${/}ollama-config    ${SYSTEM}
    ...    context_window=6000
    ${report}=    Run The Read Then Answer Script    ${file}
    Should Be Equal As Integers    ${report}[window]    6000
    Should Be Equal    ${report}[window_source]    config
    Every Chat Request Should Ask For    ${report}[window]

The Loaded Model's Context Is Sent Without A Configured Window
    [Documentation]    No `context_window`; `/api/ps` says the model is loaded at 16,384: the
    ...    window is that, and every chat request asks for it (the trained 131,072 is not used).
    Ollama Has Loaded    ${MODEL}    16384
    ${file}=    Write Ollama Agents File    ${TEMPDIR}${/}ollama-ps    ${SYSTEM}
    ${report}=    Run The Read Then Answer Script    ${file}
    Should Be Equal As Integers    ${report}[window]    16384
    Should Be Equal    ${report}[window_source]    server:ollama-ps
    Every Chat Request Should Ask For    ${report}[window]

A Model Not Loaded Gets The Safe Default, And The Report Says So
    [Documentation]    No `context_window`, nothing in `/api/ps`; `/api/show` reports only the
    ...    trained length (131,072): every request asks for 8,192, and the report's window
    ...    note says that is a default.
    ${file}=    Write Ollama Agents File    ${TEMPDIR}${/}ollama-default    ${SYSTEM}
    ${report}=    Run The Read Then Answer Script    ${file}
    Should Be Equal As Integers    ${report}[window]    8192
    Should Be Equal    ${report}[window_source]    default:ollama
    Should Contain    ${report}[window_note]    default
    Should Contain    ${report}[window_note]    context_window
    Every Chat Request Should Ask For    ${report}[window]

The Next Run Finds The Model Loaded At The Window The Last One Asked For
    [Documentation]    After a run that asked for the default 8,192, Ollama holds the model at
    ...    8,192: the next run reads that from `/api/ps` and asks for the same.
    ${file}=    Write Ollama Agents File    ${TEMPDIR}${/}ollama-again    ${SYSTEM}
    ${first}=    Run The Read Then Answer Script    ${file}
    ${loaded}=    Loaded Context Length    ${MODEL}
    Should Be Equal As Integers    ${loaded}    8192
    ${second}=    Run The Read Then Answer Script    ${file}
    Should Be Equal As Integers    ${second}[window]    8192
    Should Be Equal    ${second}[window_source]    server:ollama-ps
    Every Chat Request Should Ask For    8192    at_least=4

The Pruning Pass Asks Ollama For The Window Too
    [Documentation]    The agent prunes read_file results with the same Ollama model: the
    ...    extraction request (no tools, between the two main requests) carries the same
    ...    `num_ctx` as every other request of the run.
    ${file}=    Write Ollama Agents File    ${TEMPDIR}${/}ollama-pruning    ${SYSTEM}
    ...    pruning=True
    Queue Ollama Tool Call    read_file    {"path": "notes.txt", "output_prune_context": "the launch code"}
    Queue Ollama Answer    [PRUNE_INFO_START]\nkept the launch code\n[PRUNE_INFO_END]\n[PRUNE_OUTPUT_START]\n20| The launch code is 4711.\n[PRUNE_OUTPUT_END]
    Queue Ollama Answer    The launch code is 4711.
    ${report}=    Run Agent Through CLI    ${file}    ${QUESTION}
    Should Be Equal    ${report}[stop_reason]    answer
    Should Be True    $report["tool_calls"][0]["pruned"]    the read_file result was not pruned
    Should Be Equal As Integers    ${report}[window]    8192
    Chat Request Count Should Be    3
    Chat Request Should Offer No Tools    2
    Every Chat Request Should Ask For    ${report}[window]    at_least=3


*** Keywords ***
Run The Read Then Answer Script
    [Documentation]    Queue a read_file call then an answer, run the agent through the CLI,
    ...    and check it read the file and answered; returns the run report.
    [Arguments]    ${file}
    Queue Ollama Tool Call    read_file    {"path": "notes.txt"}
    Queue Ollama Answer    The launch code is 4711.
    ${report}=    Run Agent Through CLI    ${file}    ${QUESTION}
    Should Be Equal    ${report}[stop_reason]    answer
    Should Contain    ${report}[answer]    4711
    Should Be Equal As Integers    ${report}[tool_calls][0][step]    1
    Should Be Equal    ${report}[tool_calls][0][name]    read_file
    RETURN    ${report}
