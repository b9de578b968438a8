Feature: Agents as tools nest their sub-runs' reports in the caller's report
  "agent:NAME" makes another agent of the same file a tool: one task in, its answer out,
  a run of its own. The record of each such call carries the sub-run's whole report
  (sub_report: its steps, stop reason, question, requests and tool calls), in
  AIMessage.response_metadata["leanloop"], in `leanloop run --json` and on the HTML page;
  the one-line summary stays as the call's note (a remark: the call does not count as
  repaired). Calls of one reply run concurrently and each keeps its own sub-run. A cycle
  of agent tools is refused by `leanloop validate`.
  (The scenarios of the first agent tool and of the cycle found by load_specs are in
  tool_limits.feature.)

  Background:
    Given a sub-agent workspace file "notes.txt" holding "The port is 8931."
    And a sub-agent workspace file "todo.txt" holding "Open the port."

  Scenario: The sub-run of agent:researcher, which reads a file, is nested in the lead's report
    Given the sub-agent file:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: researcher, args: {task: "find the port"}}]
                - Port 8931.
          tools: ["agent:researcher"]
        researcher:
          description: Finds facts in the notes.
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: notes.txt}}]
                - The port is 8931.
          tools: [read_file]
          workspace: ./ws
      """
    When the sub-agent file's agent "lead" is asked "What port?"
    Then the lead answered "Port 8931."
    And call 1 of the lead's report is "researcher" with a sub-run that stopped with "answer" after 2 steps
    And the sub-run of call 1 was asked "find the port"
    And the sub-run of call 1 made 2 requests and the tool calls "read_file"
    And the sub-run of call 1 read "notes.txt" and kept the result
    And call 1 of the lead's report has a note starting "agent researcher: stop: answer · 2 steps · 1 tool call"
    And the lead's report counts no repaired calls

  Scenario: Two agent calls in one reply run concurrently and each keeps its own sub-run
    Given the sub-agent file:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls:
                    - {name: researcher, args: {task: "find the port"}}
                    - {name: planner, args: {task: "what is left to do"}}
                - Open port 8931.
          tools: ["agent:researcher", "agent:planner"]
        researcher:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: notes.txt}}]
                - The port is 8931.
          tools: [read_file]
          workspace: ./ws
        planner:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: list_files, args: {}}]
                - tool_calls: [{name: read_file, args: {path: todo.txt}}]
                - Open the port.
          tools: [list_files, read_file]
          workspace: ./ws
      """
    When the sub-agent file's agent "lead" is asked "What should I do?"
    Then the lead answered "Open port 8931."
    And call 1 of the lead's report is "researcher" with a sub-run that stopped with "answer" after 2 steps
    And the sub-run of call 1 was asked "find the port"
    And the sub-run of call 1 made 2 requests and the tool calls "read_file"
    And call 2 of the lead's report is "planner" with a sub-run that stopped with "answer" after 3 steps
    And the sub-run of call 2 was asked "what is left to do"
    And the sub-run of call 2 made 3 requests and the tool calls "list_files, read_file"
    And call 1 of the lead's report has a note starting "agent researcher: stop: answer"
    And call 2 of the lead's report has a note starting "agent planner: stop: answer"

  Scenario: A sub-run that fails nests its partial report and the call fails
    Given the sub-agent file:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: researcher, args: {task: "find the port"}}]
                - The researcher failed.
          tools: ["agent:researcher"]
        researcher:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: notes.txt}}]
                - raise: the model server went away
          tools: [read_file]
          workspace: ./ws
      """
    When the sub-agent file's agent "lead" is asked "What port?"
    Then the lead answered "The researcher failed."
    And call 1 of the lead's report failed with a result starting "error: RunFailed"
    And call 1 of the lead's report is "researcher" with a sub-run that stopped with "failed" after 1 steps
    And the sub-run of call 1 has an error mentioning "the model server went away"
    And the sub-run of call 1 made 1 requests and the tool calls "read_file"

  Scenario: run --json prints the nested report, --html shows it, `report` summarises it
    Given a CLI agents file "agents.yaml" with:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: researcher, args: {task: "find the port"}}]
                - Port 8931.
          tools: ["agent:researcher"]
        researcher:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: notes.txt}}]
                - The port is 8931.
          tools: [read_file]
          workspace: ./ws
      """
    When the CLI runs "run agents.yaml 'What port?' --agent lead --json --html page.html"
    Then the CLI exits with 0
    And the CLI JSON output has answer "Port 8931." and stop_reason "answer"
    And the JSON's call 1 nests a sub-run that stopped with "answer" and called "read_file" with {"path": "notes.txt"}
    And the page "page.html" is well-formed and shows a sub-run of "researcher" that stopped with "answer"
    And that sub-run on the page was asked "find the port" and lists the call "read_file" kept
    When the CLI stdout is saved as "run.json" and the CLI runs "report run.json"
    Then the CLI exits with 0
    And the CLI stdout has a line starting "↳ sub-run: stop: answer · 2 steps · 1 tool call"

  Scenario: leanloop validate refuses agents that call each other in a cycle, with file:line
    Given a CLI agents file "cycle.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {class: leanloop.testing:ScriptedChatModel}
          tools: ["agent:b"]
        b:
          model: {class: leanloop.testing:ScriptedChatModel}
          tools: [read_file, "agent:c"]
          workspace: .
        c:
          model: {class: leanloop.testing:ScriptedChatModel}
          tools: ["agent:a"]
      """
    When the CLI runs "validate cycle.yaml"
    Then the CLI exits with 2
    And the CLI stderr has 1 located errors in "cycle.yaml"
    And the CLI stderr mentions "cycle.yaml:12:13: agents.c.tools[0]: agent tools make a cycle: a -> b -> c -> a"
    And the CLI stderr has no traceback
