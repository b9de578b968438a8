Feature: The first agent on a small model: an answer from what was read when the guard stops the model
  The README's first agent on the embedded 0.5B model: a question that names one file. The
  loop reads that file before the first request; the model then asks for the same read
  again (6 of 10 such questions, measured) and goes on asking after the guard's reminder,
  until the guard stops it. With the small prompting profile the loop then asks once,
  without tools, for the answer from what was read, and a plain-text reply is the model's
  answer (stop_reason "answer"). Without a result still whole in view, or when that reply
  is one more call, the run ends by repeated_calls as before, and the report says how.
  Other profiles keep the old ending. A missing file in a workspace of one file, when the
  question names no path, can only mean that file: path repair reads it (ADR 0010's
  rule: only unambiguous readings). (ADR 0011, amendment: the first agent.)

  Background:
    Given a workspace with "bio.txt" containing "Ada Lovelace (1815-1852) published the first algorithm for a computing machine."
    And the workspace has "notes.txt" containing "Meeting notes: nothing about people."
    And every agent has tools "read_file, list_files"

  Scenario: The prefetched file asked for again is answered from, without tools, and the run ends with the answer
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                          |
      | call read_file {"path": "bio.txt"}             |
      | call read_file {"path": "bio.txt"}             |
      | Ada Lovelace published the first algorithm.    |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the answer is "Ada Lovelace published the first algorithm."
    And the report says stop_reason "answer" after 3 steps
    And the report counts 2 repeated calls
    And the tool "read_file" ran 1 times
    And request 3 offered no tools
    And request 3 ends with a human message starting "Stop calling tools: you already have their results above."
    And request 3 has a user turn containing "answer in one or two sentences: Who is described in bio.txt and what did she do?"
    And request 3 has a tool result containing "Ada Lovelace (1815-1852)"
    And request 3 carries 1 model replies
    And the report has an event mentioning "asked once, without tools, for the answer from what was read: answered; stop: answer"

  Scenario: A made-up path repaired to the named file, then repeated, ends with the answer (the issue's run)
    Given an agent with model "qwen2.5-coder-0.5b-instruct", prefetch_mentioned_files false and the script:
      | reply                                            |
      | call read_file {"path": "Ada Lovelace.txt"}      |
      | call read_file {"path": "Ada Lovelace.txt"}      |
      | call read_file {"path": "Ada Lovelace.txt"}      |
      | Ada Lovelace published the first algorithm.      |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the answer is "Ada Lovelace published the first algorithm."
    And the report says stop_reason "answer" after 4 steps
    And the report counts 1 repaired calls, call 1 repaired from nothing
    And request 4 has a tool result containing "read "bio.txt" (named in the request) instead"
    And request 4 offered no tools

  Scenario: In a workspace of one file, a made-up path reads that file, and the repeats end with the answer (no file named)
    Given the workspace holds only "bio.txt"
    And an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                            |
      | call read_file {"path": "Ada Lovelace.txt"}      |
      | call read_file {"path": "Ada Lovelace.txt"}      |
      | call read_file {"path": "Ada Lovelace.txt"}      |
      | Ada Lovelace published the first algorithm.      |
    When the agent is asked "Who was Ada Lovelace and what did she do?"
    Then request 2 has a tool result containing "read "bio.txt" (the only file in the workspace) instead"
    And request 2 has a tool result containing "Ada Lovelace (1815-1852)"
    And the report counts 1 repaired calls, call 1 repaired from nothing
    And the report says stop_reason "answer" after 4 steps

  Scenario: A reply to the answer request that is one more call ends the run by repeated_calls, saying so
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                              |
      | call read_file {"path": "bio.txt"} |
      | call read_file {"path": "bio.txt"} |
      | call read_file {"path": "bio.txt"} |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "repeated_calls" after 3 steps
    And the answer mentions "I could not finish: the model kept repeating the same tool calls instead of answering (its last reply held only a tool call)"
    And the answer mentions "What was read: read_file(path=bio.txt)."
    And the tool "read_file" ran 1 times
    And the report has an event mentioning "for the answer from what was read: no answer (the reply held no text, only a call); stop: repeated_calls"

  Scenario: With nothing read, repeated failing calls end by repeated_calls without asking for a guess
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                  |
      | call read_file {"path": "missing.txt"} |
      | call read_file {"path": "missing.txt"} |
      | call read_file {"path": "missing.txt"} |
      | I found nothing.                       |
    When the agent is asked "What does the biography say?"
    Then the report says stop_reason "repeated_calls" after 3 steps
    And the report lists 3 model requests
    And the report has an event mentioning "no final request: no tool call returned data; stop: repeated_calls"
    And the answer mentions "No tool call returned data, so there is nothing to answer from."
    And the report has no event mentioning "answer from what was read"

  Scenario: A large model keeps the old ending (the default profile does not ask)
    Given an agent with model "gpt-4o" and the script:
      | reply                              |
      | call read_file {"path": "bio.txt"} |
      | call read_file {"path": "bio.txt"} |
      | Ada Lovelace.                      |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "repeated_calls" after 3 steps
    And request 3 ends with the final-answer prompt

  Scenario: In text mode the answer request leaves the tool list out too (rule x text protocol)
    Given an agent with model "qwen2.5-coder-0.5b-instruct", tool_mode "text" and the script:
      | reply                                  |
      | [call read_file {"path": "bio.txt"}]   |
      | [call read_file {"path": "bio.txt"}]   |
      | Ada Lovelace published the first algorithm. |
    When the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says tool_mode "text" and stop_reason "answer"
    And request 3 ends with a human message starting "Stop calling tools: you already have their results above."
    And request 3 has a system message without the tool list

  Scenario: The answer streams like any other (rule x astream)
    Given an agent with model "qwen2.5-coder-0.5b-instruct", stream_pieces 4 and the script:
      | reply                                       |
      | call read_file {"path": "bio.txt"}          |
      | call read_file {"path": "bio.txt"}          |
      | Ada Lovelace published the first algorithm. |
    When the agent is asked "Who is described in bio.txt and what did she do?" through astream
    Then the streamed text is exactly "Ada Lovelace published the first algorithm."
    And the report says stop_reason "answer" after 3 steps

  Scenario: A read the request no longer carries is nothing to answer from (rule x trimming by the recovery from a size refusal)
    Given a workspace with "a.txt" holding 120 numbered lines
    And the workspace has "b.txt" holding 120 numbered lines
    Given an agent with model "qwen2.5-coder-0.5b-instruct", window 32768 and the script:
      | reply                                  |
      | call read_file {"path": "a.txt"}       |
      | call read_file {"path": "b.txt"}       |
      | refuse size as llama.cpp does          |
      | call read_file {"path": "missing.txt"} |
      | call read_file {"path": "missing.txt"} |
      | call read_file {"path": "missing.txt"} |
      | Nothing left to answer from.           |
    When the agent is asked "Sum the files"
    Then the report counts 1 overflow recoveries
    And report call 1 has fate "trimmed"
    And report call 2 has fate "trimmed"
    And the report says stop_reason "repeated_calls" after 6 steps
    And the last request ends with the profile's final-answer prompt for "Sum the files"

  Scenario: A whole output asked for with output_prune false and repeated is answered from (rule x opt-out)
    Given a workspace whose "app.log" reads as 50 KB with 3 lines mentioning "deadlock"
    And the extraction model keeps the lines mentioning "deadlock"
    Given an agent with model "qwen2.5-coder-0.5b-instruct", allow_tool_output_pruning true, window 200000 and the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": false} |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": false} |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": false} |
      | Three deadlocks.                                                        |
    When the agent is asked "Why did the nightly job stop?"
    Then the answer is "Three deadlocks."
    And the report says stop_reason "answer" after 4 steps
    And the tool "read_file" ran 1 times
    And report call 1 was not pruned and the model read it

  Scenario: A pruned extract counts as read (rule x pruning)
    Given a workspace whose "app.log" reads as 50 KB with 3 lines mentioning "deadlock"
    And the extraction model keeps the lines mentioning "deadlock"
    Given an agent with model "qwen2.5-coder-0.5b-instruct", allow_tool_output_pruning true, pruning_trigger "size", window 200000 and the script:
      | reply                                            |
      | call read_file {"path": "app.log", "limit": 400} |
      | call read_file {"path": "missing.txt"}           |
      | call read_file {"path": "missing.txt"}           |
      | call read_file {"path": "missing.txt"}           |
      | Three deadlocks.                                 |
    When the agent is asked "Why did the nightly job stop?"
    Then the answer is "Three deadlocks."
    And report call 1 has fate "pruned"
    And the report says stop_reason "answer" after 5 steps

  Scenario: In a session the answer is the turn's answer, and the next turn carries it (rule x sessions)
    Given the agents keep their sessions in the scenario's store
    And an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                       |
      | call read_file {"path": "bio.txt"}          |
      | call read_file {"path": "bio.txt"}          |
      | Ada Lovelace published the first algorithm. |
      | She lived from 1815 to 1852.                |
    When in thread "t1" the agent is asked "Who is described in bio.txt and what did she do?"
    Then the report says stop_reason "answer" after 3 steps
    When in thread "t1" the agent is asked "When did she live?"
    Then the answer is "She lived from 1815 to 1852."
    And the last request holds the earlier answer "Ada Lovelace published the first algorithm."
    And the last request holds no answer request of the earlier turn

  Scenario: A resumed turn counts the reads its earlier process stored (rule x resume)
    Given the agents keep their sessions in the scenario's store
    And an agent with model "qwen2.5-coder-0.5b-instruct", repair_paths false and the script:
      | reply                                       |
      | call read_file {"path": "bio.txt"}          |
      | raise connection reset by peer              |
      | call read_file {"path": "missing.txt"}      |
      | call read_file {"path": "missing.txt"}      |
      | call read_file {"path": "missing.txt"}      |
      | Ada Lovelace published the first algorithm. |
    When in thread "r" the agent is asked "Who is described in bio.txt and what did she do?" and the turn fails
    And in thread "r" the agent resumes the failed turn
    Then the answer is "Ada Lovelace published the first algorithm."
    And the report says stop_reason "answer" after 5 steps
    And the report's tool calls hold no read of "bio.txt"

  Scenario: A sub-agent that repeats itself answers its caller (rule x sub-agents)
    Given a sub-agent workspace file "notes.txt" holding "The port is 8931."
    And the sub-agent file:
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
          prompt_profile: small
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs:
              replies:
                - tool_calls: [{name: read_file, args: {path: notes.txt}}]
                - tool_calls: [{name: read_file, args: {path: notes.txt}}]
                - tool_calls: [{name: read_file, args: {path: notes.txt}}]
                - The port is 8931.
          tools: [read_file]
          workspace: ./ws
      """
    When the sub-agent file's agent "lead" is asked "What port?"
    Then the lead answered "Port 8931."
    And call 1 of the lead's report is "researcher" with a sub-run that stopped with "answer" after 4 steps
    And the lead's tool result of call 1 is "The port is 8931."

  Scenario: model qwen on a server serving a 0.5B repairs a made-up path, as the small profile does (rule x the served model)
    Given the scripted server
    And the scripted server serves "qwen2.5-coder-0.5b-instruct-q8_0.gguf" as "qwen", a model of 494032768 parameters
    And the agents file "agents.yaml" on the scripted server:
      """
      version: 1
      agents:
        reader:
          model:
            provider: openai-compatible
            model: qwen
            base_url: <server>
            api_key: none
          tools: [read_file, list_files]
          workspace: ./ws
          prefetch_mentioned_files: false
      """
    And the scripted server's script:
      | reply                                        |
      | call read_file {"path": "Ada Lovelace.txt"}  |
      | Ada Lovelace published the first algorithm.  |
    When the agent "reader" is asked "Who is described in bio.txt and what did she do?" in Python
    Then the Python answer is "Ada Lovelace published the first algorithm."
    And the Python run's report says prompt_profile "small" and 1 repaired calls
    And the scripted server's request 2 has a tool result containing "read "bio.txt" (named in the request) instead"
    And the scripted server's request 2 has a tool result containing "Ada Lovelace (1815-1852)"

  Scenario: repair_paths false in the file still wins over the served model's profile
    Given the scripted server
    And the scripted server serves "qwen2.5-coder-0.5b-instruct-q8_0.gguf" as "qwen", a model of 494032768 parameters
    And the agents file "agents.yaml" on the scripted server:
      """
      version: 1
      agents:
        reader:
          model:
            provider: openai-compatible
            model: qwen
            base_url: <server>
            api_key: none
          tools: [read_file, list_files]
          workspace: ./ws
          prefetch_mentioned_files: false
          repair_paths: false
      """
    And the scripted server's script:
      | reply                                        |
      | call read_file {"path": "Ada Lovelace.txt"}  |
      | I could not find the file.                   |
    When the agent "reader" is asked "Who is described in bio.txt and what did she do?" in Python
    Then the Python run's report says prompt_profile "small" and 0 repaired calls
    And the scripted server's request 2 has a tool result containing "named in the request: bio.txt"
    And the scripted server's request 2 has no tool result containing "Ada Lovelace (1815-1852)"
