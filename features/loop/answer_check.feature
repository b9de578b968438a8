Feature: An answer's values are checked against what the tools returned
  A small model that read the right file often answers with the value of the line beside
  the one asked for (the keyboards' count where the laptops were asked). Before a run ends
  with an answer, its values are looked up in the lines the tools returned; when a value
  sits on a line that matches the question less than another line of the same result, or
  is in nothing the tools returned, the model is asked once more in one request that
  shows only the lines in doubt and the question. Its reply replaces the answer only when
  its value is on the better line; the report's answer_check says what was found either
  way. answer_check "auto" asks again with the small prompting profile and only records
  otherwise. (Issue 37: answers grounded in what was read.)

  Background:
    Given a workspace with "inventory.json" holding these lines:
      | text                                     |
      | {                                        |
      |   "warehouse": "Lyon-2",                 |
      |   "items": [                             |
      |     {"name": "laptop", "count": 42},     |
      |     {"name": "monitor", "count": 17},    |
      |     {"name": "keyboard", "count": 120}   |
      |   ]                                      |
      | }                                        |
    And every agent has tools "read_file"

  Scenario: The neighbour's value is asked again alone, and the value of the line asked for stands
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | 120                                          |
      | There are 42 laptops in inventory.json.      |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the report says stop_reason "answer"
    And the answer is "There are 42 laptops in inventory.json."
    And the report's answer check says "asked_again" with the first answer "120"
    And the last request is one message that quotes lines 4 and 6 of "inventory.json" and ends with the question "How many laptops are in inventory.json?"
    And the report's last request is of kind "check"
    And the report has an event mentioning "line 4 names laptop as the question does; asked once more"
    And the run emitted one leanloop.answer_checked event with verdict "asked_again", which the CLI shows as a line ending "asked again alone: the second answer stands"

  Scenario: A second answer still on the line that lost leaves the first answer standing
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | 120                                          |
      | The count is 120.                            |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the answer is "120"
    And the report's answer check says "kept"
    And the report has an event mentioning "the second request did not settle it: the first answer stands"

  Scenario: A value on the line that answers asks nothing more
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | There are 42 laptops.                        |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the answer is "There are 42 laptops."
    And the report's answer check says "grounded"
    And the report lists 2 model requests

  Scenario: A value in nothing the tools returned is asked again from the closest lines
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                                  |
      | call read_file {"path": "inventory.json"}              |
      | There are 35 laptops.                                  |
      | inventory.json lists 42 laptops.                       |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the answer is "inventory.json lists 42 laptops."
    And the report's answer check says "asked_again" with the first answer "There are 35 laptops."
    And the last request is one message that quotes lines 4 of "inventory.json" and ends with the question "How many laptops are in inventory.json?"

  Scenario Outline: Outside the small profile, or with answer_check <mode>, the doubt is only recorded
    Given an agent with <settings> and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | 120                                          |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the answer is "120"
    And the report's answer check says "<verdict>"
    And the report lists 2 model requests

    Examples:
      | mode          | settings                                                         | verdict  |
      | auto          | model "scripted"                                                 | doubtful |
      | note          | model "qwen2.5-coder-0.5b-instruct", answer_check "note"         | doubtful |
      | off           | model "qwen2.5-coder-0.5b-instruct", answer_check "off"          | none     |

  Scenario: A reply that is no answer is not checked: the honest ending stands (check x honest endings)
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                         |
      | call read_file {"path": "inventory.json"}     |
      | How many laptops are in inventory.json?       |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the report says stop_reason "no_answer"
    And the report's answer check says "none"
    And the report lists 2 model requests

  Scenario: The answer after repeats is checked too (check x the repeat guard)
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | call read_file {"path": "inventory.json"}    |
      | 120                                          |
      | There are 42 laptops.                        |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the report says stop_reason "answer"
    And the answer is "There are 42 laptops."
    And the report's answer check says "asked_again" with the first answer "120"

  Scenario: A failed second request leaves the first answer standing, and says so
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | 120                                          |
      | raise connection reset by peer               |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the report says stop_reason "answer"
    And the answer is "120"
    And the report's answer check says "kept"
    And the report has an event mentioning "the request alone failed"

  Scenario: A streamed run that may ask again shows only the answer that stands (check x streaming)
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | 120                                          |
      | There are 42 laptops in inventory.json.      |
    When the agent is asked "How many laptops are in inventory.json?" through astream
    Then the streamed text is exactly "There are 42 laptops in inventory.json."
    And the report's answer check says "asked_again" with the first answer "120"

  Scenario: A streamed run that only records the doubt streams as before (check x streaming)
    Given an agent with model "scripted" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | 120                                          |
    When the agent is asked "How many laptops are in inventory.json?" through astream
    Then the streamed text is exactly "120"
    And the report's answer check says "doubtful"
