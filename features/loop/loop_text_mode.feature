Feature: The agent loop speaks the text tool protocol end to end
  With `tool_mode: text` the tools are listed in the system prompt instead of bound, the
  model calls them with ```tool blocks, and results come back as marked user turns. `auto`
  uses text for models that cannot bind tools, and switches to it when the server refuses
  the tools field before any tool ran. Native replies that write a call as text still run
  it; a broken call costs one step; a final request refused for its tool history is
  retried once with that history flattened. In the tables `[call name {json}]` is the
  ```tool block the prompt asks for and `\n` a newline.

  Background:
    Given every agent has tools "lookup"

  Scenario: A text-mode run lists the tools, runs a ```tool call and answers
    Given an agent with tool_mode "text", system_prompt "Answer briefly." and the script:
      | reply                                          |
      | Let me check.\n[call lookup {"key": "colour"}] |
      | The colour is blue.                            |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And the report says tool_mode "text" and stop_reason "answer"
    And the tool "lookup" received {"key": "colour"}
    And request 1 offered no tools
    And request 1 has a system message starting "Answer briefly."
    And request 1 has a system message containing "- lookup {key, limit?}: Look up a key in the test table."
    And request 1 has a system message that asks for ```tool blocks
    And request 1 has a system message saying tool results are data
    And request 2 offered no tools
    And request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"
    And the run emitted no tool-mode change

  Scenario: Several ```tool blocks in one reply run and come back in one user turn
    Given an agent with tool_mode "text" and the script:
      | reply                                                              |
      | [call lookup {"key": "a"}]\n[call lookup {"key": "b", "limit": 5}] |
      | a and b are known.                                                 |
    When the agent is asked "Look up a and b"
    Then the answer is "a and b are known."
    And the tool "lookup" received {"key": "a"} then {"key": "b", "limit": 5}
    And request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of a\n</tool_result>\n\n<tool_result name="lookup">\nvalue of b\n</tool_result>"

  Scenario: auto mode uses text for a model that cannot bind tools
    Given an agent with bind_tools false, tool_mode "auto" and the script:
      | reply                           |
      | [call lookup {"key": "colour"}] |
      | The colour is blue.             |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And the report says tool_mode "text" and stop_reason "answer"
    And the tool "lookup" received {"key": "colour"}
    And request 1 has a system message containing "- lookup {key, limit?}"
    And request 1 has a system message saying tool results are data
    And request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"
    And the run emitted no tool-mode change

  Scenario: auto mode uses text for a model whose bind_tools raises NotImplementedError
    Given an agent with bind_tools "raises", tool_mode "auto" and the script:
      | reply                           |
      | [call lookup {"key": "colour"}] |
      | The colour is blue.             |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And the report says tool_mode "text" and stop_reason "answer"
    And the tool "lookup" received {"key": "colour"}

  Scenario: auto mode with a model that binds tools stays native
    Given an agent with tool_mode "auto" and the script:
      | reply                         |
      | call lookup {"key": "colour"} |
      | The colour is blue.           |
    When the agent is asked "What colour?"
    Then the report says tool_mode "native" and stop_reason "answer"
    And request 1 offered the tools "lookup"
    And request 1 has a system message that lists no tools
    And request 1 has a system message saying tool results are data
    And request 2 pairs a ToolMessage "value of colour" with a native call of "lookup"

  Scenario Outline: A server that refuses the tools field makes auto mode fall back to text (<server>)
    Given an agent with tool_mode "auto" and the script:
      | reply                           |
      | refuse <server>                 |
      | [call lookup {"key": "colour"}] |
      | The colour is blue.             |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And the report says tool_mode "text" and stop_reason "answer"
    And the report has an event mentioning "step 1: server refused tools; switched to text mode"
    And the run emitted one tool-mode change from "native" to "text"
    And a warning says "switching to text mode"
    And the model received 3 requests
    And request 1 offered the tools "lookup"
    And request 2 offered no tools
    And request 2 has a system message containing "- lookup {key, limit?}"
    And request 2 has a system message saying tool results are data
    And request 3 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"

    # The errors are built as the openai 3.x client builds them: "Error code: <status> -
    # <message>". Only the Ollama row passes today: leanloop.modes.is_tools_refusal
    # accepts status 400 only (llama-server without --jinja answers 500) and its pattern
    # has no "requires" (llama.cpp's and vLLM's wording).
    Examples: refusals as servers send them
      | server                                   |
      | tools as the scripted server does        |
      | tools as Ollama does                     |
      | tools as llama-server without jinja does |
      | tools as vLLM without a tool parser does |

  Scenario: A request naming a workspace file still falls back to text
    The loop reads files named in the request before the first step (prefetch); those
    reads must not count as "a tool already ran", and they must reach the text-mode
    request as text results, not as native tool messages.
    Given a workspace with "notes.txt" containing "The launch code is 4711."
    And an agent with tools "read_file", tool_mode "auto" and the script:
      | reply                       |
      | refuse tools as Ollama does |
      | The launch code is 4711.    |
    When the agent is asked "What is the launch code in notes.txt?"
    Then the answer is "The launch code is 4711."
    And the report says tool_mode "text" and stop_reason "answer"
    And the report lists a read_file call of "notes.txt" at step 0
    And the run emitted one tool-mode change from "native" to "text"
    And request 2 offered no tools
    And request 2 carries no ToolMessage and no native call
    And request 2 has a user turn containing "<tool_result name="read_file">"

  Scenario: native mode does not fall back: the refusal fails the run
    Given an agent with tool_mode "native" and the script:
      | reply                                    |
      | refuse tools as the scripted server does |
      | The colour is blue.                      |
    When the agent is asked "What colour?" and the run fails
    Then the run failed with a leanloop ModelError mentioning "tools param requires --jinja flag"
    And the failure's report says tool_mode "native" after 0 steps
    And the model received 1 requests
    And the run emitted no tool-mode change
    And no tool ran

  Scenario: auto mode does not fall back for an error that is not about tools
    Given an agent with tool_mode "auto" and the script:
      | reply               |
      | refuse the request  |
      | The colour is blue. |
    When the agent is asked "What colour?" and the run fails
    Then the run failed with a leanloop ModelError mentioning "'temperature' must be between 0 and 2"
    And the failure's report says tool_mode "native" after 0 steps
    And the model received 1 requests

  Scenario: A native reply that writes its call as text runs it and pairs the result
    Given an agent with tool_mode "native" and the script:
      | reply                                         |
      | I will look.\n[call lookup {"key": "colour"}] |
      | The colour is blue.                           |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And the report says tool_mode "native" and stop_reason "answer"
    And the tool "lookup" received {"key": "colour"}
    And request 2 pairs a ToolMessage "value of colour" with a native call of "lookup"
    And request 2 keeps only "I will look." as the text of the call's reply

  Scenario: A broken call gets a one-line correction and the loop goes on
    Given an agent with tool_mode "text" and the script:
      | reply                                                    |
      | ```tool\n{"name": "lookup", "arguments": {"key": }}\n``` |
      | [call lookup {"key": "colour"}]                          |
      | The colour is blue.                                      |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And the tool "lookup" received {"key": "colour"}
    And request 2 ends with a one-line marked correction mentioning "Write it as a ```tool block"
    And request 2 ends with a one-line marked correction mentioning "Your tool call could not be read"
    And request 2 ends with a one-line marked correction mentioning "{"name": "lookup", "arguments": {"key": "example"}}"
    And request 3 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"

  Scenario: A final request refused for its tool history is retried once, flattened
    Given an agent with tool_mode "native", max_rounds 1 and the script:
      | reply                         |
      | call lookup {"key": "colour"} |
      | refuse tool history           |
      | The colour is blue.           |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And the report says tool_mode "native" and stop_reason "max_rounds"
    And the model received 3 requests
    And request 2 pairs a ToolMessage "value of colour" with a native call of "lookup"
    And request 3 offered no tools
    And request 3 carries no ToolMessage and no native call
    And request 3 has a user turn containing "<tool_result name="lookup">\nvalue of colour\n</tool_result>"
    And request 3 ends with the final-answer prompt

  Scenario: The flattened retry is the only one: a second refusal fails the run
    Given an agent with tool_mode "native", max_rounds 1 and the script:
      | reply                         |
      | call lookup {"key": "colour"} |
      | refuse tool history           |
      | refuse tool history           |
      | The colour is blue.           |
    When the agent is asked "What colour?" and the run fails
    Then the run failed with a leanloop ModelError mentioning "messages with role 'tool' are not supported"
    And the model received 3 requests

  Scenario: A call written on the final request is not run
    Given an agent with tool_mode "text", max_rounds 1 and the script:
      | reply                                       |
      | [call lookup {"key": "a"}]                  |
      | I still need b.\n[call lookup {"key": "b"}] |
    When the agent is asked "Look up a and b"
    Then the answer is "I still need b."
    And the tool "lookup" received {"key": "a"}
    And the report says tool_mode "text" and stop_reason "max_rounds"
    And request 2 offered no tools
    And request 2 ends with the final-answer prompt
    And request 1 has a system message containing "- lookup {key, limit?}"
    And request 2 has a system message that lists no tools
    And request 2 has a system message saying tool results are data

  Scenario: A final text-mode reply that is only a call gets the composed answer
    Given an agent with tool_mode "text", max_rounds 1 and the script:
      | reply                      |
      | [call lookup {"key": "a"}] |
      | [call lookup {"key": "b"}] |
    When the agent is asked "Look up a and b"
    Then the answer mentions "could not finish"
    And the answer mentions "it used all its rounds before the model answered"
    And the answer mentions "What was read: lookup(key=a)."
    And the tool "lookup" received {"key": "a"}

  Scenario: A small model in text mode gets answer turns after results, as the embedded template does
    Given an agent with tool_mode "text", prompt_profile "small" and the script:
      | reply                           |
      | [call lookup {"key": "colour"}] |
      | The colour is blue.             |
    When the agent is asked "What colour?"
    Then the answer is "The colour is blue."
    And request 1 has a system message containing "- lookup {key, limit?}"
    And request 2 has a system message that lists no tools
    And request 2 has a system message saying tool results are data
    And request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>\n\nAnswer my question in plain text using these results: What colour?"

  Scenario: The default profile keeps the tool list after results in text mode
    Given an agent with tool_mode "text", prompt_profile "default" and the script:
      | reply                           |
      | [call lookup {"key": "colour"}] |
      | The colour is blue.             |
    When the agent is asked "What colour?"
    Then request 2 has a system message containing "- lookup {key, limit?}"
    And request 2 ends with a marked user turn "<tool_result name="lookup">\nvalue of colour\n</tool_result>"

  Scenario: A small model's final request restates the question
    Given an agent with tool_mode "text", prompt_profile "small", max_rounds 1 and the script:
      | reply                      |
      | [call lookup {"key": "a"}] |
      | a is known.                |
    When the agent is asked "Look up a and b"
    Then the answer is "a is known."
    And request 2 has a user turn containing "answer in one or two sentences: Look up a and b"

  Scenario: The final request leaves out rounds made only of repeated calls
    Given an agent with tool_mode "text", max_repeated_calls 2 and the script:
      | reply                      |
      | [call lookup {"key": "a"}] |
      | [call lookup {"key": "a"}] |
      | [call lookup {"key": "a"}] |
      | a is known.                |
    When the agent is asked "Look up a"
    Then the answer is "a is known."
    And the report says tool_mode "text" and stop_reason "repeated_calls"
    And request 3 carries 2 model replies
    And request 4 ends with the final-answer prompt
    And request 4 carries 1 model replies
