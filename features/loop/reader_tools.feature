Feature: A user's own reader tool gets the help read_file gets
  A Python-first agent with a plain `read_doc(name)` function was right 3 times in 10 on
  the embedded 0.5B; its first call was `read_doc({})`. A tool that reads a named resource
  (one required string parameter named like a file, a name or description about reading,
  or `metadata={"leanloop_reads": "name"}`) is prefetched with the file-like names of the
  request, and a call that leaves its name out gets the one name the request gives. A name
  the tool does not know is left out of the conversation, not shown as an error the model
  did not make. (Issue 37: the same help for every tool.)

  Background:
    Given every agent has tools "read_doc"

  Scenario: The document the request names is read before the first request
    Given an agent with the script:
      | reply                                        |
      | Ada Lovelace published the first algorithm.  |
    When the agent is asked "Who is described in bio.txt?"
    Then the answer is "Ada Lovelace published the first algorithm."
    And the report lists the prefetched files "bio.txt"
    And request 1 has a tool result containing "Ada Lovelace (1815-1852)"
    And the report says stop_reason "answer" after 1 steps

  Scenario: A name the reader does not know is left out of the conversation
    Given an agent with the script:
      | reply                  |
      | I could not find it.   |
    When the agent is asked "What does missing.txt say?"
    Then request 1 carries 0 model replies
    And the report has an event mentioning "prefetch: read_doc found none of missing.txt; left out of the conversation"

  Scenario: A call that leaves the name out gets the one name the request gives
    Given an agent with prefetch_mentioned_files false and the script:
      | reply                                   |
      | call read_doc {"properties": {}}        |
      | Ada Lovelace.                           |
    When the agent is asked "Who is described in bio.txt?"
    Then request 2 has a tool result containing "[filled in name: bio.txt (the one file the request names)]"
    And request 2 has a tool result containing "ignored unknown arguments: properties"
    And request 2 has a tool result containing "Ada Lovelace (1815-1852)"
    And the answer is "Ada Lovelace."

  Scenario: With two names in the request the missing one is not guessed
    Given an agent with prefetch_mentioned_files false and the script:
      | reply                       |
      | call read_doc {}            |
      | I need a name.              |
    When the agent is asked "Compare bio.txt and notes.txt"
    Then request 2 has a tool result containing "error:"
    And request 2 has no tool result containing "filled in name"

  Scenario: The small profile's answer from what was read works for the reader too (rule x the guard)
    Given an agent with model "qwen2.5-coder-0.5b-instruct" and the script:
      | reply                                  |
      | call read_doc {"name": "bio.txt"}      |
      | call read_doc {"name": "bio.txt"}      |
      | Ada Lovelace published the first algorithm. |
    When the agent is asked "Who is described in bio.txt?"
    Then the answer is "Ada Lovelace published the first algorithm."
    And the report says stop_reason "answer"
    And the tool "read_doc" ran 1 times
