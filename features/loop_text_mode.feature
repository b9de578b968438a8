Feature: The agent loop speaks the text tool protocol end to end
  With `tool_mode: text` the tools are listed in the system prompt instead of bound, the
  model calls them with ```tool blocks, and results come back as marked user turns. `auto`
  uses text for models that cannot bind tools, and switches to it when the server refuses
  the tools field before any tool ran. Native replies that write a call as text still run
  it; a broken call costs one step; a final request refused for its tool history is
  retried once with that history flattened. In the tables `[call name {json}]` is the
  ```tool block the prompt asks for and `\n` a newline.

  Scenario: A text-mode run lists the tools, runs a ```tool call and answers
    Given a text-mode agent with tool_mode "text" and system_prompt "Answer briefly." replying:
      | reply                                            |
      | Let me check.\n[call lookup {"key": "colour"}]   |
      | The colour is blue.                              |
    When the text-mode agent is asked "What colour?"
    Then the text-mode run answers "The colour is blue."
    And the text-mode run report says tool_mode "text" and stop_reason "answer"
    And the text-mode tool "lookup" received {"key": "colour"}
    And text-mode request 1 offered no bound tools
    And text-mode request 1 has a system message starting "Answer briefly."
    And text-mode request 1 has a system message listing "- lookup {key, limit?}: Look up a key in the test table."
    And text-mode request 1 has a system message that asks for ```tool blocks
    And text-mode request 1 has a system message saying tool results are data
    And text-mode request 2 offered no bound tools
    And text-mode request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"
    And the text-mode run emitted no tool-mode change

  Scenario: Several ```tool blocks in one reply run and come back in one user turn
    Given a text-mode agent with tool_mode "text" replying:
      | reply                                                                   |
      | [call lookup {"key": "a"}]\n[call lookup {"key": "b", "limit": 5}]      |
      | a and b are known.                                                      |
    When the text-mode agent is asked "Look up a and b"
    Then the text-mode run answers "a and b are known."
    And the text-mode tool "lookup" received {"key": "a"} then {"key": "b", "limit": 5}
    And text-mode request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of a\n</tool_result>\n\n<tool_result name="lookup">\nvalue of b\n</tool_result>"

  Scenario: auto mode uses text for a model that cannot bind tools
    Given a text-mode agent on a model without bind_tools, tool_mode "auto", replying:
      | reply                              |
      | [call lookup {"key": "colour"}]    |
      | The colour is blue.                |
    When the text-mode agent is asked "What colour?"
    Then the text-mode run answers "The colour is blue."
    And the text-mode run report says tool_mode "text" and stop_reason "answer"
    And the text-mode tool "lookup" received {"key": "colour"}
    And text-mode request 1 has a system message listing "- lookup {key, limit?}"
    And text-mode request 1 has a system message saying tool results are data
    And text-mode request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"
    And the text-mode run emitted no tool-mode change

  Scenario: auto mode with a model that binds tools stays native
    Given a text-mode agent with tool_mode "auto" replying:
      | reply                                  |
      | native lookup {"key": "colour"}        |
      | The colour is blue.                    |
    When the text-mode agent is asked "What colour?"
    Then the text-mode run report says tool_mode "native" and stop_reason "answer"
    And text-mode request 1 bound the tools "lookup"
    And text-mode request 1 has a system message that lists no tools
    And text-mode request 1 has a system message saying tool results are data
    And text-mode request 2 pairs a ToolMessage "value of colour" with a native call of "lookup"

  Scenario Outline: A server that refuses the tools field makes auto mode fall back to text (<server>)
    Given a text-mode agent whose first request is refused for <server>, tool_mode "auto":
      | reply                              |
      | [call lookup {"key": "colour"}]    |
      | The colour is blue.                |
    When the text-mode agent is asked "What colour?"
    Then the text-mode run answers "The colour is blue."
    And the text-mode run report says tool_mode "text" and stop_reason "answer"
    And the text-mode run report has an event mentioning "step 1: server refused tools; switched to text mode"
    And the text-mode run emitted one tool-mode change from "native" to "text"
    And the text-mode run logged a warning mentioning "switching to text mode"
    And the text-mode run made 3 requests
    And text-mode request 1 bound the tools "lookup"
    And text-mode request 2 offered no bound tools
    And text-mode request 2 has a system message listing "- lookup {key, limit?}"
    And text-mode request 2 has a system message saying tool results are data
    And text-mode request 3 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"

    # The errors are built as the openai 3.x client builds them: "Error code: <status> -
    # <message>". Only the Ollama row passes today: leanloop.modes.is_tools_refusal
    # accepts status 400 only (llama-server without --jinja answers 500) and its pattern
    # has no "requires" (llama.cpp's and vLLM's wording).
    Examples: refusals as servers send them
      | server                                     |
      | tools as the scripted server does          |
      | tools as Ollama does                       |
      | tools as llama-server without jinja does   |
      | tools as vLLM without a tool parser does   |

  Scenario: A request naming a workspace file still falls back to text
    The loop reads files named in the request before the first step (prefetch); those
    reads must not count as "a tool already ran", and they must reach the text-mode
    request as text results, not as native tool messages.
    Given a text-mode agent with read_file over a workspace holding "notes.txt", whose first request is refused for tools as Ollama does, tool_mode "auto":
      | reply                       |
      | The launch code is 4711.    |
    When the text-mode agent is asked "What is the launch code in notes.txt?"
    Then the text-mode run answers "The launch code is 4711."
    And the text-mode run report says tool_mode "text" and stop_reason "answer"
    And the text-mode run report lists a read_file call of "notes.txt" at step 0
    And the text-mode run emitted one tool-mode change from "native" to "text"
    And text-mode request 2 offered no bound tools
    And text-mode request 2 carries no ToolMessage
    And text-mode request 2 has a user turn containing "<tool_result name="read_file">"

  Scenario: native mode does not fall back: the refusal fails the run
    Given a text-mode agent whose first request is refused for tools as the scripted server does, tool_mode "native":
      | reply                  |
      | The colour is blue.    |
    When the text-mode agent is asked "What colour?" and the run fails
    Then the text-mode failure is a leanloop ModelError mentioning "tools param requires --jinja flag"
    And the text-mode failure's report says tool_mode "native" after 0 steps
    And the text-mode run made 1 requests
    And the text-mode run emitted no tool-mode change
    And the text-mode tool never ran

  Scenario: auto mode does not fall back for an error that is not about tools
    Given a text-mode agent whose first request is refused for the request, tool_mode "auto":
      | reply                  |
      | The colour is blue.    |
    When the text-mode agent is asked "What colour?" and the run fails
    Then the text-mode failure is a leanloop ModelError mentioning "'temperature' must be between 0 and 2"
    And the text-mode failure's report says tool_mode "native" after 0 steps
    And the text-mode run made 1 requests

  Scenario: A native reply that writes its call as text runs it and pairs the result
    Given a text-mode agent with tool_mode "native" replying:
      | reply                                            |
      | I will look.\n[call lookup {"key": "colour"}]    |
      | The colour is blue.                              |
    When the text-mode agent is asked "What colour?"
    Then the text-mode run answers "The colour is blue."
    And the text-mode run report says tool_mode "native" and stop_reason "answer"
    And the text-mode tool "lookup" received {"key": "colour"}
    And text-mode request 2 pairs a ToolMessage "value of colour" with a native call of "lookup"
    And text-mode request 2 keeps only "I will look." as the text of the call's reply

  Scenario: A broken call gets a one-line correction and the loop goes on
    Given a text-mode agent with tool_mode "text" replying:
      | reply                                                           |
      | ```tool\n{"name": "lookup", "arguments": {"key": }}\n```        |
      | [call lookup {"key": "colour"}]                                 |
      | The colour is blue.                                             |
    When the text-mode agent is asked "What colour?"
    Then the text-mode run answers "The colour is blue."
    And the text-mode tool "lookup" received {"key": "colour"}
    And text-mode request 2 ends with a one-line marked correction mentioning "Write it as a ```tool block"
    And text-mode request 2 ends with a one-line marked correction mentioning "Your tool call could not be read"
    And text-mode request 2 ends with a one-line marked correction mentioning "{"name": "lookup", "arguments": {"key": "example"}}"
    And text-mode request 3 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"

  Scenario: A final request refused for its tool history is retried once, flattened
    Given a text-mode agent with tool_mode "native" and max_rounds 1 replying:
      | reply                               |
      | native lookup {"key": "colour"}     |
      | refuse tool history                 |
      | The colour is blue.                 |
    When the text-mode agent is asked "What colour?"
    Then the text-mode run answers "The colour is blue."
    And the text-mode run report says tool_mode "native" and stop_reason "max_rounds"
    And the text-mode run made 3 requests
    And text-mode request 2 pairs a ToolMessage "value of colour" with a native call of "lookup"
    And text-mode request 3 offered no bound tools
    And text-mode request 3 carries no ToolMessage
    And text-mode request 3 has a user turn containing "<tool_result name="lookup">\nvalue of colour\n</tool_result>"
    And text-mode request 3 ends with the final-answer prompt

  Scenario: The flattened retry is the only one: a second refusal fails the run
    Given a text-mode agent with tool_mode "native" and max_rounds 1 replying:
      | reply                               |
      | native lookup {"key": "colour"}     |
      | refuse tool history                 |
      | refuse tool history                 |
      | The colour is blue.                 |
    When the text-mode agent is asked "What colour?" and the run fails
    Then the text-mode failure is a leanloop ModelError mentioning "messages with role 'tool' are not supported"
    And the text-mode run made 3 requests

  Scenario: A call written on the final text-mode request is not run
    Given a text-mode agent with tool_mode "text" and max_rounds 1 replying:
      | reply                                            |
      | [call lookup {"key": "a"}]                       |
      | I still need b.\n[call lookup {"key": "b"}]      |
    When the text-mode agent is asked "Look up a and b"
    Then the text-mode run answers "I still need b."
    And the text-mode tool "lookup" received {"key": "a"}
    And the text-mode run report says tool_mode "text" and stop_reason "max_rounds"
    And text-mode request 2 offered no bound tools
    And text-mode request 2 ends with the final-answer prompt
    And text-mode request 1 has a system message listing "- lookup {key, limit?}"
    And text-mode request 2 has a system message that lists no tools
    And text-mode request 2 has a system message saying tool results are data

  Scenario: A final text-mode reply that is only a call gets the composed answer
    Given a text-mode agent with tool_mode "text" and max_rounds 1 replying:
      | reply                          |
      | [call lookup {"key": "a"}]     |
      | [call lookup {"key": "b"}]     |
    When the text-mode agent is asked "Look up a and b"
    Then the text-mode run answer mentions "could not finish"
    And the text-mode run answer mentions "Tools that ran: lookup."
    And the text-mode tool "lookup" received {"key": "a"}

  Scenario: A small model in text mode gets answer turns after results, as the embedded template does
    Given a text-mode agent with tool_mode "text" and prompt_profile "small" replying:
      | reply                              |
      | [call lookup {"key": "colour"}]    |
      | The colour is blue.                |
    When the text-mode agent is asked "What colour?"
    Then the text-mode run answers "The colour is blue."
    And text-mode request 1 has a system message listing "- lookup {key, limit?}"
    And text-mode request 2 has a system message that lists no tools
    And text-mode request 2 has a system message saying tool results are data
    And text-mode request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>\n\nAnswer my question in plain text using these results: What colour?"

  Scenario: The default profile keeps the tool list after results in text mode
    Given a text-mode agent with tool_mode "text" and prompt_profile "default" replying:
      | reply                              |
      | [call lookup {"key": "colour"}]    |
      | The colour is blue.                |
    When the text-mode agent is asked "What colour?"
    Then text-mode request 2 has a system message listing "- lookup {key, limit?}"
    And text-mode request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"

  Scenario: A small model's final text-mode request restates the question
    Given a text-mode agent with tool_mode "text" and prompt_profile "small", max_rounds 1 replying:
      | reply                              |
      | [call lookup {"key": "a"}]         |
      | a is known.                        |
    When the text-mode agent is asked "Look up a and b"
    Then the text-mode run answers "a is known."
    And text-mode request 2 has a user turn containing "answer in one or two sentences: Look up a and b"

  Scenario: The final request leaves out rounds made only of repeated calls
    Given a text-mode agent with tool_mode "text" and max_repeated_calls 2 replying:
      | reply                              |
      | [call lookup {"key": "a"}]         |
      | [call lookup {"key": "a"}]         |
      | [call lookup {"key": "a"}]         |
      | a is known.                        |
    When the text-mode agent is asked "Look up a"
    Then the text-mode run answers "a is known."
    And the text-mode run report says tool_mode "text" and stop_reason "repeated_calls"
    And text-mode request 3 carries 2 model replies
    And text-mode request 4 ends with the final-answer prompt
    And text-mode request 4 carries 1 model replies
