Feature: A run says how it ended and what it did to each tool result
  The answer carries the usage of the whole run, sync streaming yields the answer as
  the model writes it, a failed run keeps its partial report and conversation, and the
  report gives every tool result its fate (kept, cut, trimmed, pruned, failed, repeat).

  Scenario: The answer's usage_metadata adds up every request of the run
    Given an outcome agent whose model reports usage, with the script:
      | reply                             | input | output |
      | call lookup {"key": "colour"}     | 100   | 10     |
      | call lookup {"key": "size"}       | 150   | 12     |
      | Blue and large.                   | 210   | 5      |
    When the outcome agent is invoked with "What colour and size?"
    Then the outcome answer's usage_metadata has input 460, output 27 and total 487
    And the outcome report's requests carry input tokens 100, 150, 210

  Scenario: Sync stream() yields the answer in several chunks, then the report
    Given an outcome agent on a streaming model answering "The colour of the sky is blue today"
    When the outcome agent is streamed synchronously with "What colour?"
    Then the sync stream yielded more than 3 text chunks that join to "The colour of the sky is blue today"
    And the last sync stream chunk carries the report with stop_reason "answer"

  Scenario: A failed request raises RunFailed with the partial report and the conversation
    Given an outcome agent with the script:
      | reply                             |
      | call lookup {"key": "colour"}     |
      | raise: upstream connection reset  |
    When the outcome agent is invoked with "What colour?" expecting RunFailed
    Then the RunFailed report says stop_reason "failed" after 1 steps with 1 tool calls
    And the RunFailed report's error contains "failed at step 2"
    And the RunFailed report's elapsed_s is a number
    And the RunFailed messages end with the tool result "value of colour"

  Scenario: A result cut by the per-result cap keeps its size before the cut
    Given an outcome agent with tool_result_max_chars 500 and the script:
      | reply                             |
      | call bulky {"size": 5000}         |
      | Done.                             |
    When the outcome agent is invoked with "Read the bulky thing"
    Then outcome tool call 1 has fate "cut" with cut_from equal to its chars_raw and chars_out at most 500

  Scenario: A result trimmed from a later request's view is marked trimmed at that step
    Given an outcome agent with a 2000-token window, trim_keep_steps 1 and the script:
      | reply                             |
      | call bulky {"size": 2600}         |
      | call bulky {"size": 2610}         |
      | call bulky {"size": 2620}         |
      | Done.                             |
    When the outcome agent is invoked with "Read them all"
    Then outcome tool call 1 has fate "trimmed" at a later step than 1
    And outcome tool call 3 was not trimmed, since the request fits without it
    And the outcome report counts as many trimmed results as calls with fate "trimmed"

  Scenario: A failed call and a repeated call have their own fates
    Given an outcome agent with the script:
      | reply                             |
      | call explode {"reason": "disk"}   |
      | call lookup {"key": "colour"}     |
      | call lookup {"key": "colour"}     |
      | Blue.                             |
    When the outcome agent is invoked with "What colour?"
    Then outcome tool call 1 has fate "failed"
    And outcome tool call 2 has fate "kept"
    And outcome tool call 3 has fate "repeat"
