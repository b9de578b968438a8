*** Settings ***
Documentation       ``leanloop chat`` on a pseudo-terminal (pexpect), against the scripted
...                 server (issue 39): Ctrl-C during a turn cancels that turn and keeps the
...                 chat, its conversation and its session; Ctrl-C at the prompt drops the
...                 line and twice leaves; a pasted question of several lines is one turn,
...                 and a line ending with a backslash goes on on the next; /reset, /report
...                 and /html still work. A turn is held mid-turn by a reply the scripted
...                 server never sends (it is released when the server stops), not by a sleep.
Resource            resources/servers.resource
Library             resources/ChatPtyLibrary.py
Library             OperatingSystem
Suite Setup         Start Scripted Server For Suite    n_ctx=8192
Suite Teardown      Stop Scripted Server
Test Setup          Reset Scripted Server
Test Teardown       Stop Chat
Test Timeout        3 minutes


*** Test Cases ***
Ctrl-C During A Turn Cancels It And Keeps The Chat And The Session
    [Documentation]    The first turn answers; the second is held by the server and
    ...    cancelled with Ctrl-C: one ``[cancelled]`` line, then the prompt again, in the
    ...    same chat. The third turn goes to the same session and its request carries the
    ...    first turn; the store holds the cancelled turn as failed (resumable) between
    ...    two answered ones. /report after the cancel says there is no report.
    ${folder}=    Pty Chat Folder    cancel
    Queue Answer    High tide is at noon.
    Start Chat On A Pty    ${folder}
    ${session}=    Chat Session
    Wait For Prompt
    Type Line    When is high tide?
    Chat Should Show    High tide is at noon.
    Wait For Prompt
    Queue Held Answer
    Type Line    Tell me a very long story.
    Wait Until Scripted Requests Reach    2
    Press Ctrl-C
    Chat Should Show    [cancelled]
    Wait For Prompt
    Type Line    /report
    Chat Should Show    the last turn was cancelled: it has no report
    Wait For Prompt
    Queue Answer    You asked when high tide is.
    Type Line    What did I ask first?
    Chat Should Show    You asked when high tide is.
    Wait For Prompt
    Scripted Request Count Should Be    3
    Scripted Request Should Contain    3    When is high tide?    role=user
    Scripted Request Should Contain    3    High tide is at noon.    role=assistant
    Scripted Request Should Contain    3    What did I ask first?    role=user
    Type Line    /exit
    ${rc}=    Wait For Chat To Exit
    Should Be Equal As Integers    ${rc}    0
    ${output}=    Chat Output
    Should Not Contain    ${output}    interrupted
    Should Be Equal As Integers    ${{ $output.count('[cancelled]') }}    1
    ${statuses}=    Session Turn Statuses    ${folder}    ${session}
    Should Be Equal    ${statuses}    ${{ ["done", "failed", "done"] }}

Ctrl-C At The Prompt Drops The Line And A Second One Leaves
    [Documentation]    Ctrl-C with a line typed drops it and stays; at the empty prompt
    ...    it says how to leave; one more ends the chat with 130 (as Ctrl-C always
    ...    did). Nothing reaches the model.
    ${folder}=    Pty Chat Folder    leave
    Start Chat On A Pty    ${folder}
    Wait For Prompt
    Type Text    a line I regret
    Chat Should Show    a line I regret
    Press Ctrl-C
    Wait For Prompt
    Press Ctrl-C
    Chat Should Show    (Ctrl-C again, Ctrl-D or /exit leaves)
    Wait For Prompt
    Press Ctrl-C
    ${rc}=    Wait For Chat To Exit
    Should Be Equal As Integers    ${rc}    130
    Scripted Request Count Should Be    0
    ${output}=    Chat Output
    Should Be Equal As Integers    ${{ $output.count('(Ctrl-C again') }}    1

A Pasted Question Of Several Lines Is One Turn
    [Documentation]    Two lines pasted at once, then Enter, make one request whose
    ...    question holds both lines; a line ending with a backslash goes on on the next
    ...    (one more request, one question of two lines); /reset moves to a new session,
    ...    /report and /html show the last turn; Ctrl-D leaves with 0.
    ${folder}=    Pty Chat Folder    paste
    Queue Answer    Both lines arrived.
    Queue Answer    Two typed lines arrived.
    Start Chat On A Pty    ${folder}
    Wait For Prompt
    Paste Text    Here is my question:\nwhat is the second line for?\n
    Type Line    ${EMPTY}
    Chat Should Show    Both lines arrived.
    Wait For Prompt
    Scripted Request Count Should Be    1
    Scripted Request Should Contain    1    Here is my question:\nwhat is the second line for?    role=user
    Type Line    First typed line \\
    Chat Should Show    ...${SPACE}
    Type Line    second typed line
    Chat Should Show    Two typed lines arrived.
    Wait For Prompt
    Scripted Request Count Should Be    2
    Scripted Request Should Contain    2    First typed line${SPACE}\nsecond typed line    role=user
    Type Line    /report
    Chat Should Show    stop reason: answer · steps: 1 · tool calls: 0 · requests: 1
    Wait For Prompt
    Type Line    /html page.html
    Chat Should Show    wrote ${folder}${/}page.html
    File Should Exist    ${folder}${/}page.html
    Wait For Prompt
    Type Line    /reset
    Chat Should Show    new conversation: session chat-
    Wait For Prompt
    Type Line    /report
    Chat Should Show    no turn yet: ask something first
    Wait For Prompt
    Press Ctrl-D
    ${rc}=    Wait For Chat To Exit
    Should Be Equal As Integers    ${rc}    0
    Scripted Request Count Should Be    2


*** Keywords ***
Pty Chat Folder
    [Documentation]    A fresh folder for one test, with its agents file.
    [Arguments]    ${name}
    ${folder}=    Set Variable    ${TEMPDIR}${/}leanloop-chat-pty-${name}
    Remove Directory    ${folder}    recursive=True
    Create Directory    ${folder}
    Write Pty Chat Agents File    ${folder}    ${SCRIPTED_URL}
    RETURN    ${folder}

Wait Until Scripted Requests Reach
    [Documentation]    Wait until the scripted server has received ${count} requests.
    [Arguments]    ${count}
    Wait Until Keyword Succeeds    30s    0.1s    Scripted Request Count Should Be    ${count}
