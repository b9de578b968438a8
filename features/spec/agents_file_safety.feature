Feature: Reading an agents file runs none of its code
  An agents file names Python code (tools, a model class, an output schema). `validate`
  reads that code, it never runs it: each module is found as `import` would find it and
  its source is parsed, so a module beside the file (or a package on the way to it) that
  does something when imported does nothing. Only `--check-models` and a run import. A tool
  is a LangChain tool or a function of the user's own code: a standard-library or builtin
  callable (`os:system` would hand the model a shell) is refused by its name, located.

  Background:
    Given a CLI file "proj/marker.py" with:
      """
      from pathlib import Path

      Path(__file__).with_name("MARKER").write_text("imported")

      from leanloop.testing import ScriptedChatModel
      from pydantic import BaseModel


      def lookup(code: str) -> str:
          "Look up what a code means."
          return f"code {code} means launch"


      class Answer(BaseModel):
          text: str


      class MarkerChat(ScriptedChatModel):
          "A scripted chat model whose module leaves a mark when imported."
      """
    And a CLI file "proj/markpkg/__init__.py" with:
      """
      from pathlib import Path

      Path(__file__).parent.with_name("MARKER").write_text("imported")
      """
    And a CLI file "proj/markpkg/tools.py" with:
      """
      def lookup(code: str) -> str:
          "Look up what a code means."
          return code
      """

  Scenario Outline: validate reads a <what> reference beside the file without running it
    Given a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          <setting>
          model: <model>
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 0
    And the agents file's folder "proj" holds no file "MARKER"

    Examples:
      | what                | setting                        | model                                         |
      | tool                | tools: ["marker:lookup"]       | {class: "leanloop.testing:ScriptedChatModel"} |
      | tool in a package   | tools: ["markpkg.tools:lookup"] | {class: "leanloop.testing:ScriptedChatModel"} |
      | output_schema       | output_schema: "marker:Answer" | {class: "leanloop.testing:ScriptedChatModel"} |
      | model class         | description: reads             | {class: "marker:MarkerChat"}                  |

  Scenario Outline: window builds only the models, never an agent's <what>
    Given a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          <setting>
          model: {class: "leanloop.testing:ScriptedChatModel"}
      """
    When the CLI runs "window proj/agents.yaml"
    Then the CLI exits with 0
    And the CLI stdout has the line "a: window 128,000 tokens (source: default:hosted — the hosted API did not say its window; set context_window if it is smaller); request ceiling 106,752, reply reserve 2,048"
    And the agents file's folder "proj" holds no file "MARKER"

    Examples:
      | what          | setting                        |
      | tools         | tools: ["marker:lookup"]       |
      | output_schema | output_schema: "marker:Answer" |

  Scenario: a mistake in a module beside the file is still found by reading it
    Given a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {class: "marker:Answer"}
          tools: ["marker:lookup", "marker:Answer", "marker:nothing"]
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 2
    And the CLI stderr has the line "error: proj/agents.yaml:5:30: agents.a.tools[1]: 'marker:Answer' is a class, not a tool"
    And the CLI stderr has the line "error: proj/agents.yaml:5:47: agents.a.tools[2]: module 'marker' has no attribute 'nothing'"
    And the agents file's folder "proj" holds no file "MARKER"

  Scenario Outline: a standard-library callable is refused as a tool, located: <tool>
    Given a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {class: "leanloop.testing:ScriptedChatModel"}
          tools: ["<tool>"]
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 2
    And the CLI stderr has the line "error: proj/agents.yaml:5:13: agents.a.tools[0]: '<tool>' is a standard-library callable (module '<module>'), not a tool"

    Examples:
      | tool                 | module     |
      | os:system            | os         |
      | subprocess:getoutput | subprocess |
      | builtins:eval        | builtins   |

  Scenario: a module of the user's that re-exports a shell is refused by what it imports
    Given a CLI file "proj/shell.py" with:
      """
      import os
      from subprocess import getoutput as ask

      run = os.system
      """
    And a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {class: "leanloop.testing:ScriptedChatModel"}
          tools: ["shell:ask", "shell:run"]
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 2
    And the CLI stderr has the line "error: proj/agents.yaml:5:13: agents.a.tools[0]: 'shell:ask' is a standard-library callable (it is subprocess.getoutput), not a tool"
    And the CLI stderr has the line "error: proj/agents.yaml:5:26: agents.a.tools[1]: 'shell:run' is a standard-library callable (it is os.system), not a tool"

  Scenario: a standard-library callable only an import can see is refused when the agent is built
    Given a CLI file "proj/sneaky.py" with:
      """
      import os

      run = getattr(os, "system")
      """
    And a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs: {replies: [{tool_calls: [{name: system, args: {command: "touch PWNED"}}]}, "done"]}
          tools: ["sneaky:run"]
      """
    When the CLI runs "run proj/agents.yaml --json 'Go.'"
    Then the CLI exits with 2
    And the CLI stderr mentions "proj/agents.yaml:3:3: agents.a.tools: 'sneaky:run' is a standard-library callable"
    And the CLI's working folder holds no file "PWNED"

  Scenario: a tool of the user's beside the file validates without running, then runs
    Given a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs: {replies: [{tool_calls: [{name: lookup, args: {code: X1}}]}, "done"]}
          tools: ["marker:lookup"]
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 0
    And the agents file's folder "proj" holds no file "MARKER"
    When the CLI runs "run proj/agents.yaml --json 'What is X1?'"
    Then the CLI exits with 0
    And the JSON report's first tool call is "lookup", ok, with 20 characters out
    And the agents file's folder "proj" holds the file "MARKER"

  Scenario: validate names the tool modules it read but did not import, and how to check them
    Given a CLI file "proj/needs.py" with:
      """
      import leanloop_no_such_dependency


      def ask(question: str) -> str:
          "Ask a question."
          return question
      """
    And a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {class: "leanloop.testing:ScriptedChatModel"}
          tools: [read_file, "marker:lookup", "needs:ask", "agent:b"]
        b:
          description: looks codes up
          model: {class: "leanloop.testing:ScriptedChatModel"}
          tools: ["markpkg.tools:lookup"]
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 0
    And the CLI stdout has the line "ok: 2 agents (a, b)"
    And the CLI stdout has the line "not checked: tool modules marker, needs, markpkg.tools were read, not imported (importing runs their code); `leanloop validate --check-models proj/agents.yaml` imports them"
    And the agents file's folder "proj" holds no file "MARKER"
    When the CLI runs "validate --check-models proj/agents.yaml"
    Then the CLI exits with 2
    And the CLI stderr mentions "No module named 'leanloop_no_such_dependency'"
    And the agents file's folder "proj" holds the file "MARKER"

  Scenario: --check-models imports, as it builds each model
    Given a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {class: "marker:MarkerChat"}
      """
    When the CLI runs "validate --check-models proj/agents.yaml"
    Then the CLI exits with 0
    And the agents file's folder "proj" holds the file "MARKER"
