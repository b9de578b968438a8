Feature: Every request's prompt prefix stays byte-stable across the steps of a run
  llama.cpp keeps a slot's last prompt (cache_prompt) and evaluates only what follows the
  longest prefix the next prompt shares with it, so a loop whose requests grow by
  appending pays only for the new tail. The system prompt, the tool list and earlier turns
  stay as they were sent; budget notes are appended, never rewritten. A trim changes an
  earlier result once, at the step the report says trimmed it (the tool call's
  trimmed_at), and the trimmed copy is sent byte for byte the same from then on.

  Each request of the scripted main model is serialized as the server receives it: in
  native mode its messages as the OpenAI chat API carries them (role, content, tool calls
  with ids and JSON arguments, tool_call_id; the tools field is compared on its own), in
  text mode the ChatML prompt the embedded server's template renders for a request
  without a tools field. "The prompt prefix broke at request N" means that request N-1's
  serialization is not a prefix of request N's.

  Background:
    Given every agent has tools "lookup, bulky, huge"

  Scenario: Native mode without trimming: every request extends the one before it
    Given an agent with system_prompt "Answer from the tables.", window 128000 and the script:
      | reply                                              |
      | call lookup {"key": "a"}                           |
      | say "Now the report." then call bulky {"key": "b"} |
      | call lookup {"key": "c"}; lookup {"key": "d"}      |
      | say "One more." then call bulky {"key": "e"}       |
      | a to e are in the tables.                          |
    When the agent is asked "What do a to e hold?"
    Then the answer is "a to e are in the tables."
    And the model received 5 requests
    And every request's prompt extends the one before it byte for byte
    And every request that offered tools offered the same tool list
    And the run emitted no leanloop.synthesis and no leanloop.trimmed event

  Scenario: Native mode in a small window: the prefix breaks only where a result is trimmed, and a trimmed result stays trimmed
    Given an agent with window 4000 and the script:
      | reply                    |
      | call bulky {"key": "a"}  |
      | call bulky {"key": "b"}  |
      | call bulky {"key": "c"}  |
      | call bulky {"key": "d"}  |
      | call bulky {"key": "e"}  |
      | All five are summarised. |
    When the agent is asked "Summarise a to e"
    Then the answer is "All five are summarised."
    And the prompt prefix broke at least once
    And the prompt prefix broke only at results the report says that step trimmed
    And every result trimmed in a request is byte-identical in every later request
    And every request that offered tools offered the same tool list

  # A trim cuts to the trim target, below the ceiling: the requests after it extend the
  # trimmed view while the kept trims leave it under the ceiling (before the fix every
  # later step trimmed again: requests 6 to 9 each broke the prefix).
  Scenario: A trim leaves headroom: the request after a trim extends the trimmed view
    Given an agent with window 6000 and the script:
      | reply                   |
      | call bulky {"key": "a"} |
      | call bulky {"key": "b"} |
      | call bulky {"key": "c"} |
      | call bulky {"key": "d"} |
      | call bulky {"key": "e"} |
      | call bulky {"key": "f"} |
      | call bulky {"key": "g"} |
      | call bulky {"key": "h"} |
      | a to h are summarised.  |
    When the agent is asked "Summarise a to h"
    Then the answer is "a to h are summarised."
    And the prompt prefix broke only at results the report says that step trimmed
    And every result trimmed in a request is byte-identical in every later request
    And the request after each break of the prompt prefix extends it

  Scenario: The tool-less final request keeps every result earlier requests trimmed
    The final request carries no tool schemas, so its estimate is smaller than the step
    before; trimming from scratch would send some trimmed results whole again. The view
    of the previous request (fit's `start`) keeps them trimmed.
    Given a workspace with "notes.txt" containing "Nothing to see."
    And an agent with tools "read_file, search, list_files, lookup, bulky", window 5000, max_rounds 6 and the script:
      | reply                    |
      | call bulky {"key": "a"}  |
      | call bulky {"key": "b"}  |
      | call bulky {"key": "c"}  |
      | call bulky {"key": "d"}  |
      | call bulky {"key": "e"}  |
      | call lookup {"key": "f"} |
      | a to f are summarised.   |
    When the agent is asked "Summarise a to f"
    Then the report says stop_reason "max_rounds"
    And the model received 7 requests
    And request 7 offered no tools
    And the prompt prefix broke at least once
    And the prompt prefix broke only at results the report says that step trimmed
    And every result trimmed in a request is byte-identical in every later request

  # The one break that is not a trim: a request whose untrimmed history fits again (here
  # the tool-less final request, without the tool schemas) is sent whole, so the model
  # answers from the whole results (budget_trimming.feature, "A conversation that fits
  # again is sent whole"). The server reads the prompt again from the first result that
  # was trimmed: once, on the last request.
  Scenario: A tool-less final request that fits untrimmed is sent whole, breaking the prefix once
    Given a workspace with "notes.txt" containing "Nothing to see."
    And an agent with tools "read_file, search, list_files, lookup, bulky", window 5000, max_rounds 5 and the script:
      | reply                    |
      | call bulky {"key": "a"}  |
      | call bulky {"key": "b"}  |
      | call bulky {"key": "c"}  |
      | call bulky {"key": "d"}  |
      | call lookup {"key": "f"} |
      | a to f are summarised.   |
    When the agent is asked "Summarise a to f"
    Then the report says stop_reason "max_rounds"
    And the model received 6 requests
    And request 6 offered no tools
    And the prompt prefix broke only at requests "5, 6"

  Scenario: Native mode: the synthesis flow appends its instruction and the final request
    Given an agent with window 6000, trim_tool_results false and the script:
      | reply                     |
      | call bulky {"key": "a"}   |
      | call bulky {"key": "b"}   |
      | call bulky {"key": "c"}   |
      | call bulky {"key": "d"}   |
      | call bulky {"key": "e"}   |
      | call lookup {"key": "f"}  |
      | Here is what a to f hold. |
    When the agent is asked "Summarise a to f"
    Then the report says stop_reason "budget_exhausted"
    And the model received 7 requests
    And the synthesis instruction appears once in request 6
    And request 7 offered no tools
    And request 7 ends with the final-answer prompt
    And every request's prompt extends the one before it byte for byte
    And every request that offered tools offered the same tool list

  Scenario: Text mode, small profile: the first answer turn drops the tool list once, later ones extend it
    Given an agent with tool_mode "text", prompt_profile "small", system_prompt "Answer from the tables." and the script:
      | reply                      |
      | [call lookup {"key": "a"}] |
      | [call bulky {"key": "b"}]  |
      | [call lookup {"key": "c"}] |
      | a, b and c are known.      |
    When the agent is asked "What do a, b and c hold?"
    Then the answer is "a, b and c are known."
    And the prompt prefix broke only at requests "2"
    And request 2 changed only the system message of request 1, which lost the tool list

  Scenario: Text mode, small profile: a correction turn shows the tool list again for one request
    A correction of a broken call is not an answer turn, so its request lists the tools
    again and the answer turn after it drops them again: two breaks per correction.
    Given an agent with tool_mode "text", prompt_profile "small" and the script:
      | reply                                                    |
      | [call lookup {"key": "a"}]                               |
      | ```tool\n{"name": "lookup", "arguments": {"key": }}\n``` |
      | [call lookup {"key": "c"}]                               |
      | a and c are known.                                       |
    When the agent is asked "What do a and c hold?"
    Then the answer is "a and c are known."
    And the prompt prefix broke only at requests "2, 3, 4"
    And request 2 changed only the system message of request 1, which lost the tool list
    And request 3 changed only the system message of request 2, which got the tool list back
    And request 4 changed only the system message of request 3, which lost the tool list

  Scenario: Text mode, default profile: the tool list stays until the tool-less final request drops it
    Given an agent with tool_mode "text", prompt_profile "default", system_prompt "Answer from the tables.", max_rounds 3 and the script:
      | reply                      |
      | [call lookup {"key": "a"}] |
      | [call lookup {"key": "b"}] |
      | [call lookup {"key": "c"}] |
      | a, b and c are known.      |
    When the agent is asked "What do a, b and c hold?"
    Then the report says stop_reason "max_rounds"
    And request 4 ends with the final-answer prompt
    And the prompt prefix broke only at requests "4"
    And request 4 changed only the system message of request 3, which lost the tool list

  # The synthesis instruction is a human turn after the last result turn: before the fix
  # its request got the tool list back in the system message (request 6 shared 218 of
  # 11,226 characters with request 5) and the final request dropped it again (218 of
  # 14,770): two whole-prompt evaluations at the largest prompts of the run.
  Scenario: Text mode, small profile: the synthesis flow appends rather than rewrites
    Given an agent with tool_mode "text", prompt_profile "small", window 6000, trim_tool_results false and the script:
      | reply                      |
      | [call bulky {"key": "a"}]  |
      | [call bulky {"key": "b"}]  |
      | [call bulky {"key": "c"}]  |
      | [call bulky {"key": "d"}]  |
      | [call bulky {"key": "e"}]  |
      | [call lookup {"key": "f"}] |
      | a to f are summarised.     |
    When the agent is asked "Summarise a to f"
    Then the report says stop_reason "budget_exhausted"
    And the model received 7 requests
    And request 6 ends with a human message starting "Context is almost full."
    And the prompt prefix broke only at requests "2"

  Scenario: A pruned result is sent byte for byte the same in every later request
    Given a workspace whose "app.log" reads as 50 KB with 3 lines mentioning "deadlock"
    And the extraction model keeps the lines mentioning "deadlock"
    And an agent with tools "read_file, lookup", allow_tool_output_pruning true, window 200000 and the script:
      | reply                                            |
      | call read_file {"path": "app.log", "limit": 400} |
      | call lookup {"key": "a"}                         |
      | call lookup {"key": "b"}                         |
      | Three deadlocks stopped the job.                 |
    When the agent is asked "Why did the nightly job stop?"
    Then the answer is "Three deadlocks stopped the job."
    And request 2 carries 1 pruned tool messages
    And every request's prompt extends the one before it byte for byte
    And every pruned result is whole and byte-identical in every later request

  Scenario: In a small window raw results are trimmed and the pruned result stays whole and the same
    Given a workspace whose "app.log" reads as 50 KB with 3 lines mentioning "deadlock"
    And the extraction model keeps the lines mentioning "deadlock"
    And an agent with tools "read_file, bulky", allow_tool_output_pruning true, window 6000 and the script:
      | reply                                            |
      | call read_file {"path": "app.log", "limit": 400} |
      | call bulky {"key": "a"}                          |
      | call bulky {"key": "b"}                          |
      | call bulky {"key": "c"}                          |
      | call bulky {"key": "d"}                          |
      | call bulky {"key": "e"}                          |
      | Three deadlocks stopped the job.                 |
    When the agent is asked "Why did the nightly job stop?"
    Then the answer is "Three deadlocks stopped the job."
    And the prompt prefix broke at least once
    And the prompt prefix broke only at results the report says that step trimmed
    And every result trimmed in a request is byte-identical in every later request
    And every pruned result is whole and byte-identical in every later request
