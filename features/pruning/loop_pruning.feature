Feature: Tool-output pruning in the agent loop
  With allow_tool_output_pruning, the main model sees read_file with two optional
  meta-arguments, and each read_file result passes through a stateless extraction call to
  the pruning model before it becomes a ToolMessage; the conversation itself is never
  touched. Each scenario proves one acceptance criterion of the pruning feature (issue 5,
  the source's criteria 1-9) on whole runs: a scripted main model, a separate scripted
  pruning model, and the real workspace read_file on a file in a temporary folder.

  Background:
    Given a workspace whose "app.log" reads as 50 KB with 3 lines mentioning "deadlock"
    And the extraction model keeps the lines mentioning "deadlock"
    And every agent has tools "read_file, search, list_files", allow_tool_output_pruning true, window 200000

  Scenario: Schema augmentation (D-3) - the main model sees read_file with both meta-arguments and every other tool unchanged
    Given an agent with tools "read_file, search, list_files, lookup" and the script:
      | reply            |
      | Nothing to read. |
    When the agent is asked "What is in the log?"
    Then request 1 offers read_file with optional "output_prune" and "output_prune_context"
    And request 1 offers "search, list_files, lookup" without any pruning meta-argument
    And the agent's tool objects are unchanged by the run

  Scenario: Schema augmentation (D-3) - in text mode the tool listing shows the meta-arguments and a written call is pruned
    Given an agent with tool_mode "text" and the script:
      | reply                                                                                       |
      | [call read_file {"path": "app.log", "limit": 400, "output_prune_context": "the deadlocks"}] |
      | Three deadlocks stopped the job.                                                            |
    When the agent is asked "Why did the nightly job stop?"
    Then request 1 has a system message containing "read_file {path, offset?, limit?, output_prune?, output_prune_context?}"
    And request 1 has a system message containing "- search {pattern, path?, glob?, max_results?}:"
    And the result turn in request 2 holds a pruned block of at most 400 characters
    And the tool "read_file" received {"path": "app.log", "limit": 400}
    And no tool received a pruning meta-argument

  Scenario: Criterion 2 - every read_file result goes through the extraction call before it becomes a ToolMessage
    Given an agent with the script:
      | reply                                                                                                        |
      | call read_file {"path": "app.log", "limit": 400}; read_file {"path": "app.log", "offset": 151, "limit": 250} |
      | The job stopped on a deadlock.                                                                               |
    When the agent is asked "Why did the nightly job stop?"
    Then the answer is "The job stopped on a deadlock."
    And the models were called in the order "main, prune, prune, main"
    And request 2 carries 2 pruned tool messages
    And every extraction request was one system and one human message without tools
    And every extraction request showed exactly the lines of one raw read_file output

  Scenario: Criterion 3 - a 50 KB read_file result of which three lines matter becomes a ToolMessage of at most 300 characters with markers
    Given an agent with the script:
      | reply                                                                  |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": true} |
      | Three deadlocks stopped the job.                                       |
    When the agent is asked "Why did the nightly job stop?"
    Then the read_file output had at least 51200 characters
    And tool message 1 in request 2 is at most 300 characters with both marker blocks
    And tool message 1 in request 2 keeps the 3 lines mentioning "deadlock"
    And the info block of tool message 1 in request 2 is the one line "3/400 lines kept; output_prune=false for all"
    And the tool "read_file" received {"path": "app.log", "limit": 400}
    And no tool received a pruning meta-argument
    And the report has no notes about ignored arguments

  Scenario: Criterion 3 - read_file lines copied without the prompt's numbers keep read_file's own numbers
    Given the extraction model copies the lines mentioning "deadlock" without the prompt's line numbers
    And an agent with the script:
      | reply                                            |
      | call read_file {"path": "app.log", "limit": 400} |
      | Three deadlocks stopped the job.                 |
    When the agent is asked "Why did the nightly job stop?"
    Then tool message 1 in request 2 is at most 300 characters with both marker blocks
    And tool message 1 in request 2 keeps the 3 lines mentioning "deadlock"

  Scenario: Criterion 4 - System, Human and AI messages are byte-identical in a pruned and an unpruned run of the same script
    Given an agent with system_prompt "SYSTEM-SENTINEL: answer from the logs." and the script:
      | reply                                                                                                                       |
      | say "I will read the log first." then call read_file {"path": "app.log", "limit": 400, "output_prune_context": "deadlocks"} |
      | say "Now the middle part." then call read_file {"path": "app.log", "offset": 151, "limit": 250}                             |
      | Three deadlocks stopped the job.                                                                                            |
    And a twin agent with allow_tool_output_pruning false
    When the agent and its twin are asked "Why did the nightly job stop?"
    Then the twin's answer is the agent's
    And the System, Human and AI messages of every request are byte-identical in the agent's run and its twin's
    And every tool message of the agent's run is shorter than its twin's
    And the extraction model never saw "SYSTEM-SENTINEL"
    And every extraction request showed exactly the lines of one raw read_file output

  Scenario Outline: Criterion 5 - a failing pruning call leaves the raw output in the ToolMessage, logs a warning, and the run completes (<failure>)
    Given the extraction model <failure>
    And an agent with the script:
      | reply                                            |
      | call read_file {"path": "app.log", "limit": 400} |
      | The log was too long to tell.                    |
    When the agent is asked "Why did the nightly job stop?"
    Then the answer is "The log was too long to tell."
    And tool message 1 in request 2 is the raw read_file output capped at 30000 characters
    And a warning names "read_file" and "<reason>"
    And the report says tool call 1 was not pruned
    And the extraction model got 1 requests

    Examples:
      | failure                                          | reason                                      |
      | fails with "pruning server down"                 | exception: ScriptError: pruning server down |
      | answers "Lines 101 and 201 look relevant to me." | nothing verifiable                          |
      | answers "[PRUNE_INFO_START] lines 101 and 201"   | unparseable                                 |
      | only invents lines                               | nothing verifiable                          |
      | is slower than its pruning_timeout               | timeout                                     |

  Scenario Outline: Criterion 6 - output_prune <flag> gives the raw output, capped, without a pruning call
    Given an agent with the script:
      | reply                                                                    |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": <flag>} |
      | I read the whole log.                                                    |
    When the agent is asked "Why did the nightly job stop?"
    Then tool message 1 in request 2 is the raw read_file output capped at 30000 characters
    And the extraction model got 0 requests
    And the report says tool call 1 was not pruned
    And the tool "read_file" received {"path": "app.log", "limit": 400}
    And no tool received a pruning meta-argument

    Examples:
      | flag    |
      | false   |
      | "false" |
      | "off"   |
      | 0       |

  Scenario: Criterion 7 - output_prune_context reaches the extraction prompt instead of the task context
    Given an agent with the script:
      | reply                                                                                                                                             |
      | say "REASONING-SENTINEL: the log will tell." then call read_file {"path": "app.log", "limit": 400, "output_prune_context": "the deadlock errors"} |
      | Three deadlocks.                                                                                                                                  |
    When the agent is asked "QUESTION-SENTINEL: why did the nightly job stop?"
    Then the extraction prompt contains "The reader is looking for: the deadlock errors"
    And the extraction prompt does not contain "QUESTION-SENTINEL"
    And the extraction prompt does not contain "REASONING-SENTINEL"
    And tool message 1 in request 2 keeps the 3 lines mentioning "deadlock"

  Scenario: Criterion 7 - without output_prune_context the extraction prompt carries the question and the latest reasoning
    Given an agent with the script:
      | reply                                                                                              |
      | say "REASONING-SENTINEL: the log will tell." then call read_file {"path": "app.log", "limit": 400} |
      | Three deadlocks.                                                                                   |
    When the agent is asked "QUESTION-SENTINEL: why did the nightly job stop?"
    Then the extraction prompt contains "The user asked: QUESTION-SENTINEL: why did the nightly job stop?"
    And the extraction prompt contains "The assistant's latest reasoning: REASONING-SENTINEL: the log will tell."
    And the extraction prompt does not contain "The reader is looking for"

  Scenario: A multi-turn input with pruning on: the extraction prompt quotes the current question, not turn 1
    Given an agent with the script:
      | reply                                            |
      | call read_file {"path": "app.log", "limit": 400} |
      | Three deadlocks stopped the job.                 |
    When the agent is asked "QUESTION-2: why did the nightly job stop?" after "QUESTION-1: when does the nightly job start?" was answered "At 02:00."
    Then the answer is "Three deadlocks stopped the job."
    And request 1 has a user turn containing "QUESTION-1: when does the nightly job start?"
    And request 1 ends with a human message starting "QUESTION-2: why did the nightly job stop?"
    And the report says tool call 1 was pruned
    And the extraction prompt contains "The user asked: QUESTION-2: why did the nightly job stop?"
    And the extraction prompt does not contain "QUESTION-1"
    And tool message 1 in request 2 keeps the 3 lines mentioning "deadlock"

  Scenario: Criterion 9 - with allow_tool_output_pruning false nothing changes against an agent without pruning keys
    Given an agents file with an agent "plain" without pruning keys and an agent "off" with:
      """
      allow_tool_output_pruning: false
      pruning_tools: [read_file, search]
      pruning_min_chars: 100
      pruning_model: {class: "leanloop.testing:ScriptedChatModel"}
      """
    And an agent with spec "plain" and the script:
      | reply                                                                                 |
      | call read_file {"path": "app.log", "limit": 400}; search {"pattern": "deadlock"}      |
      | call read_file {"path": "app.log", "offset": 151, "limit": 10, "output_prune": false} |
      | Three deadlocks stopped the job.                                                      |
    And a twin agent with spec "off"
    When the agent and its twin are asked "Why did the nightly job stop?"
    Then the agent and its twin sent byte-identical requests, tool schemas included
    And no request of the agent or its twin offers a pruning meta-argument
    And the agent and its twin made 3 requests each and built no extraction model
    And the agent and its twin have equal reports without a pruned call

  Scenario: A read_file result under pruning_min_chars reaches the model whole, without a pruning call
    Given an agent with pruning_min_chars 2000 and the script:
      | reply                                                        |
      | call read_file {"path": "app.log", "offset": 99, "limit": 5} |
      | One deadlock.                                                |
    When the agent is asked "Why did the nightly job stop?"
    Then tool message 1 in request 2 contains "  101| ERROR deadlock #1"
    And tool message 1 in request 2 does not contain "[PRUNE_INFO_START]"
    And the extraction model got 0 requests

  Scenario: The run report records pruned, chars_raw and chars_out per call and the characters saved in total
    Given an agent with the script:
      | reply                                                                                                                             |
      | call read_file {"path": "app.log", "limit": 400}; read_file {"path": "app.log", "offset": 2, "limit": 400, "output_prune": false} |
      | Three deadlocks.                                                                                                                  |
    When the agent is asked "Why did the nightly job stop?"
    Then the report says the call with {"path": "app.log", "limit": 400} was pruned to tool message 1 of request 2
    And the report says the call with {"path": "app.log", "offset": 2, "limit": 400} was not pruned, as tool message 2 of request 2 shows
    And the report totals the characters saved by pruning

  Scenario: The run report lists a reply's tool calls in the order the model made them, although pruning finishes later
    Given an agent with the script:
      | reply                                                                                                                             |
      | call read_file {"path": "app.log", "limit": 400}; read_file {"path": "app.log", "offset": 2, "limit": 400, "output_prune": false} |
      | Three deadlocks.                                                                                                                  |
    When the agent is asked "Why did the nightly job stop?"
    Then the report lists the read_file calls with offsets "1, 2" in that order

  Scenario: The leanloop.pruned event reaches astream_events v2 with the pass's figures
    Given an agent with the script:
      | reply                                            |
      | call read_file {"path": "app.log", "limit": 400} |
      | Three deadlocks.                                 |
    When the agent is asked "Why did the nightly job stop?" through astream_events
    Then the astream_events stream carried one "leanloop.pruned" event with the report's figures for tool call 1
    And the astream_events stream carried the extraction call as a chat model run named "leanloop.prune"

  Scenario Outline: A meta-argument sent to a tool that is not prunable never reaches it (<tool>)
    Given an agent with tools "read_file, search, list_files, <tool>" and the script:
      | reply                                                                                      |
      | call <tool> {"key": "colour", "output_prune": false, "output_prune_context": "the colour"} |
      | The colour is blue.                                                                        |
    When the agent is asked "What colour?"
    Then the tool "<tool>" received {"key": "colour"}
    And no tool received a pruning meta-argument
    And tool message 1 in request 2 is "value of colour"
    And the extraction model got 0 requests

    Examples:
      | tool                   |
      | lookup                 |
      | lookup_with_meta_names |

  Scenario: Criteria 1 and 8 hold with pruning on - opted-out results pass 75% of the budget, warn, and end in the synthesis flow
    Given an agent with window 8192, trim_tool_results false and the script:
      | reply                                                                                |
      | call read_file {"path": "app.log", "offset": 1, "limit": 400, "output_prune": false} |
      | call read_file {"path": "app.log", "offset": 2, "limit": 400, "output_prune": false} |
      | call read_file {"path": "app.log", "offset": 3, "limit": 400, "output_prune": false} |
      | call read_file {"path": "app.log", "offset": 101, "limit": 3, "output_prune": false} |
      | I found deadlocks; the rest of the log is unread.                                    |
    When the agent is asked "Why did the nightly job stop?"
    Then a warning says "of the budget"
    And an error says "starting the synthesis flow"
    And the report says stop_reason "budget_exhausted" after 5 steps
    And the last request offered no tools
    And the answer is "I found deadlocks; the rest of the log is unread."
    And the extraction model got 0 requests

  Scenario: Pruning keeps the same reads under the budget - no warning and no synthesis flow
    Given an agent with window 8192, trim_tool_results false and the script:
      | reply                                                         |
      | call read_file {"path": "app.log", "offset": 1, "limit": 400} |
      | call read_file {"path": "app.log", "offset": 2, "limit": 400} |
      | call read_file {"path": "app.log", "offset": 3, "limit": 400} |
      | call read_file {"path": "app.log", "offset": 101, "limit": 3} |
      | Three deadlocks stopped the job.                              |
    When the agent is asked "Why did the nightly job stop?"
    Then the answer is "Three deadlocks stopped the job."
    And the report says stop_reason "answer" after 5 steps
    And no budget warning was logged
    And the report says tool call 1 was pruned
    And every chunked pruning pass told its progress chunk by chunk
