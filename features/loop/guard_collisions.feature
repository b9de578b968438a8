Feature: Rules that meet: the repeat guard against opt-out, pruning, trimming, cuts and overflow recovery
  Each rule keeps a promise of its own; these scenarios are where two of them meet. The
  guard answers a repeated call from memory — but never when the model can no longer
  read that result whole (trimmed, pruned) and never when the call asks for something
  new through its meta-arguments (output_prune: false, a new output_prune_context).

  Background:
    Given a workspace whose "app.log" reads as 50 KB with 3 lines mentioning "deadlock"
    And the extraction model keeps the lines mentioning "deadlock"

  Scenario: output_prune false after a pruned result returns the raw output (guard x opt-out)
    Given an agent with tools "read_file", allow_tool_output_pruning true, window 200000 and the script:
      | reply                                                                                            |
      | call read_file {"path": "app.log", "limit": 400, "output_prune_context": "the deadlocks"}        |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": false}                          |
      | Three deadlocks.                                                                                 |
    When the agent is asked "Why did the nightly job stop?"
    Then the tool "read_file" ran 2 times
    And the report counts 0 repeated calls
    And request 3 has a tool result containing "  201| ERROR deadlock #2"
    And request 3 has a tool result containing "read on from line"
    And request 3 has no tool result containing "end of file"
    And request 3 has no tool result containing "already called"
    And report call 2 has fate "cut" and was not pruned

  Scenario: A new output_prune_context is a new question, not a repeat (guard x pruning focus)
    Given an agent with tools "read_file", allow_tool_output_pruning true, window 200000 and the script:
      | reply                                                                                     |
      | call read_file {"path": "app.log", "limit": 400, "output_prune_context": "the deadlocks"}  |
      | call read_file {"path": "app.log", "limit": 400, "output_prune_context": "the start time"} |
      | Done.                                                                                     |
    When the agent is asked "Why did the nightly job stop?"
    Then the tool "read_file" ran 2 times
    And the report counts 0 repeated calls

  Scenario: The same pruned call asked again runs again, unpruned (guard x pruning)
    Given an agent with tools "read_file", allow_tool_output_pruning true, window 200000 and the script:
      | reply                                            |
      | call read_file {"path": "app.log", "limit": 400} |
      | call read_file {"path": "app.log", "limit": 400} |
      | Done.                                            |
    When the agent is asked "Why did the nightly job stop?"
    Then the tool "read_file" ran 2 times
    And report call 1 has fate "pruned"
    And report call 2 was not pruned and notes "ran again: the result of the same call at step 1 was pruned"

  Scenario: A result trimmed from the view and asked for again comes back (guard x trimming)
    Given a workspace with "a.txt" holding 25 numbered lines
    And the workspace has "b.txt" holding 25 numbered lines
    And the workspace has "c.txt" holding 25 numbered lines
    And the workspace has "d.txt" holding 25 numbered lines
    Given an agent with tools "read_file", window 2000, trim_keep_steps 1 and the script:
      | reply                                |
      | call read_file {"path": "a.txt"}     |
      | call read_file {"path": "b.txt"}     |
      | call read_file {"path": "c.txt"}     |
      | call read_file {"path": "d.txt"}     |
      | call read_file {"path": "a.txt"}     |
      | Done.                                |
    When the agent is asked "Sum the files"
    Then report call 1 has fate "trimmed"
    And the tool "read_file" ran 5 times
    And the report counts 0 repeated calls
    And report call 5 notes "ran again: the result of the same call at step 1 was trimmed"
    And request 6 ends with a tool result holding line 25 of "a.txt"

  Scenario: A result trimmed by the recovery from a size refusal and asked for again comes back (guard x overflow recovery)
    Given a workspace with "a.txt" holding 120 numbered lines
    And the workspace has "b.txt" holding 120 numbered lines
    Given an agent with tools "read_file", window 32768 and the script:
      | reply                                                |
      | call read_file {"path": "a.txt"}                     |
      | call read_file {"path": "b.txt"}                     |
      | refuse size as llama.cpp does                        |
      | call read_file {"path": "a.txt"}                     |
      | Done.                                                |
    When the agent is asked "Sum the files"
    Then the report counts 1 overflow recoveries
    And report call 1 has fate "trimmed"
    And the tool "read_file" ran 3 times
    And the report counts 0 repeated calls

  Scenario: A cut result asked for again is pointed at the rest, with the offset to read on (guard x cut)
    Given a workspace with "big.txt" holding 3000 numbered lines
    Given an agent with tools "read_file", window 4096 and the script:
      | reply                                               |
      | call read_file {"path": "big.txt", "limit": 2000}   |
      | call read_file {"path": "big.txt", "limit": 2000}   |
      | Done.                                               |
    When the agent is asked "What is on the last line?"
    Then report call 1 has fate "cut"
    And request 2 has a tool result containing "read on from line"
    And request 2 has a tool result containing "next: read_file(path="big.txt", offset="
    And request 3 has a tool result containing "was cut to fit the context"
    And request 3 has a tool result containing "offset="
    And the report counts 1 repeated calls

  Scenario: A kept result asked for again is still answered from memory (the guard still guards)
    Given a workspace with "a.txt" holding 20 numbered lines
    Given an agent with tools "read_file" and the script:
      | reply                            |
      | call read_file {"path": "a.txt"} |
      | call read_file {"path": "a.txt"} |
      | Done.                            |
    When the agent is asked "Sum the file"
    Then the tool "read_file" ran 1 times
    And the report counts 1 repeated calls
    And request 3 has a tool result containing "already called at step 1"

  Scenario: A result that keeps being trimmed runs again twice, then is a repeat that says the whole does not fit (guard x trimming, bounded)
    Given a workspace with "a.txt" holding 25 numbered lines
    And the workspace has "b.txt" holding 25 numbered lines
    And the workspace has "c.txt" holding 25 numbered lines
    And the workspace has "d.txt" holding 25 numbered lines
    Given an agent with tools "read_file", window 2000, trim_keep_steps 1 and the script:
      | reply                            |
      | call read_file {"path": "a.txt"} |
      | call read_file {"path": "b.txt"} |
      | call read_file {"path": "c.txt"} |
      | call read_file {"path": "d.txt"} |
      | call read_file {"path": "a.txt"} |
      | call read_file {"path": "b.txt"} |
      | call read_file {"path": "c.txt"} |
      | call read_file {"path": "d.txt"} |
      | call read_file {"path": "a.txt"} |
      | call read_file {"path": "b.txt"} |
      | call read_file {"path": "c.txt"} |
      | call read_file {"path": "d.txt"} |
      | call read_file {"path": "a.txt"} |
      | Done.                            |
    When the agent is asked "Sum the files"
    Then report call 5 notes "ran again: the result of the same call at step 1 was trimmed"
    And report call 9 notes "ran again: the result of the same call at step 5 was trimmed"
    And report call 13 notes "repeat of the call at step 9; not run"
    And tool message 13 in request 14 contains "the whole of it does not fit in the context"
    And the tool "read_file" ran 12 times

  Scenario: With the small profile the same pruned call is a repeat that points at the extract; output_prune false still gets the whole output (guard x pruning x opt-out, small profile)
    Given an agent with tools "read_file", allow_tool_output_pruning true, window 200000, prompt_profile "small" and the script:
      | reply                                                                    |
      | call read_file {"path": "app.log", "limit": 400}                         |
      | call read_file {"path": "app.log", "limit": 400}                         |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": false}  |
      | Done.                                                                    |
    When the agent is asked "Why did the nightly job stop?"
    Then report call 1 has fate "pruned"
    And report call 2 notes "repeat of the call at step 1; not run"
    And tool message 2 in request 3 contains "its pruned result above holds the lines that matter"
    And report call 3 has fate "cut" and was not pruned
    And the tool "read_file" ran 2 times

  Scenario: With the small profile a trimmed result asked for again still comes back (guard x trimming, small profile)
    Given a workspace with "a.txt" holding 25 numbered lines
    And the workspace has "b.txt" holding 25 numbered lines
    And the workspace has "c.txt" holding 25 numbered lines
    And the workspace has "d.txt" holding 25 numbered lines
    Given an agent with tools "read_file", window 2000, trim_keep_steps 1, prompt_profile "small" and the script:
      | reply                            |
      | call read_file {"path": "a.txt"} |
      | call read_file {"path": "b.txt"} |
      | call read_file {"path": "c.txt"} |
      | call read_file {"path": "d.txt"} |
      | call read_file {"path": "a.txt"} |
      | Done.                            |
    When the agent is asked "Sum the files"
    Then report call 1 has fate "trimmed"
    And report call 5 notes "ran again: the result of the same call at step 1 was trimmed"
