Feature: A run never passes a non-answer off as an answer
  A small model asked "answer in one or two sentences: {question}. If they do not hold the
  answer, say so." sometimes writes the instruction back, or the question, or a JSON
  object shaped like the request ("found" / "left to do"). None of those is an answer:
  the run ends as no_answer (or by the limit that stopped it), and its text says, in the
  words of that stop reason, what stopped it and what was read. The model's reply is kept
  in the report (set_aside). A run that stopped for a limit after tool calls that all
  failed has nothing to answer from: its text says so instead of the model's guess.
  (Issue 37: honest endings.)

  Background:
    Given a workspace with "bio.txt" containing "Ada Lovelace (1815-1852) published the first algorithm for a computing machine."
    And every agent has tools "read_file, list_files"

  Scenario: The guard's own prompt written back as the answer ends by repeated_calls, in words
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                   |
      | call read_file {"path": "bio.txt"}      |
      | call read_file {"path": "bio.txt"}      |
      | If they do not hold the answer, say so. |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "repeated_calls"
    And the answer mentions "I could not finish: the model kept repeating the same tool calls instead of answering (it repeats the loop's own instruction)."
    And the answer mentions "What was read: read_file(path=bio.txt)."
    And the report sets aside the reply "If they do not hold the answer, say so."
    And the run's ending reads "the text is no answer: it says what stopped the run and what was read (1 tool call)"

  Scenario: The question written back as the answer ends as no_answer
    Given an agent with the script:
      | reply                                              |
      | call read_file {"path": "bio.txt"}                 |
      | Who is described in bio.txt and what did she do?   |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "no_answer"
    And the answer mentions "I could not finish: the model's reply was not an answer (it repeats the question)."
    And the report sets aside the reply "Who is described in bio.txt and what did she do?"

  Scenario: A short answer in the question's own words is still an answer
    Given an agent with the script:
      | reply                              |
      | call read_file {"path": "bio.txt"} |
      | Ada Lovelace.                      |
    When the agent is asked "Who is described in bio.txt, Ada Lovelace or Charles Babbage?"
    Then the report says stop_reason "answer"
    And the answer is "Ada Lovelace."
    And the report sets nothing aside

  Scenario: An answer that ends with the loop's instruction is still an answer
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                                                          |
      | call read_file {"path": "bio.txt"}                                             |
      | call read_file {"path": "bio.txt"}                                             |
      | Ada Lovelace published the first algorithm. If they do not hold the answer, say so. |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "answer"
    And the answer mentions "Ada Lovelace published the first algorithm."

  Scenario: The request's JSON shape with a finding gives the finding as the answer
    Given an agent with max_rounds 1 and the script:
      | reply                                                                                    |
      | call read_file {"path": "bio.txt"}                                                       |
      | {"found": "Ada Lovelace published the first algorithm.", "left_to_do": "nothing"}      |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "max_rounds"
    And the answer is "Ada Lovelace published the first algorithm."
    And the report has an event mentioning "the reply was the request's JSON shape; its finding is the answer"

  Scenario: The request's JSON shape with nothing found is no answer, and says what was read
    Given an agent with the script:
      | reply                                                                                  |
      | call read_file {"path": "bio.txt"}                                                     |
      | {"found": "", "remaining": "Ada Lovelace.txt is not available in the workspace"}      |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "no_answer"
    And the answer mentions "(it is the request's JSON shape with nothing found in it)"
    And the answer mentions "What was read: read_file(path=bio.txt)."

  Scenario: After calls that all failed, a run stopped by its rounds does not ask the model to guess
    Given an agent with max_rounds 1 and the script:
      | reply                                        |
      | call read_file {"path": "config/port.toml"}  |
      | The service uses port 8080.                  |
    When the agent is asked "Which port does the service use?"
    Then the report says stop_reason "max_rounds"
    And the answer mentions "I could not finish: it used all its rounds before the model answered."
    And the answer mentions "No tool call returned data, so there is nothing to answer from."
    And the report lists 1 model requests
    And the report has an event mentioning "no final request: no tool call returned data; stop: max_rounds"
    And the report says the run rests on nothing
    And the run's ending reads "it used all its rounds before the model answered; the text says what stopped the run: no tool call returned data"

  Scenario: A run stopped by its rounds after a read gives the model's last reply, and says what it rests on
    Given an agent with max_rounds 1 and the script:
      | reply                                          |
      | call read_file {"path": "bio.txt"}             |
      | Ada Lovelace published the first algorithm.    |
    When the agent is asked "Who is described in bio.txt?"
    Then the report says stop_reason "max_rounds"
    And the answer is "Ada Lovelace published the first algorithm."
    And the report says the run rests on "read_file(path=bio.txt)"
    And the run's ending reads "it used all its rounds before the model answered; the text is the model's last reply, from what 1 tool call returned"

  Scenario: A streamed non-answer is followed by the ending's words (rule x streaming)
    Given an agent with stream_pieces 3 and the script:
      | reply                                              |
      | call read_file {"path": "bio.txt"}                 |
      | Who is described in bio.txt and what did she do?   |
    When the agent is asked "Who is described in bio.txt and what did she do?" through astream
    Then the streamed text ends with "What was read: read_file(path=bio.txt)."
    And the last stream chunk has no text and carries a report with stop_reason "no_answer"

  Scenario: A run out of rounds says so, not that the model asked past its limit
    Given an agent with max_rounds 2 and the script:
      | reply                                |
      | call read_file {"path": "bio.txt"}   |
      | call list_files {}                   |
      | call read_file {"path": "bio.txt"}   |
    When the agent is asked "Who is described in bio.txt?"
    Then the report says stop_reason "max_rounds"
    And the answer mentions "I could not finish: it used all its rounds before the model answered (its last reply held only a tool call)."
    And the answer does not mention "asked for more tool calls after its limit"

  Scenario: A run the guard stopped says the model kept repeating, not that it ran out of calls
    Given an agent with model "gpt-4o" and the script:
      | reply                                |
      | call read_file {"path": "bio.txt"}   |
      | call read_file {"path": "bio.txt"}   |
      | call read_file {"path": "bio.txt"}   |
      | call read_file {"path": "bio.txt"}   |
    When the agent is asked "Who is described in bio.txt?"
    Then the report says stop_reason "repeated_calls"
    And the answer mentions "I could not finish: the model kept repeating the same tool calls instead of answering"
    And the answer does not mention "asked for more tool calls after its limit"

  Scenario: With no_answer raise, a caller gets NoAnswer carrying the ending and the report
    Given an agent with no_answer "raise" and the script:
      | reply                                              |
      | call read_file {"path": "bio.txt"}                 |
      | Who is described in bio.txt and what did she do?   |
    When the agent is asked "Who is described in bio.txt and what did she do?" and the run fails
    Then the failure is a NoAnswer with stop_reason "no_answer"
    And the failure's message mentions "I could not finish: the model's reply was not an answer (it repeats the question)."
    And the failure's report rests on "read_file(path=bio.txt)"

  Scenario: With no_answer raise, an answer is returned as ever
    Given an agent with no_answer "raise" and the script:
      | reply                              |
      | call read_file {"path": "bio.txt"} |
      | Ada Lovelace.                      |
    When the agent is asked "Who is described in bio.txt?"
    Then the answer is "Ada Lovelace."

  Scenario: A sub-agent's non-answer reaches its caller as the ending's words, and its sub-report says no_answer (rule x sub-agents)
    Given the sub-agent file:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: researcher, args: {task: "Who is described in the biography and what did she do?"}}]
                - The researcher found no answer.
          tools: ["agent:researcher"]
        researcher:
          description: Finds facts in the workspace.
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: bio.txt}}]
                - Who is described in the biography and what did she do?
          tools: [read_file]
          workspace: ./ws
      """
    When the sub-agent file's agent "lead" is asked "Who is the biography about?"
    Then the lead answered "The researcher found no answer."
    And call 1 of the lead's report is "researcher" with a sub-run that stopped with "no_answer" after 2 steps
    And call 1 of the lead's report has a note starting "agent researcher: stop: no_answer"
    And the sub-run of call 1 sets aside the reply "Who is described in the biography and what did she do?"
    And the lead's tool result of call 1 starts with "I could not finish: the model's reply was not an answer (it repeats the question)."
    And the lead's tool result of call 1 mentions "What was read: read_file(path=bio.txt)."
    And the lead's tool result of call 1 is the sub-run's answer in its sub-report

  Scenario: A sub-agent with no_answer raise fails its caller's call, and its report is still nested (rule x sub-agents)
    Given the sub-agent file:
      """
      version: 1
      agents:
        lead:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: researcher, args: {task: "Who is described in the biography and what did she do?"}}]
                - The researcher found no answer.
          tools: ["agent:researcher"]
        researcher:
          description: Finds facts in the workspace.
          no_answer: raise
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: bio.txt}}]
                - Who is described in the biography and what did she do?
          tools: [read_file]
          workspace: ./ws
      """
    When the sub-agent file's agent "lead" is asked "Who is the biography about?"
    Then the lead answered "The researcher found no answer."
    And call 1 of the lead's report failed with a result starting "error: NoAnswer: the run ended by no_answer"
    And call 1 of the lead's report has a note starting "agent researcher: stop: no_answer"
    And the lead's tool result of call 1 mentions "I could not finish: the model's reply was not an answer (it repeats the question)."
    And call 1 of the lead's report is "researcher" with a sub-run that stopped with "no_answer" after 2 steps
    And the sub-run of call 1 sets aside the reply "Who is described in the biography and what did she do?"

  Scenario: A session turn that ends as no_answer keeps the ending's words as its answer, and the next turn answers (rule x sessions)
    Given the agents keep their sessions in the scenario's store
    And an agent with the script:
      | reply                                                                              |
      | call read_file {"path": "bio.txt"}                                                 |
      | {"found": "", "remaining": "the biography names nobody I could identify"}          |
      | Ada Lovelace published the first algorithm.                                        |
    When in thread "t1" the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "no_answer"
    And thread "t1" keeps as the answer of turn 1 the run's answer, which starts "I could not finish: the model's reply was not an answer"
    When in thread "t1" the agent is asked "What did she publish?"
    Then the answer is "Ada Lovelace published the first algorithm."
    And the report says stop_reason "answer"
    And the last request holds an earlier answer starting "I could not finish: the model's reply was not an answer"
    And no request of the run holds "the biography names nobody I could identify"

  Scenario: With no_answer raise, a session turn still ends, and the next turn answers (rule x sessions)
    Given the agents keep their sessions in the scenario's store
    And an agent with no_answer "raise" and the script:
      | reply                                                                              |
      | call read_file {"path": "bio.txt"}                                                 |
      | {"found": "", "remaining": "the biography names nobody I could identify"}          |
      | Ada Lovelace published the first algorithm.                                        |
    When in thread "t2" the agent is asked "Who is described in bio.txt and what did she do?" and the turn fails
    Then the failure is a NoAnswer with stop_reason "no_answer"
    When in thread "t2" the agent is asked "What did she publish?"
    Then the answer is "Ada Lovelace published the first algorithm."
    And the last request holds an earlier answer starting "I could not finish: the model's reply was not an answer"
    And no request of the run holds "the biography names nobody I could identify"
