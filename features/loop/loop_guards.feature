Feature: Guards for small models: repeated calls, files named in the request, first tool choice
  A small model repeats calls, never opens the file the user named, or answers without
  looking. The loop answers repeats from memory, reads named files up front, can require
  a first tool call, and gives small models shorter, more directive instructions.

  Background:
    Given a workspace with "notes.txt" containing "The launch code is 4711."
    And the workspace has "config/app.yaml" containing "port: 8125"
    And every agent has tools "read_file"

  Scenario: An identical call is answered with a reminder instead of running again
    Given an agent with the script:
      | reply                                |
      | call read_file {"path": "notes.txt"} |
      | call read_file {"path": "notes.txt"} |
      | The code is 4711.                    |
    When the agent is asked "What is in the notes?"
    Then the answer is "The code is 4711."
    And request 3 has a tool result containing "already called at step 1"
    And the report counts 1 repeated calls and 2 tool calls, the second marked repeated

  Scenario: A failed call repeated is not run again, and the reminder says it failed
    Given an agent with the script:
      | reply                                  |
      | call read_file {"path": "missing.txt"} |
      | call read_file {"path": "missing.txt"} |
      | I could not find it.                   |
    When the agent is asked "What is in the notes?"
    Then request 3 has a tool result containing "and it failed: 'error: no such file: missing.txt"
    And the report counts 1 repeated calls and 2 tool calls, the second marked repeated

  Scenario: Two identical calls in one reply run once
    Given an agent with the script:
      | reply                                                                 |
      | call read_file {"path": "notes.txt"}; read_file {"path": "notes.txt"} |
      | The code is 4711.                                                     |
    When the agent is asked "What is in the notes?"
    Then request 2 has a tool result containing "(in this very reply)"
    And the report counts 1 repeated calls and 2 tool calls, the second marked repeated

  Scenario: Repeating the same call rounds in a row ends the run with a final answer
    Given an agent with max_repeated_calls 2 and the script:
      | reply                                |
      | call read_file {"path": "notes.txt"} |
      | call read_file {"path": "notes.txt"} |
      | call read_file {"path": "notes.txt"} |
      | The notes hold a launch code.        |
    When the agent is asked "What is in the notes?"
    Then the answer is "The notes hold a launch code."
    And the report says stop_reason "repeated_calls" after 4 steps
    And request 4 offered no tools

  Scenario: A deliberate re-read after the file changed runs again
    Given an agent with the script:
      | reply                                                                                        |
      | call read_file {"path": "notes.txt"}                                                         |
      | change notes.txt to "The launch code is now 9000." then call read_file {"path": "notes.txt"} |
      | The code changed to 9000.                                                                    |
    When the agent is asked "Watch the notes"
    Then request 3 has a tool result containing "The launch code is now 9000."
    And the report counts 0 repeated calls and 2 tool calls, the second marked new

  Scenario: Files named in the request are read before the first model call
    Given an agent with the script:
      | reply             |
      | The code is 4711. |
    When the agent is asked "What does notes.txt say, and which port is in app.yaml?"
    Then request 1 already carries read_file results for "notes.txt, config/app.yaml"
    And the report lists the prefetched files "notes.txt, config/app.yaml"

  Scenario: Paths outside the workspace are never prefetched
    Given an agent with the script:
      | reply         |
      | Nothing read. |
    When the agent is asked "Show me ../secret.txt and /etc/passwd"
    Then request 1 carries no tool results
    And the report lists no prefetched files

  Scenario Outline: Which words of a request name workspace files
    Given the workspace has "Makefile" containing "test: pytest"
    And the workspace has ".env.example" containing "REGION=eu-west-3"
    Then the request "<request>" names the workspace files "<files>"

    Examples:
      | request                                  | files                      |
      | What does notes.txt say?                 | notes.txt                  |
      | Which port is in app.yaml?               | config/app.yaml            |
      | Compare config/app.yaml and notes.txt.   | config/app.yaml, notes.txt |
      | What does the Makefile run?              | Makefile                   |
      | Which region does .env.example set?      | .env.example               |
      | Which region does `.env.example` set?    | .env.example               |
      | What does the makefile run?              | none                       |
      | What Is Written Here About Launch Codes? | none                       |
      | Read ../secret.txt or /etc/passwd        | none                       |

  Scenario: Prefetching can be turned off
    Given an agent with prefetch_mentioned_files false and the script:
      | reply              |
      | I did not read it. |
    When the agent is asked "What does notes.txt say?"
    Then request 1 carries no tool results

  Scenario: first_tool_choice required applies to the first request only
    Given an agent with first_tool_choice "required" and the script:
      | reply                                |
      | call read_file {"path": "notes.txt"} |
      | The code is 4711.                    |
    When the agent is asked "What is the code?"
    Then request 1 asked for tool_choice "required"
    And request 2 asked for no tool_choice

  Scenario: A small model gets the small profile's directive instructions
    Given an agent with model "qwen2.5-coder-0.5b-instruct", max_rounds 1, prefetch_mentioned_files false and the script:
      | reply                                |
      | call read_file {"path": "notes.txt"} |
      | The code is 4711.                    |
    When the agent is asked "What is the code?"
    Then the report uses the prompt profile "small"
    And request 1 has a system message containing "When the question names a file, read that exact file"
    And request 2 ends with a human message starting "Stop calling tools."

  Scenario: A large model keeps the default instructions
    Given an agent with model "gpt-4o", max_rounds 1, prefetch_mentioned_files false and the script:
      | reply                                |
      | call read_file {"path": "notes.txt"} |
      | The code is 4711.                    |
    When the agent is asked "What is the code?"
    Then the report uses the prompt profile "default"
    And request 2 ends with a human message starting "You are out of tool calls"

  # Every agent builds its workspace tools from the spec, as `from_file` does: the path
  # help and the file-name repair come from the spec's workspace and prompting profile.
  Scenario: A small model's missing path is replaced by the file the request names
    Given an agent with model "qwen2.5-coder-0.5b-instruct", prefetch_mentioned_files false and the script:
      | reply                              |
      | call read_file {"path": "app.yml"} |
      | The port is 8125.                  |
    When the agent is asked "Which port is set in config/app.yaml?"
    Then request 2 has a tool result containing "read "config/app.yaml" (named in the request) instead"
    And request 2 has a tool result containing "port: 8125"
    And the report counts 1 repaired calls, call 1 repaired from nothing

  Scenario: A large model's missing path gets help but no substitute
    Given an agent with model "gpt-4o", prefetch_mentioned_files false and the script:
      | reply                              |
      | call read_file {"path": "app.yml"} |
      | I could not find it.               |
    When the agent is asked "Which port is set in config/app.yaml?"
    Then request 2 has a tool result containing "no such file: app.yml"
    And request 2 has a tool result containing "named in the request: config/app.yaml"
    And the report counts 0 repaired calls, call 1 repaired from nothing

  Scenario: repair_paths false keeps a small model's missing path an error
    Given an agent with model "qwen2.5-coder-0.5b-instruct", prefetch_mentioned_files false, repair_paths false and the script:
      | reply                              |
      | call read_file {"path": "app.yml"} |
      | I could not find it.               |
    When the agent is asked "Which port is set in config/app.yaml?"
    Then request 2 has a tool result containing "no such file: app.yml"
    And the report counts 0 repaired calls, call 1 repaired from nothing

  Scenario: A file name used as a tool name is read with read_file
    Given an agent with model "gpt-4o", prefetch_mentioned_files false and the script:
      | reply             |
      | call notes.txt {} |
      | The code is 4711. |
    When the agent is asked "What is the launch code?"
    Then request 2 has a tool result containing "The launch code is 4711."
    And the report counts 1 repaired calls, call 1 repaired from "notes.txt"
