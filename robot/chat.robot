*** Settings ***
Documentation       ``leanloop chat`` on a real terminal (tmux), against the scripted server
...                 (issue 29, item 5): the banner says which agent, model, window and
...                 session, and how to leave; slash commands are answered by the chat and
...                 never reach the model; the turns of one chat are one conversation; Up
...                 brings back the lines typed, in this chat and in the next one; a spinner
...                 turns while the agent works, and the progress lines are folded into one
...                 line after each answer. Piped lines keep no history.
Resource            resources/servers.resource
Library             resources/TmuxLibrary.py
Library             OperatingSystem
Suite Setup         Start Scripted Server For Suite    n_ctx=8192
Suite Teardown      Stop Chat Suite
Test Setup          Reset Scripted Server
Test Teardown       Kill Tmux Session    chat
Test Timeout        3 minutes


*** Variables ***
${FRAME}        [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏|/\\-]


*** Test Cases ***
The Banner, /help, Two Remembered Turns And Up-Arrow History On A Terminal
    [Documentation]    The banner names the agent, its model, the window the file gives,
    ...    the new session and how to leave; /help is answered with no request sent;
    ...    the second turn's request carries the first turn; Up brings back the first
    ...    question at the prompt; /exit ends the chat with 0.
    ${folder}=    Chat Folder    banner
    Queue Answer    High tide is at noon.
    Queue Answer    You asked when high tide is.
    Start Chat    ${folder}
    Wait Until Pane Contains    chat    leanloop chat · agent chatty · model openai-compatible chat-model at ${SCRIPTED_URL} · window 8,192 tokens
    Wait Until Pane Matches    chat    ^session chat-[0-9a-f]{12} \\(new; continue it later with --session chat-[0-9a-f]{12}\\)$
    Wait Until Pane Contains    chat    /help lists the commands; /exit or Ctrl-D leaves.
    Wait Until Cursor Line Is    chat    >
    Type Line    chat    /help
    Wait Until Pane Contains    chat    /reset${SPACE * 8}start a new conversation
    Wait Until Pane Contains    chat    /html [PATH]
    Scripted Request Count Should Be    0
    Type Line    chat    When is high tide?
    Wait Until Pane Contains    chat    High tide is at noon.
    Wait Until Pane Matches    chat    ^stop: answer · 1 step · 0 tool calls · 1 request
    Wait Until Cursor Line Is    chat    >
    Send Keys    chat    Up
    Wait Until Cursor Line Is    chat    > When is high tide?
    Send Keys    chat    C-u
    Wait Until Cursor Line Is    chat    >
    Type Line    chat    What did I ask?
    Wait Until Pane Contains    chat    You asked when high tide is.
    Scripted Request Count Should Be    2
    Scripted Request Should Contain    2    When is high tide?    role=user
    Scripted Request Should Contain    2    High tide is at noon.    role=assistant
    Scripted Request Should Contain    2    What did I ask?    role=user
    Wait Until Cursor Line Is    chat    >
    Type Line    chat    /exit
    ${rc}=    Wait Until Command Exits    chat
    Should Be Equal As Integers    ${rc}    0
    ${history}=    Read Lines Of    ${folder}${/}state${/}leanloop${/}chat_history
    Should Contain    ${history}    When is high tide?
    Should Not Contain    ${history}    /exit

The Next Chat's Up Arrow Brings Back The Last Chat's Questions
    [Documentation]    The history is kept in the state folder across chats: in a new
    ...    chat, Up shows the last question of the chat before, Up again the one before
    ...    it; Ctrl-D leaves with 0.
    ${folder}=    Chat Folder    history
    Queue Answer    First answer.
    Queue Answer    Second answer.
    Start Chat    ${folder}
    Wait Until Cursor Line Is    chat    >
    Type Line    chat    The first question
    Wait Until Pane Contains    chat    First answer.
    Wait Until Cursor Line Is    chat    >
    Type Line    chat    The second question
    Wait Until Pane Contains    chat    Second answer.
    Wait Until Cursor Line Is    chat    >
    Send Keys    chat    C-d
    ${rc}=    Wait Until Command Exits    chat
    Should Be Equal As Integers    ${rc}    0
    Kill Tmux Session    chat
    Start Chat    ${folder}
    Wait Until Cursor Line Is    chat    >
    Send Keys    chat    Up
    Wait Until Cursor Line Is    chat    > The second question
    Send Keys    chat    Up
    Wait Until Cursor Line Is    chat    > The first question
    Send Keys    chat    C-u    C-d
    ${rc}=    Wait Until Command Exits    chat
    Should Be Equal As Integers    ${rc}    0
    Scripted Request Count Should Be    2

A Spinner Turns While The Agent Works And Progress Is Folded Under The Answer
    [Documentation]    While the answer is slow to come, a spinner line says what the agent
    ...    does; once it is there, one summary line follows it, with the window on the
    ...    first turn, and no progress line sits between the answers.
    ${folder}=    Chat Folder    spinner
    Queue Answer    The answer took its time.    chunk_delay=1.5
    Start Chat    ${folder}
    Wait Until Cursor Line Is    chat    >
    Type Line    chat    Take your time.
    Wait Until Pane Matches    chat    ^${FRAME} step 1 · [0-9,]+ / [0-9,]+ tokens .* · \\d+s$    timeout=20
    Wait Until Pane Contains    chat    The answer took its time.
    Wait Until Pane Matches    chat    ^stop: answer · 1 step · .* · window 8,192 \\(config\\)
    Wait Until Cursor Line Is    chat    >
    ${pane}=    Pane Text    chat
    Should Not Contain    ${pane}    s] step 1 ·
    Should Not Match Regexp    ${pane}    (?m)^${FRAME} step
    Type Line    chat    /report
    Wait Until Pane Contains    chat    stop reason: answer · steps: 1 · tool calls: 0 · requests: 1
    Type Line    chat    /html page.html
    Wait Until Pane Contains    chat    wrote ${folder}${/}page.html
    File Should Exist    ${folder}${/}page.html
    Type Line    chat    /exit
    ${rc}=    Wait Until Command Exits    chat
    Should Be Equal As Integers    ${rc}    0

Piped Lines Are Answered Without A History File
    [Documentation]    With stdin not a terminal there is no prompt and no history: the
    ...    state folder stays empty; /help is still answered locally.
    ${folder}=    Chat Folder    piped
    ${file}=    Write Chat Agents File    ${folder}    ${SCRIPTED_URL}
    ${python}=    Python Executable
    ${result}=    Run Process    ${python}    -m    leanloop    chat    ${file}
    ...    stdin=/help\n    cwd=${folder}    timeout=60s    env:XDG_STATE_HOME=${folder}${/}state
    Log    ${result.stderr}
    Should Be Equal As Integers    ${result.rc}    0    ${result.stderr}
    Should Be Equal    ${result.stdout}    ${EMPTY}
    Should Contain    ${result.stderr}    /reset
    Scripted Request Count Should Be    0
    Should Not Exist    ${folder}${/}state${/}leanloop${/}chat_history


*** Keywords ***
Chat Folder
    [Documentation]    A fresh folder for one test: its agents file, its state folder.
    [Arguments]    ${name}
    ${folder}=    Set Variable    ${TEMPDIR}${/}leanloop-chat-${name}
    Remove Directory    ${folder}    recursive=True
    Create Directory    ${folder}
    Write Chat Agents File    ${folder}    ${SCRIPTED_URL}
    RETURN    ${folder}

Start Chat
    [Documentation]    ``leanloop chat`` on the folder's agents file, in tmux session
    ...    ``chat``, with the folder's own state folder (so its own history).
    [Arguments]    ${folder}
    ${python}=    Python Executable
    Start In Tmux    chat    ${python} -m leanloop chat agents.yaml    cwd=${folder}
    ...    XDG_STATE_HOME=${folder}${/}state

Stop Chat Suite
    Kill Tmux Server
    Stop Scripted Server
