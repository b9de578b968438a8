Feature: The answer check where it meets the other rules' promises
  The answer check (issue 37, answer_check.feature) reads the lines the run's tools
  returned. Here it meets what the other rules promise: a session's earlier turns are
  part of the conversation, so a value read in an earlier turn is read, and the thread
  keeps the answer that stands; a sub-agent checks its own answer, and its caller checks
  against what the sub-agent returned, never against the files the sub-agent read; a
  pruned result is read as the extract the model got, with the file's line numbers and
  without the pruning pass's own note; a result trimmed out of a later request is still
  what the tools returned (the request alone shows its lines again); a resumed turn is
  checked as any run, each line quoted once; a run in text mode names each result by its
  file; a typed answer is structured from the answer that stands, natively or in text.
  (The serve case is tests/serve/test_answer_check.py.)

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

  # --- sessions -------------------------------------------------------------------------

  Scenario: A later turn is checked against the lines an earlier turn read, and the thread keeps the answer that stands (check x sessions)
    Given the agents keep their sessions in the scenario's store
    And an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | There are 42 laptops.                        |
      | 42                                           |
      | There are 17 monitors.                       |
      | There are 120 keyboards.                     |
    When in thread "stock" the agent is asked "How many laptops are in inventory.json?"
    Then the report's answer check says "grounded"
    When in thread "stock" the agent is asked "And how many monitors?"
    Then the answer is "There are 17 monitors."
    And the report's answer check says "asked_again" with the first answer "42"
    And the last request is one message that quotes lines 4 and 5 of "inventory.json" and ends with the question "And how many monitors?"
    And the report's tool calls hold no read of "inventory.json"
    And thread "stock" keeps as the answer of turn 2 the run's answer, which starts "There are 17 monitors."
    When in thread "stock" the agent is asked "And keyboards?"
    Then the answer is "There are 120 keyboards."
    And the report's answer check says "grounded" on "'120' on inventory.json line 6"
    And the report lists 1 model requests
    And the last request holds the earlier answer "There are 17 monitors."
    And the last request holds no earlier answer "42"

  # --- sub-agents -----------------------------------------------------------------------

  Scenario: A sub-agent asks again in its own run; its caller checks against the answer it returned and asks nothing more (check x sub-agents)
    Given the sub-agent file:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: researcher, args: {task: "How many laptops are in inventory.json?"}}]
                - The researcher counted 42 laptops.
          tools: ["agent:researcher"]
          answer_check: ask_again
        researcher:
          description: Reads the inventory.
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: inventory.json}}]
                - "120"
                - There are 42 laptops in inventory.json.
          tools: [read_file]
          workspace: ./ws
          answer_check: ask_again
      """
    When the sub-agent file's agent "lead" is asked "How many laptops are in inventory.json?"
    Then the lead answered "The researcher counted 42 laptops."
    And the sub-run of call 1 says answer check "asked_again" with the first answer "120" after requests "step, step, check"
    And the lead's tool result of call 1 is "There are 42 laptops in inventory.json."
    And the lead's answer check says "grounded" on "'42' on researcher line 1" after requests "step, step"

  Scenario: A caller's value that only the sub-agent's file holds is in nothing the caller's tools returned (check x sub-agents)
    Given the sub-agent file:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: researcher, args: {task: "How many laptops are in inventory.json?"}}]
                - "120"
                - The researcher found 42 laptops.
          tools: ["agent:researcher"]
          answer_check: ask_again
        researcher:
          description: Reads the inventory.
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: inventory.json}}]
                - There are 42 laptops in inventory.json.
          tools: [read_file]
          workspace: ./ws
          answer_check: ask_again
      """
    When the sub-agent file's agent "lead" is asked "How many laptops are in inventory.json?"
    Then the lead answered "The researcher found 42 laptops."
    And the lead's answer check says "asked_again" on "'120': in nothing the tools returned" after requests "step, step, check"
    And the lead's last request alone quotes "researcher line 1: There are 42 laptops in inventory.json." and the question "How many laptops are in inventory.json?"
    And the sub-run of call 1 says answer check "grounded" after requests "step, step"

  # --- pruned results -------------------------------------------------------------------

  Scenario: A pruned extract is read with the file's line numbers, and the pruning pass's own note is nothing read (check x pruning)
    Given a workspace log "stock.log" of 400 lines in which only these lines are not filler:
      | line | text                    |
      | 120  | laptops in stock: 42    |
      | 240  | keyboards in stock: 120 |
    And the pruning model names the lines holding "stock" by their numbers
    And an agent with model "qwen2.5-coder-0.5b-instruct", allow_tool_output_pruning true, pruning_trigger "size", window 200000 and the script:
      | reply                                                |
      | call read_file {"path": "stock.log", "limit": 400}   |
      | There are 400 laptops.                               |
      | There are 42 laptops in stock.                       |
    When the agent is asked "How many laptops are in stock?"
    Then the report says tool call 1 was pruned
    And request 2 carries 1 pruned tool messages
    And tool message 1 in request 2 contains "  120| laptops in stock: 42"
    And tool message 1 in request 2 contains "400"
    And the answer is "There are 42 laptops in stock."
    And the report's answer check says "asked_again" with the first answer "There are 400 laptops."
    And the report's answer check found "'400': in nothing the tools returned" and then "'42' on stock.log line 120"
    And the last request alone quotes exactly the lines 120 of "stock.log"

  Scenario: An opted-out result is read whole, with the file's line numbers (check x output_prune false)
    Given a workspace log "stock.log" of 400 lines in which only these lines are not filler:
      | line | text                    |
      | 120  | laptops in stock: 42    |
      | 240  | keyboards in stock: 120 |
    And the pruning model names the lines holding "stock" by their numbers
    And an agent with model "qwen2.5-coder-0.5b-instruct", allow_tool_output_pruning true, pruning_trigger "size", window 200000 and the script:
      | reply                                                                       |
      | call read_file {"path": "stock.log", "limit": 400, "output_prune": false}   |
      | 120                                                                         |
      | There are 42 laptops in stock.                                              |
    When the agent is asked "How many laptops are in stock?"
    Then the report says tool call 1 was not pruned
    And the extraction model got 0 requests
    And the answer is "There are 42 laptops in stock."
    And the report's answer check says "asked_again" with the first answer "120"
    And the last request is one message that quotes lines 120 and 240 of "stock.log" and ends with the question "How many laptops are in stock?"

  # --- trimmed results ------------------------------------------------------------------

  Scenario: A result trimmed out of the request that answered is still what the tools returned (check x trimming)
    Given an agent with model "qwen2.5-coder-0.5b-instruct", window 4000, tools "read_file, bulky" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | call bulky {"key": "a"}                      |
      | call bulky {"key": "b"}                      |
      | call bulky {"key": "c"}                      |
      | call bulky {"key": "d"}                      |
      | 120                                          |
      | There are 42 laptops in inventory.json.      |
    When the agent is asked "How many laptops are in inventory.json?"
    Then the report counts at least 3 trimmed results
    And request 6 no longer shows line 4 of "inventory.json"
    And the answer is "There are 42 laptops in inventory.json."
    And the report's answer check says "asked_again" with the first answer "120"
    And the last request is one message that quotes lines 4 and 6 of "inventory.json" and ends with the question "How many laptops are in inventory.json?"
    And the report's request kinds are "step, step, step, step, step, step, check"

  # --- resume ---------------------------------------------------------------------------

  Scenario Outline: A turn resumed after its process failed is checked as any run, each line quoted once (check x resume)
    Given the agents keep their sessions in the scenario's store
    And an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "inventory.json"}    |
      | raise connection reset by peer               |
      | <first>                                      |
      | There are 42 laptops in inventory.json.      |
    When in thread "r" the agent is asked "How many laptops are in inventory.json?" and the turn fails
    And in thread "r" the agent resumes the failed turn
    Then the report has an event mentioning "resumed after step 1"
    And the answer is "There are 42 laptops in inventory.json."
    And the report's answer check says "asked_again" with the first answer "<first>"
    And the last request alone quotes exactly the lines <lines> of "inventory.json"
    And thread "r" keeps as the answer of turn 1 the run's answer, which starts "There are 42 laptops"

    Examples:
      | first                 | lines   |
      | 120                   | 4 and 6 |
      | There are 35 laptops. | 4       |

  # --- text mode ------------------------------------------------------------------------

  Scenario: In text mode each result of a round is its own, named by the file its call read (check x text mode)
    Given a workspace with "orders.json" containing "{"laptop_orders": 7}"
    And an agent with model "qwen2.5-coder-0.5b-instruct", tool_mode "text" and the script:
      | reply                                                                                   |
      | [call read_file {"path": "orders.json"}]\n[call read_file {"path": "inventory.json"}]   |
      | 120                                                                                     |
      | There are 42 laptops in inventory.json.                                                 |
    When the agent is asked "How many laptops are in stock?"
    Then the report says tool_mode "text" and stop_reason "answer"
    And the answer is "There are 42 laptops in inventory.json."
    And the report's answer check says "asked_again" with the first answer "120"
    And the last request is one message that quotes lines 4 and 6 of "inventory.json" and ends with the question "How many laptops are in stock?"
    And the last request alone quotes exactly the lines 4 and 6 of "inventory.json"

  # --- typed answers --------------------------------------------------------------------

  Scenario: A typed answer is structured from the answer that stands: the text is checked, the instance comes from it (check x typed answers, text method)
    Given a workspace with "capitals.ini" holding these lines:
      | text                     |
      | [france]                 |
      | capital = Paris          |
      | largest_port = Marseille |
    And an agent with output_schema "answer_models:City", model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                        |
      | call read_file {"path": "capitals.ini"}      |
      | It is Marseille.                             |
      | The capital of France is Paris.              |
      | {"name": "Paris", "country": "France"}       |
    When the agent is asked "What is the capital of France according to capitals.ini?"
    Then the parsed answer is a City with name "Paris" and country "France"
    And the report says the answer was structured as "City" by the "text" method with 0 repairs
    And the report's answer check says "asked_again" with the first answer "It is Marseille."
    And the report's request kinds are "step, step, check, structured"
    And the structuring request 4 carries the question, the run's answer and the schema of City
    And the structuring request 4 does not hold "Marseille"

  Scenario: A typed answer from a server that holds replies to the schema is structured from the answer that stands too (check x typed answers, native method)
    Given the scripted HTTP server first calls read_file on "capitals.ini", then answers:
      | reply                                  |
      | It is Marseille.                       |
      | The capital of France is Paris.        |
      | {"name": "Paris", "country": "France"} |
    And a workspace with "capitals.ini" holding these lines:
      | text                     |
      | [france]                 |
      | capital = Paris          |
      | largest_port = Marseille |
    And an agents file for the scripted HTTP server whose agent "geo" reads the workspace with output_schema "answer_models:City" and answer_check "ask_again"
    When the agent "geo" of "agents.yaml" is asked "What is the capital of France according to capitals.ini?"
    Then the answer's additional_kwargs hold a City with name "Paris" and country "France"
    And the report says the answer was structured as "City" by the "native" method with 0 repairs
    And the scripted HTTP server's request 4 asks for the json_schema "City" with the properties name, country
    And the scripted HTTP server's request 3 is one user message that quotes "capitals.ini line 2: capital = Paris"
    And the scripted HTTP server's request 4 carries "The capital of France is Paris." and not "Marseille"
    And the report's answer check says "asked_again" with the first answer "It is Marseille."
