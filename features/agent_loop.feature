Feature: The agent loop runs tools and ends with an honest answer
  The loop asks the model, runs the calls it makes (concurrently, at most a limit per
  reply), keeps every call with its result, and ends with a text answer: the model's own,
  or a final tool-less request when the rounds run out.

  Scenario: A tool round trip ends with the model's answer
    Given a loop agent with the lookup tool and the script:
      | reply                                              |
      | call lookup {"key": "colour"}                      |
      | The colour is blue.                                |
    When the loop agent is asked "What colour?"
    Then the loop answer is "The colour is blue."
    And the loop report says stop_reason "answer" after 1 steps
    And the loop tool "lookup" received {"key": "colour"}
    And loop request 2 ends with a tool result "value of colour" paired with the call of request 1
    And loop request 1 offered the tools "lookup"

  Scenario: Calls of one reply run concurrently
    Given a loop agent with the barrier tool expecting 3 parallel calls and the script:
      | reply                                                                                                       |
      | call wait_for_peers {"label": "a"}; wait_for_peers {"label": "b"}; wait_for_peers {"label": "c"} |
      | All three finished.                                                                                         |
    When the loop agent is asked "Run them"
    Then the loop answer is "All three finished."
    And loop request 2 carries 3 tool results in call order "done a, done b, done c"

  Scenario: A reply with more calls than the fan-out limit runs only the limit
    Given a loop agent with the lookup tool, max_parallel_tools 2 and the script:
      | reply                                                                    |
      | call lookup {"key": "a"}; lookup {"key": "b"}; lookup {"key": "c"}      |
      | Done.                                                                    |
    When the loop agent is asked "Look up three"
    Then the loop tool "lookup" ran 2 times
    And loop request 2 carries 3 tool results
    And loop request 2 has a tool result containing "at most 2 tool calls are run from one reply"
    And the loop report lists 2 tool calls

  Scenario: Running out of rounds ends with a final request without tools
    Given a loop agent with the lookup tool, max_rounds 2 and the script:
      | reply                          |
      | call lookup {"key": "a"}       |
      | call lookup {"key": "b"}       |
      | I found the values of a and b. |
    When the loop agent is asked "Keep looking"
    Then the loop answer is "I found the values of a and b."
    And the loop report says stop_reason "max_rounds" after 2 steps
    And loop request 3 offered no tools
    And loop request 3 ends with the final-answer prompt

  Scenario: A call written on the final request is never run
    Given a loop agent with the lookup tool, max_rounds 1 and the script:
      | reply                      |
      | call lookup {"key": "a"}   |
      | call lookup {"key": "b"}   |
    When the loop agent is asked "Keep looking"
    Then the loop tool "lookup" ran 1 times
    And the loop answer mentions "could not finish"
    And the loop report says stop_reason "max_rounds" after 1 steps

  Scenario: A failing tool becomes a message and the run goes on
    Given a loop agent with the failing tool and the script:
      | reply                                   |
      | call explode {"reason": "disk full"}    |
      | The tool failed, so I cannot tell.      |
    When the loop agent is asked "Try it"
    Then the loop answer is "The tool failed, so I cannot tell."
    And loop request 2 has a tool result containing "error: RuntimeError: it broke: disk full"

  Scenario: A failing request rolls the step back and raises a leanloop error
    Given a loop agent with the lookup tool and the script:
      | reply                         |
      | call lookup {"key": "a"}      |
      | raise connection reset by peer |
    When the loop agent is asked "Look it up" and the run fails
    Then the loop failure is a leanloop ModelError mentioning "connection reset by peer"
    And the loop failure's report has 1 steps and 1 tool calls
    And the caller's loop messages are unchanged
