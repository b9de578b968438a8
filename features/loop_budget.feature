Feature: The token budget, end to end through the agent loop
  Before every request the loop measures the request view against the plan of the model's
  window and says so in a leanloop.budget event; old tool results are trimmed in the view
  when it is over the ceiling; when trimming is not enough the synthesis flow ends the run
  with one more tool round and a tool-less final request; a refusal for size is recovered
  once; the estimate learns from the server's counts; and an agent with no budget keys and
  a small conversation sends exactly what it sent before.

  Scenario: A leanloop.budget event precedes every request and the report carries the figures
    Given a budgeted agent with a 8000-token window and the script:
      | reply                      |
      | call bulky {"key": "a"}    |
      | call lookup {"key": "b"}   |
      | The report is in.          |
    When the budgeted run is asked "Summarise a and b"
    Then the budgeted run answers "The report is in."
    And a leanloop.budget event with the budget figures preceded every budgeted request
    And the leanloop.budget events agree with the budgeted report's requests
    And the budgeted report shows a window of 8000 tokens from "config"
    And every budgeted report request carries its estimate, reported tokens, ceiling and window
    And the budgeted report counts 0 overflow recoveries

  Scenario: The budget events are visible through astream_events
    Given a budgeted agent with a 8000-token window and the script:
      | reply                      |
      | call lookup {"key": "a"}   |
      | The value is known.        |
    When the budgeted run is asked "Look up a" through astream_events
    Then the budgeted stream carried the events "leanloop.budget, leanloop.step"
    And the budgeted run answers "The value is known."

  Scenario: Large results are trimmed oldest first in later requests, the newest stays whole
    Given a budgeted agent with a 4000-token window and the script:
      | reply                      |
      | call bulky {"key": "a"}    |
      | call bulky {"key": "b"}    |
      | call bulky {"key": "c"}    |
      | call bulky {"key": "d"}    |
      | call bulky {"key": "e"}    |
      | All five are summarised.   |
    When the budgeted run is asked "Summarise a to e"
    Then the budgeted run answers "All five are summarised."
    And the budgeted run stops with "answer"
    And budgeted request 5 carries trimmed older results and the newest result intact
    And budgeted request 6 carries trimmed older results and the newest result intact
    And the budgeted run emitted a leanloop.trimmed event with its figures
    And the budgeted report counts each trimmed result once, however many requests trimmed it
    And every result trimmed in budgeted request 5 is still trimmed in request 6
    And the budgeted report counts at least 4 trimmed results
    And no budgeted request's estimate exceeds its ceiling
    And the budgeted run emitted no leanloop.synthesis event

  Scenario: The 75% warning is logged once per run, however many requests pass it
    Given a budgeted agent with a 4000-token window and the script:
      | reply                      |
      | call lookup {"key": "a"}   |
      | call lookup {"key": "b"}   |
      | call lookup {"key": "c"}   |
      | Three values found.        |
    When the budgeted run is asked a question of 6400 characters
    Then the budgeted run answers "Three values found."
    And the budget warning was logged exactly once
    And the small-window warning was logged exactly once

  Scenario: A question too large to trim starts the synthesis flow: one more round, then no tools
    Given a budgeted agent with a 6000-token window and the script:
      | reply                      |
      | call lookup {"key": "a"}   |
      | call lookup {"key": "b"}   |
    When the budgeted run is asked a question of 14000 characters
    Then the budgeted run stops with "budget_exhausted"
    And the budgeted model received 2 requests
    And budgeted request 1 offered tools
    And the synthesis instruction appears once in budgeted request 1
    And the synthesis instruction appears once in budgeted request 2
    And budgeted request 2 offered no tools and ends with the final-answer prompt
    And the budgeted tool "lookup" ran 1 times
    And the budgeted run answer mentions "could not finish"
    And the budgeted run emitted a leanloop.synthesis event with reason "budget_exhausted"

  Scenario: With trimming off, growing results start the synthesis flow
    Given a budgeted agent with a 6000-token window, settings "trim_tool_results=false" and the script:
      | reply                        |
      | call bulky {"key": "a"}      |
      | call bulky {"key": "b"}      |
      | call bulky {"key": "c"}      |
      | call bulky {"key": "d"}      |
      | call bulky {"key": "e"}      |
      | call bulky {"key": "f"}      |
      | Here is what a to f hold.    |
    When the budgeted run is asked "Summarise everything"
    Then the budgeted run stops with "budget_exhausted"
    And the budgeted run answers "Here is what a to f hold."
    And the budgeted run emitted a leanloop.synthesis event with reason "budget_exhausted"
    And the budgeted tool "bulky" ran 6 times
    And budgeted request 6 offered tools
    And the synthesis instruction appears once in budgeted request 6
    And budgeted request 7 offered no tools and ends with the final-answer prompt

  Scenario: A model that answers in its synthesis round ends the run with that answer
    Given a budgeted agent with a 6000-token window and the script:
      | reply                          |
      | The background says enough.    |
    When the budgeted run is asked a question of 14000 characters
    Then the budgeted run answers "The background says enough."
    And the budgeted run stops with "budget_exhausted"
    And the budgeted model received 1 requests

  Scenario: A request that would not fit the window even after everything gets a composed answer
    Given a budgeted agent with a 4000-token window and the script:
      | reply                      |
      | never sent                 |
    When the budgeted run is asked a question of 15000 characters
    Then the budgeted model received 0 requests
    And the budgeted run stops with "budget_exhausted"
    And the budgeted run answer mentions "no longer fits the model's context window"
    And the budgeted run emitted a leanloop.synthesis event with reason "budget_exhausted"

  Scenario: A huge tool result is cut to the plan's per-result cap (20% of the window)
    Given a budgeted agent with a 10000-token window and the script:
      | reply                      |
      | call huge {"key": "h"}     |
      | The dump is long.          |
    When the budgeted run is asked "Dump h"
    Then the huge result in budgeted request 2 is cut to the plan's per-result cap
    And the budgeted run answers "The dump is long."

  Scenario Outline: A refusal for size (<kind>) is recovered once with a smaller request
    Given a budgeted agent with a 8000-token window and the script:
      | reply                      |
      | call bulky {"key": "a"}    |
      | call bulky {"key": "b"}    |
      | refuse <kind>              |
      | Recovered and answered.    |
    When the budgeted run is asked "Summarise a and b"
    Then the budgeted run answers "Recovered and answered."
    And the budgeted run stops with "answer"
    And the budgeted model received 4 requests
    And budgeted request 4 is smaller than budgeted request 3
    And the budgeted report counts 1 overflow recoveries
    And the budgeted run emitted 1 leanloop.overflow_recovered event
    And the budgeted report's request kinds are "step, step, retry"

    Examples:
      | kind      |
      | llama.cpp |
      | openai    |
      | generic   |

  Scenario: A llama.cpp refusal with figures teaches the loop the real window
    Given a budgeted agent with a 8000-token window and the script:
      | reply                      |
      | call bulky {"key": "a"}    |
      | refuse llama.cpp           |
      | call bulky {"key": "b"}    |
      | Both are read.             |
    When the budgeted run is asked "Summarise a and b"
    Then the budgeted run answers "Both are read."
    And the budgeted report shows a window of 2048 tokens from "server:error"
    And the budgeted report counts 1 overflow recoveries
    And no budgeted request's estimate exceeds its ceiling

  Scenario: A first request refused for a prefetched file is retried with the file trimmed
    Given a budgeted agent with a 8000-token window, a 5000-character workspace file "report.txt" and the script:
      | reply                        |
      | refuse llama.cpp             |
      | The report is summarised.    |
    When the budgeted run is asked "Summarise report.txt"
    Then budgeted request 1 already carries the read_file result for "report.txt"
    And budgeted request 2 is smaller than budgeted request 1
    And the budgeted run answers "The report is summarised."
    And the budgeted run stops with "answer"
    And the budgeted report counts 1 overflow recoveries
    And the budgeted run emitted 1 leanloop.overflow_recovered event
    And the budgeted report shows a window of 2048 tokens from "server:error"

  Scenario: A first request that no trimming can shrink is not sent again unchanged
    Given a budgeted agent with a 8000-token window and the script:
      | reply                      |
      | refuse llama.cpp           |
      | refuse llama.cpp           |
      | refuse llama.cpp           |
      | refuse llama.cpp           |
    When the budgeted run is asked a question of 6000 characters
    Then the budgeted run stops with "budget_exhausted"
    And the budgeted run answer mentions "no longer fits the model's context window"
    And no budgeted request was sent again at the size it was refused at
    And the budgeted model received 1 requests

  Scenario: Refused twice for size, the run ends with a final answer, not a crash
    Given a budgeted agent with a 8000-token window and the script:
      | reply                      |
      | call bulky {"key": "a"}    |
      | refuse llama.cpp           |
      | refuse llama.cpp           |
      | What I found so far.       |
    When the budgeted run is asked "Summarise a"
    Then the budgeted run answers "What I found so far."
    And the budgeted run stops with "budget_exhausted"
    And budgeted request 3 is smaller than budgeted request 2
    And budgeted request 4 offered no tools and ends with the final-answer prompt
    And the budgeted report counts 1 overflow recoveries

  Scenario: A server that refuses everything for size still gets an honest composed answer
    Given a budgeted agent with a 8000-token window and the script:
      | reply                      |
      | call bulky {"key": "a"}    |
      | refuse generic             |
      | refuse generic             |
      | refuse generic             |
      | refuse generic             |
    When the budgeted run is asked "Summarise a"
    Then the budgeted run stops with "budget_exhausted"
    And the budgeted run answer mentions "no longer fits the model's context window"
    And the budgeted model received 5 requests

  Scenario: The estimate learns from the usage the model reports
    Given a budgeted agent with a 8000-token window reporting usage and the script:
      | reply                      |
      | call bulky {"key": "a"}    |
      | call lookup {"key": "b"}   |
      | Learned.                   |
    When the budgeted run is asked "Read a and b"
    Then the budgeted report's chars_per_token moved from 3.3 and stays within 2 and 6
    And every budgeted report request carries the tokens the model reported

  Scenario: An agent with no budget keys and a small conversation sends what it always sent
    Given a budgeted agent without budget keys and the script:
      | reply                      |
      | call lookup {"key": "a"}   |
      | call lookup {"key": "b"}   |
      | Both values found.         |
    And a budgeted twin with trimming off and the whole window as budget
    When the budgeted run and its twin are asked "Look up a and b"
    Then the budgeted run answers "Both values found."
    And the budgeted report shows a window of 128000 tokens from "default:hosted"
    And each budgeted request extends the one before it
    And no budgeted request carries the synthesis instruction or a trimmed result
    And the budgeted run emitted no leanloop.synthesis and no leanloop.trimmed event
    And the budgeted twin received exactly the same requests
