Feature: astream shows the answer as it arrives, never part of a tool call
  `LLMAgent.astream` yields text chunks of every reply as the model streams it, holding
  back anything that could be the start of a call marker, then one last chunk without
  text that carries the run report. The model here really streams: each reply arrives in
  small pieces, so the hold-back is exercised at every boundary. In the tables
  `[call name {json}]` is a ```tool block and `\n` a newline.

  Scenario Outline: Prose before a text-mode call streams, the call never does (<piece>-character pieces)
    Given a text-mode stream agent with tool_mode "text" in <piece>-character pieces replying:
      | reply                                                 |
      | Let me look that up.\n[call lookup {"key": "colour"}] |
      | The colour is blue.                                   |
    When the text-mode stream is read for "What colour?"
    Then the text-mode stream shows "Let me look that up." before the answer
    And no text-mode stream chunk holds any part of a call
    And the text-mode stream text is exactly "Let me look that up.\nThe colour is blue."
    And the last text-mode stream chunk has no text and carries a report with stop_reason "answer"
    And the text-mode tool "lookup" received {"key": "colour"}

    Examples:
      | piece |
      | 1     |
      | 2     |
      | 3     |
      | 7     |
      | 500   |

  Scenario: A reply that is only a call yields no text; the answer streams in full
    Given a text-mode stream agent with tool_mode "text" in 2-character pieces replying:
      | reply                                              |
      | [call lookup {"key": "colour"}]                    |
      | The colour is blue, as the lookup table says.      |
    When the text-mode stream is read for "What colour?"
    Then the text-mode stream text is exactly "The colour is blue, as the lookup table says."
    And the text-mode stream came in more than 5 text chunks
    And the last text-mode stream chunk has no text and carries a report with stop_reason "answer"

  Scenario: Without intermediate prose the streamed text is the invoke answer
    Given a text-mode stream agent with tool_mode "text" in 4-character pieces replying:
      | reply                                                      |
      | [call lookup {"key": "a"}]                                 |
      | [call lookup {"key": "b"}]                                 |
      | Both keys are known: a and b. Nothing is left to do.       |
    When the text-mode stream is read for "Look up a and b"
    And the same text-mode script is invoked for "Look up a and b"
    Then the text-mode stream text equals the invoked answer
    And the text-mode stream came in more than 5 text chunks

  Scenario: Answer text that only looks like a call marker is streamed in full
    Given a text-mode stream agent with tool_mode "text" in 3-character pieces replying:
      | reply                                                                  |
      | The data:\n```json\n{"colour": "blue"}\n```\nand `{x}` in code.        |
    When the text-mode stream is read for "What colour?"
    And the same text-mode script is invoked for "What colour?"
    Then the text-mode stream text equals the invoked answer
    And the text-mode stream text is exactly "The data:\n```json\n{"colour": "blue"}\n```\nand `{x}` in code."

  Scenario: A native call streamed after prose shows the prose only
    Given a text-mode stream agent with tool_mode "auto" in 3-character pieces replying:
      | reply                              |
      | native lookup {"key": "colour"}    |
      | The colour is blue.                |
    When the text-mode stream is read for "What colour?"
    Then the text-mode stream text is exactly "The colour is blue."
    And the last text-mode stream chunk has no text and carries a report with stop_reason "answer"
    And the text-mode tool "lookup" received {"key": "colour"}

  Scenario: The composed answer after max_rounds is streamed too
    Given a text-mode stream agent with tool_mode "text" and max_rounds 1 in 3-character pieces replying:
      | reply                           |
      | [call lookup {"key": "a"}]      |
      | [call lookup {"key": "b"}]      |
    When the text-mode stream is read for "Look up a and b"
    And the same text-mode script is invoked for "Look up a and b"
    Then the text-mode stream text equals the invoked answer
    And the text-mode stream ends with "Tools that ran: lookup."
    And the last text-mode stream chunk has no text and carries a report with stop_reason "max_rounds"

  Scenario: Prose before a call on the final request is streamed once
    Given a text-mode stream agent with tool_mode "text" and max_rounds 1 in 3-character pieces replying:
      | reply                                           |
      | [call lookup {"key": "a"}]                      |
      | I still need b.\n[call lookup {"key": "b"}]     |
    When the text-mode stream is read for "Look up a and b"
    Then the text-mode stream shows "I still need b." exactly once
    And no text-mode stream chunk holds any part of a call
    And the last text-mode stream chunk has no text and carries a report with stop_reason "max_rounds"
