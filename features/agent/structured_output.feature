Feature: Typed answers
  An agent with `output_schema: "pkg.mod:Model"` (or `agent.with_structured_output(Model)`)
  answers with an instance of that pydantic model. After the run, one tool-less request
  carries the question, the run's answer and the JSON schema; servers that can hold a
  reply to a schema (OpenAI-compatible, Ollama) get it as `response_format`, other models
  are asked for JSON in text, read tolerantly. A reply that does not validate gets one
  repair round; a second failure is a StructuredOutputError that names the problem.

  Scenario: A JSON reply becomes the model instance, the report says how
    Given an agent with output_schema "answer_models:City", report_usage true and the script:
      | reply                                  |
      | Paris is the capital of France.        |
      | {"name": "Paris", "country": "France"} |
    When the agent is asked "What is the capital of France?"
    Then the parsed answer is a City with name "Paris" and country "France"
    And the answer's text is the parsed answer as JSON
    And the report says the answer was structured as "City" by the "text" method with 0 repairs
    And the report says stop_reason "answer" after 1 steps
    And the report's last 1 requests are structuring requests without tools
    And the answer's usage adds up the usage of every request
    And the structuring request 2 carries the question, the run's answer and the schema of City
    And the structuring request 2 holds only those 2 messages

  Scenario: JSON in a code fence with prose around it is read
    Given an agent with output_schema "answer_models:City" and the script:
      | reply                                                                                     |
      | Paris is the capital of France.                                                           |
      | Here is the JSON:\n```json\n{"name": "Paris", "country": "France"}\n```\nHope this helps! |
    When the agent is asked "What is the capital of France?"
    Then the parsed answer is a City with name "Paris" and country "France"
    And the report says the answer was structured as "City" by the "text" method with 0 repairs

  Scenario Outline: The first JSON object that validates is read from the reply
    When the reply <reply> is read as a City
    Then the reply was read as a City with name "Paris" and country "France"

    Examples:
      | reply                                                                    |
      | 'Sure. {"name": "Paris", "country": "France"} is the answer.'            |
      | 'Note {this} first, then {"name": "Paris", "country": "France"}'         |
      | '{"city": {"name": "Paris", "country": "France"}}'                       |
      | '```\n{"name": "Paris", "country": "France"}\n```'                       |
      | '{"name": "Paris", "country": "France", "note": "{braces} in a string"}' |

  Scenario Outline: A reply without a valid object says what is wrong in one line
    When the reply <reply> is read as a City
    Then reading it failed with the problem "<problem>"

    Examples:
      | reply                               | problem                                                                       |
      | 'Paris, France.'                    | the reply holds no JSON object ('Paris, France.')                             |
      | '{"name": "Paris"}'                 | country: Field required                                                       |
      | '{"name": ["Paris"], "country": 1}' | name: Input should be a valid string; country: Input should be a valid string |
      | ''                                  | the reply is empty                                                            |

  Scenario: A reply that does not validate is repaired once
    Given an agent with output_schema "answer_models:City" and the script:
      | reply                                  |
      | Paris is the capital of France.        |
      | {"name": "Paris"}                      |
      | {"name": "Paris", "country": "France"} |
    When the agent is asked "What is the capital of France?"
    Then the parsed answer is a City with name "Paris" and country "France"
    And the report says the answer was structured as "City" by the "text" method with 1 repairs
    And the report's last 2 requests are structuring requests without tools
    And the structuring request 3 shows the reply {"name": "Paris"} and the problem "country: Field required"
    And the report has an event mentioning "repaired"

  Scenario: A reply that fails twice is a StructuredOutputError that names the problem
    Given an agent with output_schema "answer_models:City" and the script:
      | reply                           |
      | Paris is the capital of France. |
      | It is Paris, in France.         |
      | {"city": "Paris"}               |
    When the agent is asked "What is the capital of France?" and the structuring fails
    Then the failure is a StructuredOutputError with the problem "name: Field required; country: Field required"
    And the failure carries the run's answer "Paris is the capital of France." with its report
    And the model received 3 requests

  Scenario: A structuring request that fails is a StructuredOutputError that keeps the answer
    Given an agent with output_schema "answer_models:City" and the script:
      | reply                           |
      | Paris is the capital of France. |
      | raise connection reset by peer  |
    When the agent is asked "What is the capital of France?" and the structuring fails
    Then the failure is a StructuredOutputError with the problem "ScriptError: connection reset by peer"
    And the failure carries the run's answer "Paris is the capital of France." with its report

  Scenario: An answer that ended by max_rounds is still structured and keeps its stop reason
    Given an agent with output_schema "answer_models:City", tools "lookup", max_rounds 1 and the script:
      | reply                                  |
      | call lookup {"key": "capital"}         |
      | The capital is Paris, France.          |
      | {"name": "Paris", "country": "France"} |
    When the agent is asked "What is the capital of France?"
    Then the parsed answer is a City with name "Paris" and country "France"
    And the report says stop_reason "max_rounds" after 2 steps
    And the structuring request 3 carries the question, the run's answer and the schema of City

  Scenario: with_structured_output returns the instance alone
    Given an agent with the script:
      | reply                                  |
      | Paris is the capital of France.        |
      | {"name": "Paris", "country": "France"} |
    When the agent is asked "What is the capital of France?" through with_structured_output(City)
    Then the result is a City with name "Paris" and country "France"

  Scenario: with_structured_output with include_raw returns the raw message and the instance
    Given an agent with the script:
      | reply                                  |
      | Paris is the capital of France.        |
      | {"name": "Paris", "country": "France"} |
    When the agent is asked "What is the capital of France?" through with_structured_output(City, include_raw=True)
    Then the result has the raw message and a City with name "Paris" and country "France"
    And the raw message carries the report, structured as "City"

  Scenario: with_structured_output without a schema on an agent without output_schema is refused
    Given an agent with the script:
      | reply                           |
      | Paris is the capital of France. |
    Then with_structured_output without a schema raises a ValueError mentioning "output_schema"

  Scenario: An agents file with output_schema answers with the instance
    Given an agents file "typed.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
          kwargs:
            replies:
              - Paris is the capital of France.
              - '{"name": "Paris", "country": "France"}'
      agents:
        geo:
          model: scripted
          output_schema: "answer_models:City"
      """
    When the agent "geo" of "typed.yaml" is asked "What is the capital of France?"
    Then the answer's additional_kwargs hold a City with name "Paris" and country "France"
    And the report says the answer was structured as "City" by the "text" method with 0 repairs

  Scenario: leanloop run prints the typed answer as JSON
    Given a CLI agents file "typed.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
          kwargs:
            replies:
              - Paris is the capital of France.
              - 'Here you go: {"name": "Paris", "country": "France"}'
      agents:
        geo:
          model: scripted
          output_schema: "answer_models:City"
      """
    When the CLI runs "run typed.yaml 'What is the capital of France?'" with the answer models importable
    Then the CLI exits with 0
    And the CLI stdout is "{"name":"Paris","country":"France"}"
    And the CLI stderr has no traceback

  Scenario: leanloop run says in one line why an answer could not be typed, and exits 1
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
    When the CLI runs "run typed.yaml -q 'What is the capital of France?'" with the answer models importable
    Then the CLI exits with 1
    And the CLI stderr is one line that starts "error: the answer could not be read as City: country: Field required"
    And the CLI stderr has no traceback

  Scenario Outline: An output_schema that is not an importable pydantic model is a located error
    Given a CLI agents file "typed.yaml" with:
      """
      version: 1
      models:
        scripted:
          class: leanloop.testing:ScriptedChatModel
      agents:
        geo:
          model: scripted
          output_schema: "<schema>"
      """
    When the CLI runs "validate typed.yaml" with the answer models importable
    Then the CLI exits with 2
    And the CLI stderr is one line that starts "error: typed.yaml:8:20: agents.geo.output_schema: <message>"

    Examples:
      | schema                    | message                                                                                       |
      | answer_models:PlainCity   | 'answer_models:PlainCity' is the class PlainCity, not a pydantic model (a BaseModel subclass) |
      | answer_models:NOT_A_MODEL | 'answer_models:NOT_A_MODEL' is a dict, not a pydantic model (a BaseModel subclass)            |
      | answer_models:Town        | module 'answer_models' has no attribute 'Town'                                                |
      | no_such_models:City       | cannot import module 'no_such_models' (No module named 'no_such_models')                      |

  Scenario: An OpenAI-compatible server gets the schema as response_format json_schema
    Given the scripted HTTP server answers:
      | reply                                  |
      | Paris is the capital of France.        |
      | {"name": "Paris", "country": "France"} |
    And an agents file for the scripted HTTP server whose agent "geo" has output_schema "answer_models:City"
    When the agent "geo" of "agents.yaml" is asked "What is the capital of France?"
    Then the answer's additional_kwargs hold a City with name "Paris" and country "France"
    And the report says the answer was structured as "City" by the "native" method with 0 repairs
    And the scripted HTTP server's request 2 asks for the json_schema "City" with the properties name, country
    And the scripted HTTP server's request 1 has no response_format

  Scenario: A reply the server sent outside the schema is repaired on the native path too
    Given the scripted HTTP server answers:
      | reply                                  |
      | Paris is the capital of France.        |
      | {"name": "Paris"}                      |
      | {"name": "Paris", "country": "France"} |
    And an agents file for the scripted HTTP server whose agent "geo" has output_schema "answer_models:City"
    When the agent "geo" of "agents.yaml" is asked "What is the capital of France?"
    Then the answer's additional_kwargs hold a City with name "Paris" and country "France"
    And the report says the answer was structured as "City" by the "native" method with 1 repairs
    And the scripted HTTP server's request 3 asks for the json_schema "City" with the properties name, country

  Scenario: A server that refuses response_format is asked for JSON in text
    Given the scripted HTTP server answers:
      | reply                                                     |
      | Paris is the capital of France.                           |
      | refuse 400 "response_format json_schema is not supported" |
      | {"name": "Paris", "country": "France"}                    |
    And an agents file for the scripted HTTP server whose agent "geo" has output_schema "answer_models:City"
    When the agent "geo" of "agents.yaml" is asked "What is the capital of France?"
    Then the answer's additional_kwargs hold a City with name "Paris" and country "France"
    And the report says the answer was structured as "City" by the "text" method with 0 repairs
    And the scripted HTTP server's request 3 has no response_format
    And the report's events mention "response_format"
