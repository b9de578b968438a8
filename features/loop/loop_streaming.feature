Feature: astream shows the answer as it arrives, never part of a tool call
  `LLMAgent.astream` yields text chunks of every reply as the model streams it, holding
  back anything that could be the start of a call marker, then one last chunk without
  text that carries the run report. The model here really streams: each reply arrives in
  small pieces, so the hold-back is exercised at every boundary. In the tables
  `[call name {json}]` is a ```tool block and `\n` a newline.

  Background:
    Given every agent has tools "lookup"

  Scenario Outline: Prose before a text-mode call streams, the call never does (<piece>-character pieces)
    Given an agent with tool_mode "text", stream_pieces <piece> and the script:
      | reply                                                 |
      | Let me look that up.\n[call lookup {"key": "colour"}] |
      | The colour is blue.                                   |
    When the agent is asked "What colour?" through astream
    Then the stream shows "Let me look that up." before the answer
    And no stream chunk holds any part of a call
    And the streamed text is exactly "Let me look that up.\nThe colour is blue."
    And the last stream chunk has no text and carries a report with stop_reason "answer"
    And the tool "lookup" received {"key": "colour"}

    Examples:
      | piece |
      | 1     |
      | 2     |
      | 3     |
      | 7     |
      | 500   |

  Scenario: A reply that is only a call yields no text; the answer streams in full
    Given an agent with tool_mode "text", stream_pieces 2 and the script:
      | reply                                         |
      | [call lookup {"key": "colour"}]               |
      | The colour is blue, as the lookup table says. |
    When the agent is asked "What colour?" through astream
    Then the streamed text is exactly "The colour is blue, as the lookup table says."
    And the stream came in more than 5 text chunks
    And the last stream chunk has no text and carries a report with stop_reason "answer"

  Scenario: Without intermediate prose the streamed text is the invoke answer
    Given an agent with tool_mode "text", stream_pieces 4 and the script:
      | reply                                                |
      | [call lookup {"key": "a"}]                           |
      | [call lookup {"key": "b"}]                           |
      | Both keys are known: a and b. Nothing is left to do. |
    And a twin agent
    When the agent is asked "Look up a and b" through astream
    And the twin is asked "Look up a and b"
    Then the streamed text equals the twin's answer
    And the stream came in more than 5 text chunks

  Scenario: Answer text that only looks like a call marker is streamed in full
    Given an agent with tool_mode "text", stream_pieces 3 and the script:
      | reply                                                           |
      | The data:\n```json\n{"colour": "blue"}\n```\nand `{x}` in code. |
    And a twin agent
    When the agent is asked "What colour?" through astream
    And the twin is asked "What colour?"
    Then the streamed text equals the twin's answer
    And the streamed text is exactly "The data:\n```json\n{"colour": "blue"}\n```\nand `{x}` in code."

  Scenario: A native call streamed after prose shows the prose only
    Given an agent with tool_mode "auto", stream_pieces 3 and the script:
      | reply                         |
      | call lookup {"key": "colour"} |
      | The colour is blue.           |
    When the agent is asked "What colour?" through astream
    Then the streamed text is exactly "The colour is blue."
    And the last stream chunk has no text and carries a report with stop_reason "answer"
    And the tool "lookup" received {"key": "colour"}

  Scenario: The composed answer after max_rounds is streamed too
    Given an agent with tool_mode "text", max_rounds 1, stream_pieces 3 and the script:
      | reply                      |
      | [call lookup {"key": "a"}] |
      | [call lookup {"key": "b"}] |
    And a twin agent
    When the agent is asked "Look up a and b" through astream
    And the twin is asked "Look up a and b"
    Then the streamed text equals the twin's answer
    And the streamed text ends with "What was read: lookup(key=a)."
    And the last stream chunk has no text and carries a report with stop_reason "max_rounds"

  Scenario: Prose before a call on the final request is streamed once
    Given an agent with tool_mode "text", max_rounds 1, stream_pieces 3 and the script:
      | reply                                       |
      | [call lookup {"key": "a"}]                  |
      | I still need b.\n[call lookup {"key": "b"}] |
    When the agent is asked "Look up a and b" through astream
    Then the stream shows "I still need b." exactly once
    And no stream chunk holds any part of a call
    And the last stream chunk has no text and carries a report with stop_reason "max_rounds"
