Feature: Tools kept next to the agents file import from any working folder
  The agents file's folder is appended to the import path for its import paths (after
  everything installed, so a file there never shadows a package), as the workspace is
  resolved against it too; an import that still fails says where it looked.

  Background:
    Given a CLI file "proj/mytools/__init__.py" with:
      """
      """
    And a CLI file "proj/mytools/tools.py" with:
      """
      from langchain_core.tools import tool


      @tool
      def lookup(code: str) -> str:
          "Look up what a code means."
          return f"code {code} means launch"
      """

  Scenario: validate and run find a tool module beside the file, run from another folder
    Given a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs: {replies: [{tool_calls: [{name: lookup, args: {code: X1}}]}, "done"]}
          tools: ["mytools.tools:lookup"]
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 0
    When the CLI runs "run proj/agents.yaml --json 'What is X1?'"
    Then the CLI exits with 0
    And the JSON report's first tool call is "lookup", ok, with 20 characters out

  Scenario: a module that is nowhere is an error that says where leanloop looked
    Given a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {class: leanloop.testing:ScriptedChatModel}
          tools: ["nothere.tools:lookup"]
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 2
    And the CLI stderr mentions "cannot import module 'nothere.tools' (No module named 'nothere'); looked in "
    And the CLI stderr mentions "proj and the Python path"

  Scenario: a tool module that calls sys.exit on import is a located error, not a silent exit
    Given a CLI file "proj/quitter.py" with:
      """
      import sys


      def lookup(key: str) -> str:
          return key


      sys.exit(3)
      """
    And a CLI file "proj/agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {class: leanloop.testing:ScriptedChatModel}
          tools: ["quitter:lookup"]
      """
    When the CLI runs "validate proj/agents.yaml"
    Then the CLI exits with 0
    When the CLI runs "run proj/agents.yaml --json x"
    Then the CLI exits with 2
    And the CLI stderr mentions "proj/agents.yaml:3:3: agents.a.tools"
    And the CLI stderr mentions "importing module 'quitter' failed: SystemExit: 3"
