Feature: The token budget, end to end through the agent loop
  Before every request the loop measures the request view against the plan of the model's
  window and says so in a leanloop.budget event; old tool results are trimmed in the view
  when it is over the ceiling; when trimming is not enough the synthesis flow ends the run
  with one more tool round and a tool-less final request; a refusal for size is recovered
  once; the estimate learns from the server's counts; and an agent with no budget keys and
  a small conversation sends exactly what it sent before.

  Background:
    Given every agent has tools "lookup, bulky, huge"

  Scenario: A leanloop.budget event precedes every request and the report carries the figures
    Given an agent with window 8000 and the script:
      | reply                    |
      | call bulky {"key": "a"}  |
      | call lookup {"key": "b"} |
      | The report is in.        |
    When the agent is asked "Summarise a and b"
    Then the answer is "The report is in."
    And a leanloop.budget event with the budget figures preceded every request
    And the leanloop.budget events agree with the report's requests
    And the report shows a window of 8000 tokens from "config"
    And every report request carries its estimate, reported tokens, ceiling and window
    And the report counts 0 overflow recoveries

  Scenario: The budget events are visible through astream_events
    Given an agent with window 8000 and the script:
      | reply                    |
      | call lookup {"key": "a"} |
      | The value is known.      |
    When the agent is asked "Look up a" through astream_events
    Then the astream_events stream carried the events "leanloop.budget, leanloop.step"
    And the answer is "The value is known."

  Scenario: Large results are trimmed oldest first in later requests, the newest stays whole
    Given an agent with window 4000 and the script:
      | reply                    |
      | call bulky {"key": "a"}  |
      | call bulky {"key": "b"}  |
      | call bulky {"key": "c"}  |
      | call bulky {"key": "d"}  |
      | call bulky {"key": "e"}  |
      | All five are summarised. |
    When the agent is asked "Summarise a to e"
    Then the answer is "All five are summarised."
    And the report says stop_reason "answer"
    And request 5 carries trimmed older results and the newest result intact
    And every result trimmed in request 5 is still trimmed in request 6
    And the run emitted a leanloop.trimmed event with its figures
    And the report counts each trimmed result once, however many requests trimmed it
    And every result trimmed in request 5 is still trimmed in request 6
    And the report counts at least 3 trimmed results
    And no request's estimate exceeds its ceiling
    And the run emitted no leanloop.synthesis event

  Scenario: The 75% warning is logged once per run, however many requests pass it
    Given an agent with window 4000 and the script:
      | reply                    |
      | call lookup {"key": "a"} |
      | call lookup {"key": "b"} |
      | call lookup {"key": "c"} |
      | Three values found.      |
    When the agent is asked a question of 6400 characters
    Then the answer is "Three values found."
    And the budget warning was logged exactly once
    And the small-window warning was logged exactly once

  Scenario: A question too large to trim starts the synthesis flow: one more round, then no tools
    Given an agent with window 6000 and the script:
      | reply                    |
      | call lookup {"key": "a"} |
      | call lookup {"key": "b"} |
    When the agent is asked a question of 14000 characters
    Then the report says stop_reason "budget_exhausted"
    And the model received 2 requests
    And request 1 offered tools
    And the synthesis instruction appears once in request 1
    And the synthesis instruction appears once in request 2
    And request 2 offered no tools
    And request 2 ends with the final-answer prompt
    And the tool "lookup" ran 1 times
    And the answer mentions "could not finish"
    And the run emitted a leanloop.synthesis event with reason "budget_exhausted"

  Scenario: With trimming off, growing results start the synthesis flow
    Given an agent with window 6000, trim_tool_results false and the script:
      | reply                     |
      | call bulky {"key": "a"}   |
      | call bulky {"key": "b"}   |
      | call bulky {"key": "c"}   |
      | call bulky {"key": "d"}   |
      | call bulky {"key": "e"}   |
      | call bulky {"key": "f"}   |
      | Here is what a to f hold. |
    When the agent is asked "Summarise everything"
    Then the report says stop_reason "budget_exhausted"
    And the answer is "Here is what a to f hold."
    And the run emitted a leanloop.synthesis event with reason "budget_exhausted"
    And the tool "bulky" ran 6 times
    And request 6 offered tools
    And the synthesis instruction appears once in request 6
    And request 7 offered no tools
    And request 7 ends with the final-answer prompt

  Scenario: A model that answers in its synthesis round ends the run with that answer
    Given an agent with window 6000 and the script:
      | reply                       |
      | The background says enough. |
    When the agent is asked a question of 14000 characters
    Then the answer is "The background says enough."
    And the report says stop_reason "budget_exhausted"
    And the model received 1 requests

  Scenario: A request that would not fit the window even after everything gets a composed answer
    Given an agent with window 4000 and the script:
      | reply      |
      | never sent |
    When the agent is asked a question of 15000 characters
    Then the model received 0 requests
    And the report says stop_reason "budget_exhausted"
    And the answer mentions "no longer fits the model's context window"
    And the run emitted a leanloop.synthesis event with reason "budget_exhausted"

  Scenario: A huge tool result is cut to the plan's per-result cap (20% of the window)
    Given an agent with window 10000 and the script:
      | reply                  |
      | call huge {"key": "h"} |
      | The dump is long.      |
    When the agent is asked "Dump h"
    Then the huge result in request 2 is cut to the plan's per-result cap
    And the answer is "The dump is long."

  Scenario Outline: A refusal for size (<server>) is recovered once with a smaller request
    Given an agent with window 8000 and the script:
      | reply                        |
      | call bulky {"key": "a"}      |
      | call bulky {"key": "b"}      |
      | refuse size as <server> does |
      | Recovered and answered.      |
    When the agent is asked "Summarise a and b"
    Then the answer is "Recovered and answered."
    And the report says stop_reason "answer"
    And the model received 4 requests
    And request 4 is smaller than request 3
    And the report counts 1 overflow recoveries
    And the run emitted 1 leanloop.overflow_recovered event
    And the report's request kinds are "step, step, retry"

    Examples:
      | server           |
      | llama.cpp        |
      | OpenAI           |
      | a generic server |

  Scenario: A llama.cpp refusal with figures teaches the loop the real window
    Given an agent with window 8000 and the script:
      | reply                         |
      | call bulky {"key": "a"}       |
      | refuse size as llama.cpp does |
      | call bulky {"key": "b"}       |
      | Both are read.                |
    When the agent is asked "Summarise a and b"
    Then the answer is "Both are read."
    And the report shows a window of 2048 tokens from "server:error"
    And the report counts 1 overflow recoveries
    And no request's estimate exceeds its ceiling

  Scenario: A first request refused for a prefetched file is retried with the file trimmed
    Given a workspace file "report.txt" of 5000 characters
    And an agent with window 8000, tools "read_file, lookup, bulky, huge" and the script:
      | reply                         |
      | refuse size as llama.cpp does |
      | The report is summarised.     |
    When the agent is asked "Summarise report.txt"
    Then request 1 already carries the read_file result for "report.txt"
    And request 2 is smaller than request 1
    And the answer is "The report is summarised."
    And the report says stop_reason "answer"
    And the report counts 1 overflow recoveries
    And the run emitted 1 leanloop.overflow_recovered event
    And the report shows a window of 2048 tokens from "server:error"

  Scenario: A first request that no trimming can shrink is not sent again unchanged
    Given an agent with window 8000 and the script:
      | reply                         |
      | refuse size as llama.cpp does |
      | refuse size as llama.cpp does |
      | refuse size as llama.cpp does |
      | refuse size as llama.cpp does |
    When the agent is asked a question of 6000 characters
    Then the report says stop_reason "budget_exhausted"
    And the answer mentions "no longer fits the model's context window"
    And no request was sent again at the size it was refused at
    And the model received 1 requests

  Scenario: Refused twice for size, the run ends with a final answer, not a crash
    Given an agent with window 8000 and the script:
      | reply                         |
      | call bulky {"key": "a"}       |
      | refuse size as llama.cpp does |
      | refuse size as llama.cpp does |
      | What I found so far.          |
    When the agent is asked "Summarise a"
    Then the answer is "What I found so far."
    And the report says stop_reason "budget_exhausted"
    And request 3 is smaller than request 2
    And request 4 offered no tools
    And request 4 ends with the final-answer prompt
    And the report counts 1 overflow recoveries

  Scenario: A server that refuses everything for size still gets an honest composed answer
    Given an agent with window 8000 and the script:
      | reply                                |
      | call bulky {"key": "a"}              |
      | refuse size as a generic server does |
      | refuse size as a generic server does |
      | refuse size as a generic server does |
      | refuse size as a generic server does |
    When the agent is asked "Summarise a"
    Then the report says stop_reason "budget_exhausted"
    And the answer mentions "no longer fits the model's context window"
    And the model received 5 requests

  Scenario: The estimate learns from the usage the model reports
    Given an agent with window 8000, report_usage true and the script:
      | reply                    |
      | call bulky {"key": "a"}  |
      | call lookup {"key": "b"} |
      | Learned.                 |
    When the agent is asked "Read a and b"
    Then the report's chars_per_token moved from 3.3 and stays within 2 and 6
    And every report request carries the tokens the model reported

  Scenario: An agent with no budget keys and a small conversation sends what it always sent
    Given an agent with the script:
      | reply                    |
      | call lookup {"key": "a"} |
      | call lookup {"key": "b"} |
      | Both values found.       |
    And a twin agent with trim_tool_results false, token_budget_percent 1.0
    When the agent and its twin are asked "Look up a and b"
    Then the answer is "Both values found."
    And the report shows a window of 128000 tokens from "default:hosted"
    And each request extends the one before it
    And no request carries the synthesis instruction or a trimmed result
    And the run emitted no leanloop.synthesis and no leanloop.trimmed event
    And the twin received exactly the same requests
