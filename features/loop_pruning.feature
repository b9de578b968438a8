Feature: Tool-output pruning in the agent loop
  With allow_tool_output_pruning, the main model sees read_file with two optional
  meta-arguments, and each read_file result passes through a stateless extraction call to
  the pruning model before it becomes a ToolMessage; the conversation itself is never
  touched. Each scenario proves one acceptance criterion of the pruning feature (issue 5,
  the source's criteria 1-9) on whole runs: a scripted main model, a separate scripted
  pruning model, and the real workspace read_file on a file in a temporary folder.

  Background:
    Given a pruning workspace whose "app.log" reads as 50 KB with 3 lines mentioning "deadlock"
    And the pruning agent's extraction model keeps the lines mentioning "deadlock"

  Scenario: Schema augmentation (D-3) - the main model sees read_file with both meta-arguments and every other tool unchanged
    Given a pruning agent with the lookup tool and the script:
      | reply                                  |
      | Nothing to read.                       |
    When the pruning agent is asked "What is in the log?"
    Then main request 1 of the pruned run offers read_file with optional "output_prune" and "output_prune_context"
    And main request 1 of the pruned run offers "search, list_files, lookup" without any pruning meta-argument
    And the pruning agent's tool objects are unchanged by the run

  Scenario: Schema augmentation (D-3) - in text mode the tool listing shows the meta-arguments and a written call is pruned
    Given a pruning agent with the settings "tool_mode=text" and the script:
      | reply                                                                                                                 |
      | write {"name": "read_file", "arguments": {"path": "app.log", "limit": 400, "output_prune_context": "the deadlocks"}} |
      | Three deadlocks stopped the job.                                                                                      |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then the system prompt of main request 1 of the pruned run lists "read_file {path, offset?, limit?, output_prune?, output_prune_context?}"
    And the system prompt of main request 1 of the pruned run lists "- search {pattern, path?, glob?, max_results?}:"
    And the result turn in main request 2 of the pruned run holds a pruned block of at most 400 characters
    And the pruned run's tool "read_file" received exactly {"path": "app.log", "limit": 400}

  Scenario: Criterion 2 - every read_file result goes through the extraction call before it becomes a ToolMessage
    Given a pruning agent with the script:
      | reply                                                                                                      |
      | call read_file {"path": "app.log", "limit": 400}; read_file {"path": "app.log", "offset": 151, "limit": 250} |
      | The job stopped on a deadlock.                                                                             |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then the pruned run answered "The job stopped on a deadlock."
    And the pruned run's models were called in the order "main, prune, prune, main"
    And main request 2 of the pruned run carries 2 pruned tool messages
    And every extraction request of the pruned run was one system and one human message without tools
    And every extraction request of the pruned run showed exactly the lines of one raw read_file output

  Scenario: Criterion 3 - a 50 KB read_file result of which three lines matter becomes a ToolMessage of at most 300 characters with markers
    Given a pruning agent with the script:
      | reply                                                                    |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": true}   |
      | Three deadlocks stopped the job.                                         |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then the pruned run's read_file produced at least 51200 characters
    And tool message 1 in main request 2 of the pruned run is at most 300 characters with both marker blocks
    And tool message 1 in main request 2 of the pruned run keeps the 3 lines mentioning "deadlock"
    And tool message 1 in main request 2 of the pruned run says "call again with output_prune=false for the full output"
    And the pruned run's tool "read_file" received exactly {"path": "app.log", "limit": 400}
    And the pruned run's report has no notes about ignored arguments

  Scenario: Criterion 3 - read_file lines copied without the prompt's numbers keep read_file's own numbers
    Given the pruning agent's extraction model copies the lines mentioning "deadlock" without the prompt's line numbers
    And a pruning agent with the script:
      | reply                                                |
      | call read_file {"path": "app.log", "limit": 400}     |
      | Three deadlocks stopped the job.                     |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then tool message 1 in main request 2 of the pruned run is at most 300 characters with both marker blocks
    And tool message 1 in main request 2 of the pruned run keeps the 3 lines mentioning "deadlock"

  Scenario: Criterion 4 - System, Human and AI messages are byte-identical in a pruned and an unpruned run of the same script
    Given a pruning agent with the system prompt "SYSTEM-SENTINEL: answer from the logs." and the script:
      | reply                                                                                                                  |
      | say "I will read the log first." then call read_file {"path": "app.log", "limit": 400, "output_prune_context": "deadlocks"} |
      | say "Now the middle part." then call read_file {"path": "app.log", "offset": 151, "limit": 250}                     |
      | Three deadlocks stopped the job.                                                                                       |
    When the pruning agent and its unpruned twin are each asked "Why did the nightly job stop?"
    Then the System, Human and AI messages of every main request are byte-identical in the pruned run and its unpruned twin
    And every tool message of the pruned run is shorter than its unpruned twin's
    And the pruned run's extraction model never saw "SYSTEM-SENTINEL"
    And every extraction request of the pruned run showed exactly the lines of one raw read_file output

  Scenario Outline: Criterion 5 - a failing pruning call leaves the raw output in the ToolMessage, logs a warning, and the run completes (<failure>)
    Given the pruning agent's extraction model <failure>
    And a pruning agent with the script:
      | reply                                                |
      | call read_file {"path": "app.log", "limit": 400}     |
      | The log was too long to tell.                        |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then the pruned run answered "The log was too long to tell."
    And tool message 1 in main request 2 of the pruned run is the raw read_file output capped at 30000 characters
    And a pruned-run warning names "read_file" and "<reason>"
    And the pruned run's report says tool call 1 was not pruned
    And the pruned run's extraction model got 1 requests

    Examples:
      | failure                                            | reason                                   |
      | fails with "pruning server down"                   | exception: ScriptError: pruning server down |
      | answers "Lines 101 and 201 look relevant to me."   | unparseable                              |
      | only invents lines                                 | nothing verifiable                       |
      | is slower than its pruning_timeout                 | timeout                                  |

  Scenario Outline: Criterion 6 - output_prune <flag> gives the raw output, capped, without a pruning call
    Given a pruning agent with the script:
      | reply                                                                  |
      | call read_file {"path": "app.log", "limit": 400, "output_prune": <flag>} |
      | I read the whole log.                                                  |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then tool message 1 in main request 2 of the pruned run is the raw read_file output capped at 30000 characters
    And the pruned run's extraction model got 0 requests
    And the pruned run's report says tool call 1 was not pruned
    And the pruned run's tool "read_file" received exactly {"path": "app.log", "limit": 400}

    Examples:
      | flag    |
      | false   |
      | "false" |
      | "off"   |
      | 0       |

  Scenario: Criterion 7 - output_prune_context reaches the extraction prompt instead of the task context
    Given a pruning agent with the script:
      | reply                                                                                                                        |
      | say "REASONING-SENTINEL: the log will tell." then call read_file {"path": "app.log", "limit": 400, "output_prune_context": "the deadlock errors"} |
      | Three deadlocks.                                                                                                             |
    When the pruning agent is asked "QUESTION-SENTINEL: why did the nightly job stop?"
    Then the extraction prompt of the pruned run contains "The reader is looking for: the deadlock errors"
    And the extraction prompt of the pruned run does not contain "QUESTION-SENTINEL"
    And the extraction prompt of the pruned run does not contain "REASONING-SENTINEL"
    And tool message 1 in main request 2 of the pruned run keeps the 3 lines mentioning "deadlock"

  Scenario: Criterion 7 - without output_prune_context the extraction prompt carries the question and the latest reasoning
    Given a pruning agent with the script:
      | reply                                                                                   |
      | say "REASONING-SENTINEL: the log will tell." then call read_file {"path": "app.log", "limit": 400} |
      | Three deadlocks.                                                                        |
    When the pruning agent is asked "QUESTION-SENTINEL: why did the nightly job stop?"
    Then the extraction prompt of the pruned run contains "The user asked: QUESTION-SENTINEL: why did the nightly job stop?"
    And the extraction prompt of the pruned run contains "The assistant's latest reasoning: REASONING-SENTINEL: the log will tell."
    And the extraction prompt of the pruned run does not contain "The reader is looking for"

  Scenario: Criterion 9 - with allow_tool_output_pruning false nothing changes against an agent without pruning keys
    Given a pruning agents file with an agent "plain" without pruning keys and an agent "off" with:
      """
      allow_tool_output_pruning: false
      pruning_tools: [read_file, search]
      pruning_min_chars: 100
      pruning_model: {class: "leanloop.testing:ScriptedChatModel"}
      """
    When the pruning agents "plain" and "off" each run the script with the question "Why did the nightly job stop?":
      | reply                                                                                    |
      | call read_file {"path": "app.log", "limit": 400}; search {"pattern": "deadlock"}       |
      | call read_file {"path": "app.log", "offset": 151, "limit": 10, "output_prune": false}  |
      | Three deadlocks stopped the job.                                                         |
    Then the pruning agents "plain" and "off" sent byte-identical requests, tool schemas included
    And no request of the pruning agents "plain" and "off" offers a pruning meta-argument
    And the pruning agents "plain" and "off" made 3 requests each and built no extraction model
    And the pruning agents "plain" and "off" have equal reports without a pruned call

  Scenario: A read_file result under pruning_min_chars reaches the model whole, without a pruning call
    Given a pruning agent with the settings "pruning_min_chars=2000" and the script:
      | reply                                                          |
      | call read_file {"path": "app.log", "offset": 99, "limit": 5}   |
      | One deadlock.                                                  |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then tool message 1 in main request 2 of the pruned run contains "  101| ERROR deadlock #1"
    And tool message 1 in main request 2 of the pruned run does not contain "[PRUNE_INFO_START]"
    And the pruned run's extraction model got 0 requests

  Scenario: The run report records pruned, chars_raw and chars_out per call and the characters saved in total
    Given a pruning agent with the script:
      | reply                                                                                                                                |
      | call read_file {"path": "app.log", "limit": 400}; read_file {"path": "app.log", "offset": 2, "limit": 400, "output_prune": false} |
      | Three deadlocks.                                                                                                                     |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then the pruned run's report says the call with {"path": "app.log", "limit": 400} was pruned to tool message 1 of main request 2
    And the pruned run's report says the call with {"path": "app.log", "offset": 2, "limit": 400} was not pruned, as tool message 2 of main request 2 shows
    And the pruned run's report totals the characters saved by pruning

  Scenario: The run report lists a reply's tool calls in the order the model made them, although pruning finishes later
    Given a pruning agent with the script:
      | reply                                                                                                                                |
      | call read_file {"path": "app.log", "limit": 400}; read_file {"path": "app.log", "offset": 2, "limit": 400, "output_prune": false} |
      | Three deadlocks.                                                                                                                     |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then the pruned run's report lists the read_file calls with offsets "1, 2" in that order

  Scenario: The leanloop.pruned event reaches astream_events v2 with the pass's figures
    Given a pruning agent with the script:
      | reply                                                |
      | call read_file {"path": "app.log", "limit": 400}     |
      | Three deadlocks.                                     |
    When the pruning agent is asked "Why did the nightly job stop?" through astream_events
    Then the pruned run streamed one "leanloop.pruned" event with the report's figures for tool call 1
    And the pruned run streamed the extraction call as a chat model run named "leanloop.prune"

  Scenario Outline: A meta-argument sent to a tool that is not prunable never reaches it (<tool>)
    Given a pruning agent with the <tool> tool and the script:
      | reply                                                                                       |
      | call <tool> {"key": "colour", "output_prune": false, "output_prune_context": "the colour"} |
      | The colour is blue.                                                                         |
    When the pruning agent is asked "What colour?"
    Then the pruned run's tool "<tool>" received exactly {"key": "colour"}
    And tool message 1 in main request 2 of the pruned run is "value of colour"
    And the pruned run's extraction model got 0 requests

    Examples:
      | tool                   |
      | lookup                 |
      | lookup_with_meta_names |

  Scenario: Criteria 1 and 8 hold with pruning on - opted-out results pass 75% of the budget, warn, and end in the synthesis flow
    Given a pruning agent with the settings "context_window=8192, trim_tool_results=false" and the script:
      | reply                                                                    |
      | call read_file {"path": "app.log", "offset": 1, "limit": 400, "output_prune": false}  |
      | call read_file {"path": "app.log", "offset": 2, "limit": 400, "output_prune": false}  |
      | call read_file {"path": "app.log", "offset": 3, "limit": 400, "output_prune": false}  |
      | call read_file {"path": "app.log", "offset": 101, "limit": 3, "output_prune": false}    |
      | I found deadlocks; the rest of the log is unread.                        |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then a pruned-run warning says "of the budget"
    And a pruned-run error says "starting the synthesis flow"
    And the pruned run stopped with "budget_exhausted" after 4 steps
    And the last main request of the pruned run offered no tools
    And the pruned run answered "I found deadlocks; the rest of the log is unread."
    And the pruned run's extraction model got 0 requests

  Scenario: Pruning keeps the same reads under the budget - no warning and no synthesis flow
    Given a pruning agent with the settings "context_window=8192, trim_tool_results=false" and the script:
      | reply                                                  |
      | call read_file {"path": "app.log", "offset": 1, "limit": 400}       |
      | call read_file {"path": "app.log", "offset": 2, "limit": 400}       |
      | call read_file {"path": "app.log", "offset": 3, "limit": 400}       |
      | call read_file {"path": "app.log", "offset": 101, "limit": 3}         |
      | Three deadlocks stopped the job.                       |
    When the pruning agent is asked "Why did the nightly job stop?"
    Then the pruned run answered "Three deadlocks stopped the job."
    And the pruned run stopped with "answer" after 4 steps
    And the pruned run logged no budget warning
    And the pruned run's report says tool call 1 was pruned
