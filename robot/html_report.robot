*** Settings ***
Documentation       The run report's HTML page in a real browser: Debian's Chromium, driven by
...                 Playwright for Python (``executable_path=/usr/bin/chromium``). The report
...                 comes from a real run of an ``LLMAgent`` around a scripted model with a
...                 4,096-token window, whose calls end kept, failed, pruned, trimmed, cut and
...                 as a repeat. The page must render (title, plot, table, conversation) with
...                 no console error, no page error, no dialog (a tool argument holds a
...                 ``<script>``) and no request outside ``file://``. A report made by hand
...                 with every field the page shows (names, times, result previews, a prefetch,
...                 a sub-run's answer) checks that a folded result unfolds on a click.
...                 Chromium comes from
...                 ``.ci/install-services`` (``./dev test --full`` runs it); without it the
...                 suite fails and says what to run, never skips.
Library             OperatingSystem
Library             Collections
Library             resources/BrowserLibrary.py
Suite Setup         Open Chromium
Suite Teardown      Close Browser
Test Tags           browser


*** Variables ***
${TITLE}        leanloop run
${FOLDER}       ${TEMPDIR}${/}leanloop-html-report


*** Test Cases ***
A Scripted Run's Report Renders In Chromium With One Point And One Row Per Request
    ${report}=    Run Scripted Agent For Report    ${FOLDER}${/}run    window=4096
    ${requests}=    Get Length    ${report}[requests]
    ${calls}=    Get Length    ${report}[tool_calls]
    Should Be True    ${requests} >= 6    the scripted run made only ${requests} requests
    Should Be Equal    ${report}[stop_reason]    answer
    ${fates}=    Evaluate    sorted({c["fate"] for c in $report["tool_calls"]})
    Should Be Equal    ${fates}    ${{sorted(["kept", "failed", "pruned", "trimmed", "cut", "repeat"])}}
    ${page}=    Write Report Page    ${report}    ${FOLDER}${/}report.html
    Open Report Page    ${page}
    Page Title Should Be    ${TITLE}
    Element Count Should Be    svg#tokens-plot    1
    Element Count Should Be    svg#tokens-plot circle.point    ${requests}
    Plot Points Should Lie Inside The Plot
    Element Count Should Be    svg#tokens-plot > line.window-line    1    visible=${False}
    Element Count Should Be    svg#tokens-plot > line.warn-line    1    visible=${False}
    Element Should Show Text    svg#tokens-plot g.legend    context window
    Element Count Should Be    table.requests tbody tr.request    ${requests}
    FOR    ${number}    IN RANGE    1    ${requests + 1}
        Element Count Should Be    table.requests tr[data-request="${number}"]    1
        Element Count Should Be    svg#tokens-plot circle.point[data-request="${number}"]    1
    END
    Element Count Should Be    li.call    ${calls}
    ${shown}=    Elements Attribute    li.call    data-fate
    ${expected}=    Evaluate    [c["fate"] for c in $report["tool_calls"]]
    Should Be Equal    ${shown}    ${expected}
    Element Should Show Text    h1    ${TITLE}
    Element Should Show Text    \#summary    ${report}[question]
    Element Should Show Text    \#question    ${report}[question]
    Element Should Show Text    \#answer    ${report}[answer]
    Element Should Show Text    \#stop-reason    stop: answer
    Element Should Show Text    \#context    pruning read_file fell back
    Element Should Show Text    li.call    <script>alert('x')</script>
    Take Report Screenshot    html-report.png
    Browser Should Have Reported No Problems

A Failed Run's Partial Report Shows The Error In Chromium
    ${report}=    Run Failing Scripted Agent For Report    ${FOLDER}${/}failed
    Should Be Equal    ${report}[stop_reason]    failed
    ${requests}=    Get Length    ${report}[requests]
    ${page}=    Write Report Page    ${report}    ${FOLDER}${/}failed.html
    Open Report Page    ${page}
    Page Title Should Be    ${TITLE}
    Element Should Show Text    \#stop-reason    stop: failed
    Element Should Show Text    \#error    ${report}[error]
    Element Should Show Text    \#answer    the run failed before it answered
    Element Count Should Be    svg#tokens-plot circle.point    ${requests}
    Element Count Should Be    table.requests tbody tr.request    ${requests}
    Take Report Screenshot    html-report-failed.png
    Browser Should Have Reported No Problems

A Report With Names, Times And Results Folds Each Result Until Clicked
    ${report}=    Named Report
    ${page}=    Write Report Page    ${report}    ${FOLDER}${/}named.html
    Open Report Page    ${page}
    Element Should Show Text    \#run-by    agent reader · model qwen2.5-coder:1.5b
    Element Should Show Text    div.step.prefetch h3    PREFETCH · STEP 0
    Element Should Show Text    div.step.prefetch    12,240 → 73 chars (pruned) · 1.1 s
    Element Should Show Text    div.step[data-step="1"] .step-time    3.9 s (model 2.1 s, tools 1.8 s)
    Element Should Show Text    div.step[data-step="2"]    repeat of the call at step 0
    Element Count Should Be    li.call details.result    5
    Element Should Be Hidden    div.step.prefetch details.result pre
    Click Element    div.step.prefetch details.result summary
    Element Should Show Text    div.step.prefetch details.result pre    ERROR deadlock #1
    Element Should Show Text    details.sub-run .sub-answer    In app.log, beside <db.log>.
    Element Should Show Text    details.sub-run summary    sub-run of agent:searcher on qwen2.5-coder:0.5b
    Click Element    div.step[data-step="1"] li.call >> nth=0 >> details.result summary
    Element Should Show Text    div.step[data-step="1"] li.call pre    <script>alert('x')</script>: 42 units
    Take Report Screenshot    html-report-named.png
    Browser Should Have Reported No Problems

An Empty Report Renders In Chromium
    ${page}=    Write Report Page    ${{{}}}    ${FOLDER}${/}empty.html
    Open Report Page    ${page}
    Page Title Should Be    ${TITLE}
    Element Count Should Be    svg#tokens-plot    1
    Element Count Should Be    svg#tokens-plot circle.point    0
    Element Should Show Text    \#requests    no requests recorded
    Browser Should Have Reported No Problems


*** Keywords ***
Open Chromium
    Remove Directory    ${FOLDER}    recursive=True
    Chromium Should Be Installed
    Start Browser
