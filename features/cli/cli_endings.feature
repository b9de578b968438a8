Feature: leanloop run says how a run ended when it did not end with an answer
  Exit 3 is a run that ended otherwise; the line on stderr says what stopped it, in the
  stop reason's own words, and what the text on stdout rests on: the model's last reply
  from what was read, or the ending's words when nothing was (never "composed from what
  was found" when nothing was found). The HTML page says the same. (Issue 37.)

  Background:
    Given a CLI workspace file "notes.txt" containing "The launch code is 4711."

  Scenario: A run whose only call failed prints no guess, exits 3 and says nothing was read
    Given a CLI agents file "agents.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
          kwargs:
            replies:
              - tool_calls: [{name: read_file, args: {path: config/port.toml}}]
              - The service uses port 8080.
      agents:
        reader:
          model: scripted
          tools: [read_file]
          workspace: ./ws
          max_rounds: 1
      """
    When the CLI runs "run agents.yaml --html page.html 'Which port does the service use?'"
    Then the CLI exits with 3
    And the CLI stdout mentions "No tool call returned data, so there is nothing to answer from."
    And the CLI stdout does not mention "8080"
    And the CLI stderr has the line "leanloop: the run ended by max_rounds: it used all its rounds before the model answered; the text says what stopped the run: no tool call returned data"
    And the CLI stderr does not mention "composed from what was found"
    And the page "page.html" says "the text says what stopped the run: no tool call returned data"
    And the page "page.html" does not say "composed from what was found"

  Scenario: The question written back exits 3 as no_answer, and --json keeps the reply set aside
    Given a CLI agents file "agents.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
          kwargs:
            replies:
              - tool_calls: [{name: read_file, args: {path: notes.txt}}]
              - What is the launch code?
      agents:
        reader:
          model: scripted
          tools: [read_file]
          workspace: ./ws
      """
    When the CLI runs "run agents.yaml --json 'What is the launch code?'"
    Then the CLI exits with 3
    And the CLI JSON output has stop_reason "no_answer", set_aside "What is the launch code?" and rests_on "read_file(path=notes.txt)"
