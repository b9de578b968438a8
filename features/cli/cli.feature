Feature: The leanloop command line
  `leanloop validate` and `leanloop run` work on an agents file; user mistakes are one
  located line each and exit 2, a failed run exits 1, and nothing prints a traceback.

  Background:
    Given a CLI workspace file "notes.txt" containing "The launch code is 4711."
    And a CLI agents file "agents.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
          kwargs:
            replies:
              - tool_calls: [{name: read_file, args: {path: notes.txt}}]
              - The launch code is 4711.
      agents:
        reader:
          model: scripted
          tools: [read_file]
          workspace: ./ws
      """

  Scenario: validate reports the agents of a good file
    When the CLI runs "validate agents.yaml"
    Then the CLI exits with 0
    And the CLI stdout is "ok: 1 agent (reader)"

  Scenario: run answers with a read_file round trip and a line per step
    When the CLI runs "run agents.yaml 'What is the launch code?'"
    Then the CLI exits with 0
    And the CLI stdout is "The launch code is 4711."
    And the CLI stderr has the line "step 1 · read_file(path=notes.txt) · "

  Scenario: run --json prints the run report
    When the CLI runs "run agents.yaml --json 'What is the launch code?'"
    Then the CLI exits with 0
    And the CLI JSON output has answer "The launch code is 4711." and stop_reason "answer"
    And the CLI JSON output lists the tool call "read_file" with args {"path": "notes.txt"}

  Scenario: validate reports five mistakes, each located, without a traceback
    Given a CLI agents file "broken.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: missing_model
          tools: [read_file, no_such_tool]
          max_rounds: 0
          token_budget_percent: 1.5
          workspace: ./nowhere
      """
    When the CLI runs "validate broken.yaml"
    Then the CLI exits with 2
    And the CLI stderr has 5 located errors in "broken.yaml"
    And the CLI stderr has no traceback

  Scenario: A YAML syntax error is one located line
    Given a CLI agents file "syntax.yaml" with:
      """
      version: 1
      agents:
        reader: [unclosed
      """
    When the CLI runs "validate syntax.yaml"
    Then the CLI exits with 2
    And the CLI stderr has 1 located errors in "syntax.yaml"
    And the CLI stderr has no traceback

  Scenario: Naming an agent that does not exist is bad input
    When the CLI runs "run agents.yaml --agent writer 'hi'"
    Then the CLI exits with 2
    And the CLI stderr mentions "no agent named 'writer'"

  Scenario: A model failure makes the run fail with exit 1
    Given a CLI agents file "failing.yaml" with:
      """
      version: 1
      agents:
        reader:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs: {replies: [{raise: server exploded}]}
      """
    When the CLI runs "run failing.yaml 'hi'"
    Then the CLI exits with 1
    And the CLI stderr mentions "server exploded"
    And the CLI stderr has no traceback

  Scenario: A missing file is bad input
    When the CLI runs "validate nothing-here.yaml"
    Then the CLI exits with 2
    And the CLI stderr mentions "nothing-here.yaml"
    And the CLI stderr has no traceback
