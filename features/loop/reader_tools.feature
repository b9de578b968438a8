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

  Scenario: A prefetched document is trimmed like any tool result at a small window; asked for again, it runs again and the run answers (rule x trimming)
    Given an agent with window 4000, tools "read_doc, bulky" and the script:
      | reply                                            |
      | call bulky {"key": "a"}                          |
      | call bulky {"key": "b"}                          |
      | call bulky {"key": "c"}                          |
      | call read_doc {"name": "manual.txt"}             |
      | The pump restarts on its own after a power cut.  |
    When the agent is asked "What does manual.txt say about the pump?"
    Then the answer is "The pump restarts on its own after a power cut."
    And the report says stop_reason "answer"
    And the report lists the prefetched files "manual.txt"
    And request 1 has a tool result containing "manual section 49"
    And request 3 carries the prefetched read_doc result whole
    And request 4 carries the prefetched read_doc result trimmed to "Pump manual: the pump restarts on its own after a power cut."
    And every result trimmed in request 4 is still trimmed in request 5
    And report call 1 has fate "trimmed"
    And the tool "read_doc" ran 2 times
    And report call 5 notes "ran again: the result of the same call at step 0 was trimmed"
    And request 5 ends with a tool result containing "manual section 49"
