Feature: Per-tool timeouts and retries, tools added from Python, agents as tools
  A tools entry may be a mapping {name, timeout, retries}: its timeout overrides the
  agent's tool_timeout for that tool, and a call that raises TransientToolError is made
  again, with backoff, up to retries times; the report counts the retries. Entries are
  checked with file:line like any key. LLMAgent.from_file(path, name, tools=[...]) adds
  tool objects to those the file lists. "agent:NAME" makes another agent of the file a
  tool (one task in, its answer out, a run of its own); a cycle is a validate error.

  Scenario: A tool that sleeps forever with timeout 1 gives a timeout result within 2 s
    Given an agents file whose agent has tool_timeout 60 and the tools:
      """
      [{name: "TOOLS:sleep_forever", timeout: 1}]
      """
    And its model calls sleep_forever {"label": "x"} and then answers "Gave up."
    When the file's agent is asked "Wait."
    Then the file's agent answered "Gave up." within 2 s
    And the tool result the model received is "error: sleep_forever timed out after 1 s; not retried"
    And report call 1 timed out

  Scenario: A transient failure succeeds on retry 2 and the report notes the retries
    Given an agents file whose agent has the tools:
      """
      [{name: "TOOLS:flaky", retries: 2}]
      """
    And its model calls flaky {"label": "x"} and then answers "Done."
    When the file's agent is asked "Try it."
    Then the file's agent answered "Done." within 5 s
    And the tool result the model received is "ok on attempt 3"
    And report call 1 has the note "retried 2 times after transient errors"

  Scenario: The report's retries field counts the retries
    Given an agents file whose agent has the tools:
      """
      [{name: "TOOLS:flaky", retries: 2}]
      """
    And its model calls flaky {"label": "x"} and then answers "Done."
    When the file's agent is asked "Try it."
    Then report call 1 counts 2 retries

  Scenario: Retries run out: the last transient error is the result
    Given an agents file whose agent has the tools:
      """
      [{name: "TOOLS:flaky", retries: 1}]
      """
    And its model calls flaky {"label": "x"} and then answers "Gave up."
    When the file's agent is asked "Try it."
    Then the tool result the model received is "error: TransientToolError: busy (attempt 2)"
    And report call 1 has the note "retried 1 time after transient errors"

  Scenario: Other errors are not retried
    Given an agents file whose agent has the tools:
      """
      [{name: "TOOLS:broken", retries: 3}]
      """
    And its model calls broken {"label": "x"} and then answers "Gave up."
    When the file's agent is asked "Try it."
    Then the tool result the model received is "error: ValueError: broken for good"
    And the file tool "broken" ran 1 time

  Scenario: A plain string entry and a mapping entry mix
    Given an agents file whose agent has the tools:
      """
      ["TOOLS:broken", {name: "TOOLS:flaky", retries: 2, timeout: 5}]
      """
    When the file's agent is built
    Then the file's agent has the tools "broken, flaky"

  Scenario Outline: A wrong tool mapping is refused with file:line
    Given an agents file whose agent has the tools:
      """
      <tools>
      """
    When the agents file is validated
    Then validation fails with "<message>"

    Examples:
      | tools                                         | message                                                  |
      | [{name: "TOOLS:flaky", retries: -1}]           | agents.a.tools[0].retries: -1 is less than the minimum of 0 |
      | [{name: "TOOLS:flaky", timeout: 0}]            | agents.a.tools[0].timeout                                |
      | [{name: "TOOLS:flaky", tries: 2}]              | agents.a.tools[0]                                        |
      | [{timeout: 2}]                                 | agents.a.tools[0]                                        |
      | [{name: "nosuch_tool", retries: 1}]            | agents.a.tools[0].name: unknown tool 'nosuch_tool'       |

  Scenario: LLMAgent.from_file adds tool objects to the file's tools
    Given an agents file whose agent has the tools:
      """
      ["TOOLS:broken"]
      """
    And its model calls extra_tool {"label": "x"} and then answers "Used it."
    When the file's agent is built with the extra tool "extra_tool"
    And the file's agent is asked "Use the extra tool."
    Then the file's agent has the tools "broken, extra_tool"
    And the tool result the model received is "extra: x"

  Scenario: A Python tool whose name clashes with a file's tool is refused
    Given an agents file whose agent has the tools:
      """
      ["TOOLS:broken"]
      """
    When the file's agent is built with the extra tool "broken"
    Then building fails with "two tools are named "broken""

  Scenario: agent:researcher runs the other agent and notes its run in the report
    Given the agents file:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs: {replies: [{tool_calls: [{name: researcher, args: {task: "find the port"}}]}, "Port 8931."]}
          tools: ["agent:researcher"]
        researcher:
          description: Finds facts.
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs: {replies: ["The port is 8931."]}
      """
    When the file's agent "lead" is asked "What port?"
    Then the file's agent answered "Port 8931." within 10 s
    And the tool result the model received is "The port is 8931."
    And the researcher's model was asked "find the port"
    And report call 1 has a note starting "agent researcher: stop: answer"

  Scenario: Agents that call each other in a cycle are refused by validate with file:line
    Given the agents file:
      """
      version: 1
      agents:
        a1:
          model: {class: leanloop.testing:ScriptedChatModel}
          tools: ["agent:a2"]
        a2:
          model: {class: leanloop.testing:ScriptedChatModel}
          tools: ["agent:a1", "agent:nobody"]
      """
    When the agents file is validated
    Then validation fails with "agents.yaml:8:13: agents.a2.tools[0]: agent tools make a cycle: a1 -> a2 -> a1"
    And validation fails with "agents.a2.tools[1]: 'agent:nobody' names no agent of this file"
