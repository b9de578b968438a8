Feature: The package describes itself: schema, version, and models checked before a run
  `leanloop schema` prints the JSON Schema that editors and other tools can use, an agents
  file may name it with a `$schema` key, `leanloop --version` prints the installed version,
  and `leanloop validate --check-models` builds every agent's model without sending a
  request, reporting each one that cannot be built and still checking the others.

  Background:
    Given a CLI agents file "agents.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
          kwargs:
            replies: [The launch code is 4711.]
      agents:
        reader:
          model: scripted
      """

  Scenario: schema prints a JSON Schema that the demo agents file satisfies
    When the CLI runs "schema"
    Then the CLI exits with 0
    And the CLI stdout is a JSON Schema that the demo agents file satisfies
    And the CLI stdout is the JSON Schema leanloop validates with

  Scenario: schema --path names the installed schema file
    When the CLI runs "schema --path"
    Then the CLI exits with 0
    And the CLI stdout is the path of the schema file leanloop validates with

  Scenario: A file that names its schema with a $schema key validates
    Given a CLI agents file "editor.yaml" with:
      """
      # yaml-language-server: $schema=./agent.schema.json
      $schema: ./agent.schema.json
      version: 1
      agents:
        reader:
          model: {class: "leanloop.testing:ScriptedChatModel"}
      """
    When the CLI runs "validate editor.yaml"
    Then the CLI exits with 0
    And the CLI stdout is "ok: 1 agent (reader)"
    When the CLI runs "schema"
    Then the CLI stdout is a JSON Schema that "editor.yaml" satisfies

  Scenario: --version prints the version in pyproject.toml
    When the CLI runs "--version"
    Then the CLI exits with 0
    And the CLI prints "leanloop" and the version in pyproject.toml

  Scenario: validate --check-models builds each agent's model
    When the CLI runs "validate --check-models agents.yaml"
    Then the CLI exits with 0
    And the CLI stdout is "ok: reader (model: ScriptedChatModel)"

  Scenario: validate --check-models reports missing credentials, located, and checks the others
    Given the environment without OPENAI_API_KEY
    And the environment without OPENAI_ADMIN_KEY
    And a CLI agents file "two.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
        hosted:
          provider: openai
          model: gpt-4o
      agents:
        cloud:
          model: hosted
        reader:
          model: scripted
      """
    When the CLI runs "validate --check-models two.yaml"
    Then the CLI exits with 2
    And the CLI stderr has one error at "two.yaml" line 5 mentioning "api_key"
    And the CLI stdout has the line "failed: cloud (1 problem)"
    And the CLI stdout has the line "ok: reader (model: ScriptedChatModel)"
    And the CLI stderr has no traceback

  Scenario: A broken agent does not stop running another one
    Given the environment without OPENAI_API_KEY
    And the environment without OPENAI_ADMIN_KEY
    And a CLI agents file "two.yaml" with:
      """
      version: 1
      agents:
        cloud:
          model: {provider: openai, model: gpt-4o}
        reader:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs: {replies: [The launch code is 4711.]}
      """
    When the CLI runs "run two.yaml --agent reader 'What is the launch code?'"
    Then the CLI exits with 0
    And the CLI stdout is "The launch code is 4711."

  Scenario: validate --check-models reports a model class whose package is missing
    Given a CLI agents file "two.yaml" with:
      """
      version: 1
      models:
        missing:
          class: nosuchpkg.mod:Chat
        scripted:
          class: leanloop.testing:ScriptedChatModel
      agents:
        writer:
          model: missing
        reader:
          model: scripted
      """
    When the CLI runs "validate --check-models two.yaml"
    Then the CLI exits with 2
    And the CLI stderr has one error at "two.yaml" line 3 or 4 mentioning "nosuchpkg"
    And the CLI stdout has the line "failed: writer (1 problem)"
    And the CLI stdout has the line "ok: reader (model: ScriptedChatModel)"
    And the CLI stderr has no traceback
