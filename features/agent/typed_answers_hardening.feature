Feature: Typed answers keep the run, and self-referencing schemas work
  When the run's answer cannot be turned into the `output_schema` type, the
  StructuredOutputError keeps the run (ADR 0020): its `answer` is the run's text answer
  with the whole report, the structuring requests included, and `structured` says what
  went wrong; `leanloop run --json` prints that answer and report with the `error`, and
  exits 1 (ADR 0015). A model that refers to itself (`children: list[Node]`), directly
  or through another model, is sent to the server with the model at the root of its JSON
  schema, so native structured output takes it (tracker issue 28).

  Scenario: A reply that fails twice keeps the run's answer, report and usage
    Given an agent with output_schema "answer_models:City", report_usage true and the script:
      | reply                           |
      | Paris is the capital of France. |
      | It is Paris, in France.         |
      | {"city": "Paris"}               |
    When the agent is asked "What is the capital of France?" and the structuring fails
    Then the failure keeps the run's answer "Paris is the capital of France."
    And the report says stop_reason "answer" after 1 steps
    And the report says the structuring as "City" by the "text" method failed after 1 repairs with "name: Field required; country: Field required"
    And the report's last 2 requests are structuring requests without tools
    And the answer's usage adds up the usage of every request
    And the report has an event mentioning "not typed as City"
    And the answer has no parsed instance

  Scenario: A structuring request that fails keeps the run's answer and report
    Given an agent with output_schema "answer_models:City" and the script:
      | reply                           |
      | Paris is the capital of France. |
      | raise connection reset by peer  |
    When the agent is asked "What is the capital of France?" and the structuring fails
    Then the failure keeps the run's answer "Paris is the capital of France."
    And the report says the structuring as "City" by the "text" method failed after 0 repairs with "ScriptError: connection reset by peer"
    And the report has no structuring requests

  Scenario: An answer that ended by max_rounds and cannot be typed keeps its stop reason
    Given an agent with output_schema "answer_models:City", tools "lookup", max_rounds 1 and the script:
      | reply                          |
      | call lookup {"key": "capital"} |
      | The capital is Paris, France.  |
      | Paris, France.                 |
      | {"name": "Paris"}              |
    When the agent is asked "What is the capital of France?" and the structuring fails
    Then the failure keeps the run's answer "The capital is Paris, France."
    And the report says stop_reason "max_rounds" after 2 steps
    And the report says the structuring as "City" by the "text" method failed after 1 repairs with "country: Field required"

  Scenario: leanloop run --json prints the run's answer and report when the answer cannot be typed
    Given a CLI agents file "typed.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
          kwargs:
            replies:
              - Paris is the capital of France.
              - Paris, France.
              - '{"name": "Paris"}'
      agents:
        geo:
          model: scripted
          output_schema: "answer_models:City"
      """
    When the CLI runs "run typed.yaml --json -q 'What is the capital of France?'" with the answer models importable
    Then the CLI exits with 1
    And the CLI JSON output has answer "Paris is the capital of France." and stop_reason "answer"
    And the CLI JSON output has the error "the answer could not be read as City: country: Field required"
    And the CLI JSON output says the structuring as "City" failed after 1 repairs with "country: Field required"
    And the CLI JSON output has 3 requests, the last 2 of them structuring requests
    And the CLI stderr is one line that starts "error: the answer could not be read as City: country: Field required"
    And the CLI stderr has no traceback

  Scenario Outline: A self-referencing output_schema validates and is sent natively with its model at the root
    Given the scripted HTTP server answers:
      | reply                  |
      | <answer>               |
      | <json>                 |
    And an agents file for the scripted HTTP server whose agent "tree" has output_schema "hardening_tree_models:<schema>"
    And the self-referencing answer models beside the agents file
    When the CLI runs "validate agents.yaml"
    Then the CLI exits with 0
    When the agent "tree" of "agents.yaml" is asked "<question>"
    Then the answer's additional_kwargs hold a <schema> whose JSON is <json>
    And the report says the answer was structured as "<schema>" by the "native" method with 0 repairs
    And the scripted HTTP server's request 2 asks for the json_schema "<schema>" with the properties <properties>
    And every $ref in the json_schema of the scripted HTTP server's request 2 resolves

    Examples:
      | schema | answer                           | json                                                                                           | properties     | question                |
      | Node   | a holds b and d; b holds c.      | {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}, {"name": "d"}]}         | name, children | What does a hold?       |
      | Folder | docs holds readme and img/logo.  | {"name": "docs", "entries": [{"name": "readme"}, {"name": "img", "folder": {"name": "img", "entries": [{"name": "logo"}]}}]} | name, entries  | What does docs hold?    |
