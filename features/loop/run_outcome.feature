Feature: A run says how it ended and what it did to each tool result
  The answer carries the usage of the whole run, sync streaming yields the answer as
  the model writes it, a failed run keeps its partial report and conversation, and the
  report gives every tool result its fate (kept, cut, trimmed, pruned, failed, repeat).

  Background:
    Given every agent has tools "lookup, bulky, huge, explode"

  Scenario: The answer's usage_metadata adds up every request of the run
    Given an agent with report_usage true and the script:
      | reply                         |
      | call lookup {"key": "colour"} |
      | call lookup {"key": "size"}   |
      | Blue and large.               |
    When the agent is asked "What colour and size?"
    Then the report lists 3 model requests
    And the answer's usage_metadata is the sum of the report's requests

  Scenario: Sync stream() yields the answer in several chunks, then the report
    Given an agent with stream_pieces 4 and the script:
      | reply                                |
      | The colour of the sky is blue today. |
    When the agent is asked "What colour?" through stream
    Then the stream came in more than 3 text chunks
    And the streamed text is exactly "The colour of the sky is blue today."
    And the last stream chunk has no text and carries a report with stop_reason "answer"

  Scenario: A failed request raises RunFailed with the partial report and the conversation
    Given an agent with the script:
      | reply                          |
      | call lookup {"key": "colour"}  |
      | raise upstream connection reset |
    When the agent is asked "What colour?" and the run fails
    Then the failure's report has 1 steps and 1 tool calls
    And the failure is a RunFailed whose report says stop_reason "failed" and "failed at step 2"
    And the failure's conversation ends with the tool result "value of colour"

  Scenario: A result cut by the per-result cap keeps its size before the cut
    Given an agent with tool_result_max_chars 500 and the script:
      | reply                      |
      | call huge {"key": "rows"}  |
      | Done.                      |
    When the agent is asked "Read the huge thing"
    Then report call 1 has fate "cut" with cut_from equal to its chars_raw and chars_out at most 500

  Scenario: The newest result is not trimmed while the request fits without trimming it
    Given an agent with window 2000, trim_keep_steps 1 and the script:
      | reply                      |
      | call bulky {"key": "a"}    |
      | call bulky {"key": "b"}    |
      | call bulky {"key": "c"}    |
      | call bulky {"key": "d"}    |
      | Done.                      |
    When the agent is asked "Read them all"
    Then report call 1 has fate "trimmed"
    And report call 1 was trimmed at a later step than 1
    And report call 4 was not trimmed, and every request fitted its ceiling
    And the report counts as many trimmed results as calls with fate "trimmed"

  Scenario: A failed call and a repeated call have their own fates
    Given an agent with the script:
      | reply                           |
      | call explode {"reason": "disk"} |
      | call lookup {"key": "colour"}   |
      | call lookup {"key": "colour"}   |
      | Blue.                           |
    When the agent is asked "What colour?"
    Then report call 1 has fate "failed"
    And report call 2 has fate "kept"
    And report call 3 has fate "repeat"
