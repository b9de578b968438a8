Feature: The agent loop runs tools and ends with an honest answer
  The loop asks the model, runs the calls it makes (concurrently, at most a limit per
  reply), keeps every call with its result, and ends with a text answer: the model's own,
  or a final tool-less request when the rounds run out.

  Scenario: A tool round trip ends with the model's answer
    Given an agent with tools "lookup" and the script:
      | reply                         |
      | call lookup {"key": "colour"} |
      | The colour is blue.           |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And the report says stop_reason "answer" after 2 steps
    And the tool "lookup" received {"key": "colour"}
    And request 2 ends with a tool result "value of colour" paired with the call of request 1
    And request 1 offered the tools "lookup"

  Scenario: Calls of one reply run concurrently
    Given an agent with tools "wait_for_peers", peers 3 and the script:
      | reply                                                                                            |
      | call wait_for_peers {"label": "a"}; wait_for_peers {"label": "b"}; wait_for_peers {"label": "c"} |
      | All three finished.                                                                              |
    When the agent is asked "Run them"
    Then the answer is "All three finished."
    And request 2 carries 3 tool results in call order "done a, done b, done c"

  Scenario: A reply with more calls than the fan-out limit runs only the limit
    Given an agent with tools "lookup", max_parallel_tools 2 and the script:
      | reply                                                              |
      | call lookup {"key": "a"}; lookup {"key": "b"}; lookup {"key": "c"} |
      | Done.                                                              |
    When the agent is asked "Look up three"
    Then the tool "lookup" ran 2 times
    And request 2 carries 3 tool results
    And request 2 has a tool result containing "at most 2 tool calls are run from one reply"
    And the report lists 2 tool calls

  Scenario: Running out of rounds ends with a final request without tools
    Given an agent with tools "lookup", max_rounds 2 and the script:
      | reply                          |
      | call lookup {"key": "a"}       |
      | call lookup {"key": "b"}       |
      | I found the values of a and b. |
    When the agent is asked "Keep looking"
    Then the answer is "I found the values of a and b."
    And the report says stop_reason "max_rounds" after 3 steps
    And request 3 offered no tools
    And request 3 ends with the final-answer prompt

  Scenario: A call written on the final request is never run
    Given an agent with tools "lookup", max_rounds 1 and the script:
      | reply                    |
      | call lookup {"key": "a"} |
      | call lookup {"key": "b"} |
    When the agent is asked "Keep looking"
    Then the tool "lookup" ran 1 times
    And the answer mentions "could not finish"
    And the report says stop_reason "max_rounds" after 2 steps

  Scenario: A failing tool becomes a message and the run goes on
    Given an agent with tools "explode" and the script:
      | reply                                |
      | call explode {"reason": "disk full"} |
      | The tool failed, so I cannot tell.   |
    When the agent is asked "Try it"
    Then the answer is "The tool failed, so I cannot tell."
    And request 2 has a tool result containing "error: RuntimeError: it broke: disk full"

  Scenario: A failing request rolls the step back and raises a leanloop error
    Given an agent with tools "lookup" and the script:
      | reply                          |
      | call lookup {"key": "a"}       |
      | raise connection reset by peer |
    When the agent is asked "Look it up" and the run fails
    Then the run failed with a leanloop ModelError mentioning "connection reset by peer"
    And the failure's report has 1 steps and 1 tool calls
    And the caller's messages are unchanged
