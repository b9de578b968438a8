Feature: Tool hardening: bounded time and text-only results
  No tool call can hold a run, or the process, for ever: search matches under a time
  limit without holding other runs, every call is bounded by the agent's tool_timeout,
  and a sync tool that hangs is left behind in a daemon thread the process does not wait
  for. Whatever a tool returns reaches the model as text it can be sent: a result that
  cannot become text is an error result, and lone surrogates and control characters are
  replaced before any request.

  # ---- search under a time limit -------------------------------------------------------

  Scenario: The issue's backtracking pattern over a line of words finishes at once
    Given the workspace has "words.txt" with a single line of "word " repeated 40 times
    When a separate process runs an agent that searches the workspace for "(\w+\s*)*:" while another agent lists and reads files
    Then the searching agent answered within 5 s, its search result saying "no matches for"
    And the other agent answered within 2 s of starting

  Scenario: A pattern that backtracks without end gives an error within 5 s while another run goes on
    Given the workspace has "words.txt" with a single line of "a" repeated 60 times
    When a separate process runs an agent that searches the workspace for "(a|aa)+b" while another agent lists and reads files
    Then the searching agent answered within 5 s, its search result saying "error: search gave up after 2 s at words.txt:1"
    And the other agent answered within 2 s of starting
    And the other agent answered before the search ended

  Scenario: A glob that backtracks in re is matched at once
    Given the workspace has "names.txt" with a single line of "a" repeated 10 times
    And the workspace has "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.txt" with a single line of "a" repeated 10 times
    When a separate process runs an agent with the tools "list_files" and the script:
      | reply                                               |
      | call list_files {"glob": "*a*a*a*a*a*a*a*a*a*a*b"}  |
      | Listed.                                             |
    Then that agent answered "Listed." within 5 s, its tool result saying "no files match"

  # ---- tool_timeout ----------------------------------------------------------------------

  Scenario: An async tool that never returns is cancelled at tool_timeout and the run answers
    Given an agent that also has the tools "hang_async", with tool_timeout 1, and the script:
      | reply                           |
      | call hang_async {"label": "x"}  |
      | Gave up waiting.                |
    When the agent is asked "Wait for it." within 10 s
    Then the answer is "Gave up waiting."
    And the run took less than 2 s
    And request 2 ends with a tool result "error: hang_async timed out after 1 s; not retried" paired with the call of request 1
    And report call 1 timed out after "hang_async" ran
    And the report has an event mentioning "step 1: hang_async timed out after 1 s; not retried"
    And the tool "hang_async" was cancelled

  Scenario: A sync tool that never returns is abandoned at tool_timeout and the run answers
    Given an agent that also has the tools "hang_sync", with tool_timeout 1, and the script:
      | reply                          |
      | call hang_sync {"label": "x"}  |
      | Gave up waiting.               |
    When the agent is asked "Wait for it." within 10 s
    Then the answer is "Gave up waiting."
    And the run took less than 2 s
    And request 2 ends with a tool result "error: hang_sync timed out after 1 s; not retried" paired with the call of request 1
    And report call 1 timed out after "hang_sync" ran
    And the hung sync tool was left running in a daemon thread

  Scenario: A process whose sync tool hangs exits right after the answer
    When a separate process runs an agent with tool_timeout 1 whose sync tool never returns
    Then the process printed the answer "Gave up waiting." after the tool result "error: hang_sync timed out after 1 s; not retried"
    And the process exited with status 0 within 3 s of the answer

  # ---- every result becomes text ---------------------------------------------------------

  Scenario Outline: A result that cannot become text is an error result, not a crash
    Given an agent that also has the tools "<tool>", with tool_timeout 5, and the script:
      | reply                        |
      | call <tool> {"label": "x"}   |
      | Noted.                       |
    When the agent is asked "Show it." within 10 s
    Then the answer is "Noted."
    And request 2 has a tool result starting "<result>"

    Examples:
      | tool        | result                                                                                      |
      | huge_number | error: huge_number returned a result that cannot be shown as text (ValueError: Exceeds the limit |
      | unprintable | error: unprintable returned a result that cannot be shown as text (RuntimeError: no text for this object) |

  Scenario: Lone surrogates and control characters in a result are replaced before the request
    Given an agent that also has the tools "surrogates", with tool_timeout 5, and the script:
      | reply                           |
      | call surrogates {"label": "x"}  |
      | Noted.                          |
    When the agent is asked "Show it." within 10 s
    Then request 2 has the clean tool result "bad \ufffd name, \ufffd[31mred\ufffd nul\nnext\tcell"
    And every message of request 2 can be sent as UTF-8

  Scenario: list_files over a file whose name is not UTF-8 gives a name that can be sent
    Given the workspace has a file named with the bytes "caf\xff.txt"
    And an agent with tools "list_files" and the script:
      | reply                |
      | call list_files {}   |
      | Listed.              |
    When the agent is asked "What is there?"
    Then the answer is "Listed."
    And request 2 has the clean tool result "caf\ufffd.txt\n[1 file]"
    And every message of request 2 can be sent as UTF-8
