Feature: Guards for small models: repeated calls, files named in the request, first tool choice
  A small model repeats calls, never opens the file the user named, or answers without
  looking. The loop answers repeats from memory, reads named files up front, can require
  a first tool call, and gives small models shorter, more directive instructions.

  Background:
    Given a guarded workspace with "notes.txt" containing "The launch code is 4711."
    And the guarded workspace has "config/app.yaml" containing "port: 8125"

  Scenario: An identical call is answered with a reminder instead of running again
    Given a guarded agent with the script:
      | reply                                       |
      | call read_file {"path": "notes.txt"}        |
      | call read_file {"path": "notes.txt"}        |
      | The code is 4711.                           |
    When the guarded agent is asked "What is in the notes?"
    Then the guarded answer is "The code is 4711."
    And guarded request 3 has a tool result containing "already called at step 1"
    And the guarded report counts 1 repeated calls and 2 tool calls, the second marked repeated

  Scenario: A failed call repeated is not run again, and the reminder says it failed
    Given a guarded agent with the script:
      | reply                                       |
      | call read_file {"path": "missing.txt"}      |
      | call read_file {"path": "missing.txt"}      |
      | I could not find it.                        |
    When the guarded agent is asked "What is in the notes?"
    Then guarded request 3 has a tool result containing "and it failed: 'error: no such file: missing.txt"
    And the guarded report counts 1 repeated calls and 2 tool calls, the second marked repeated

  Scenario: Two identical calls in one reply run once
    Given a guarded agent with the script:
      | reply                                                                       |
      | call read_file {"path": "notes.txt"} + call read_file {"path": "notes.txt"} |
      | The code is 4711.                                                           |
    When the guarded agent is asked "What is in the notes?"
    Then guarded request 2 has a tool result containing "(in this very reply)"
    And the guarded report counts 1 repeated calls and 2 tool calls, the second marked repeated

  Scenario: Repeating the same call rounds in a row ends the run with a final answer
    Given a guarded agent with max_repeated_calls 2 and the script:
      | reply                                       |
      | call read_file {"path": "notes.txt"}        |
      | call read_file {"path": "notes.txt"}        |
      | call read_file {"path": "notes.txt"}        |
      | The notes hold a launch code.               |
    When the guarded agent is asked "What is in the notes?"
    Then the guarded answer is "The notes hold a launch code."
    And the guarded report says stop_reason "repeated_calls" after 3 steps
    And guarded request 4 offers no tools

  Scenario: A deliberate re-read after the file changed runs again
    Given a guarded agent with the script:
      | reply                                                   |
      | call read_file {"path": "notes.txt"}                    |
      | change notes.txt to "The launch code is now 9000." then call read_file {"path": "notes.txt"} |
      | The code changed to 9000.                               |
    When the guarded agent is asked "Watch the notes"
    Then guarded request 3 has a tool result containing "The launch code is now 9000."
    And the guarded report counts 0 repeated calls and 2 tool calls, the second marked new

  Scenario: Files named in the request are read before the first model call
    Given a guarded agent with the script:
      | reply                  |
      | The code is 4711.      |
    When the guarded agent is asked "What does notes.txt say, and which port is in app.yaml?"
    Then guarded request 1 already carries read_file results for "notes.txt, config/app.yaml"
    And the guarded report lists the prefetched files "notes.txt, config/app.yaml"

  Scenario: Paths outside the workspace are never prefetched
    Given a guarded agent with the script:
      | reply         |
      | Nothing read. |
    When the guarded agent is asked "Show me ../secret.txt and /etc/passwd"
    Then guarded request 1 carries no tool results
    And the guarded report lists no prefetched files

  Scenario Outline: Which words of a request name workspace files
    Given the guarded workspace has "Makefile" containing "test: pytest"
    And the guarded workspace has ".env.example" containing "REGION=eu-west-3"
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
    Given a guarded agent with prefetch_mentioned_files off and the script:
      | reply                  |
      | I did not read it.     |
    When the guarded agent is asked "What does notes.txt say?"
    Then guarded request 1 carries no tool results

  Scenario: first_tool_choice required applies to the first request only
    Given a guarded agent with first_tool_choice "required" and the script:
      | reply                                   |
      | call read_file {"path": "notes.txt"}    |
      | The code is 4711.                       |
    When the guarded agent is asked "What is the code?"
    Then guarded request 1 asked for tool_choice "required"
    And guarded request 2 asked for no tool_choice

  Scenario: A small model gets the small profile's directive instructions
    Given a guarded agent for the model "qwen2.5-coder-0.5b-instruct" with max_rounds 1 and the script:
      | reply                                  |
      | call read_file {"path": "notes.txt"}   |
      | The code is 4711.                      |
    When the guarded agent is asked "What is the code?"
    Then the guarded report uses the prompt profile "small"
    And guarded request 1 has a system message containing "When the question names a file, read that exact file"
    And guarded request 2 ends with a human message starting "Stop calling tools."

  Scenario: A large model keeps the default instructions
    Given a guarded agent for the model "gpt-4o" with max_rounds 1 and the script:
      | reply                                  |
      | call read_file {"path": "notes.txt"}   |
      | The code is 4711.                      |
    When the guarded agent is asked "What is the code?"
    Then the guarded report uses the prompt profile "default"
    And guarded request 2 ends with a human message starting "You are out of tool calls"

  # The agent below builds its tools from the spec, as `from_file` does: the path help
  # and the file-name repair come from the spec's workspace and prompting profile.
  Scenario: A small model's missing path is replaced by the file the request names
    Given a wired agent for the model "qwen2.5-coder-0.5b-instruct" with the script:
      | reply                                  |
      | call read_file {"path": "app.yml"}     |
      | The port is 8125.                      |
    When the guarded agent is asked "Which port is set in config/app.yaml?"
    Then guarded request 2 has a tool result containing "read "config/app.yaml" (named in the request) instead"
    And guarded request 2 has a tool result containing "port: 8125"
    And the guarded report counts 1 repaired calls, call 1 repaired from nothing

  Scenario: A large model's missing path gets help but no substitute
    Given a wired agent for the model "gpt-4o" with the script:
      | reply                                  |
      | call read_file {"path": "app.yml"}     |
      | I could not find it.                   |
    When the guarded agent is asked "Which port is set in config/app.yaml?"
    Then guarded request 2 has a tool result containing "no such file: app.yml"
    And guarded request 2 has a tool result containing "named in the request: config/app.yaml"
    And the guarded report counts 0 repaired calls, call 1 repaired from nothing

  Scenario: repair_paths false keeps a small model's missing path an error
    Given a wired agent for the model "qwen2.5-coder-0.5b-instruct" with repair_paths off and the script:
      | reply                                  |
      | call read_file {"path": "app.yml"}     |
      | I could not find it.                   |
    When the guarded agent is asked "Which port is set in config/app.yaml?"
    Then guarded request 2 has a tool result containing "no such file: app.yml"
    And the guarded report counts 0 repaired calls, call 1 repaired from nothing

  Scenario: A file name used as a tool name is read with read_file
    Given a wired agent for the model "gpt-4o" with the script:
      | reply                     |
      | call notes.txt {}         |
      | The code is 4711.         |
    When the guarded agent is asked "What is the launch code?"
    Then guarded request 2 has a tool result containing "The launch code is 4711."
    And the guarded report counts 1 repaired calls, call 1 repaired from "notes.txt"
