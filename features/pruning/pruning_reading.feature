Feature: Reading best first, stopping early and reading on, crossed with the older rules
  Two rules of ADR 0006 amendment 5 meet every older promise here, on whole runs: a pass
  reads small windows around the focus's hits, best first, stops when the evidence stops
  and names every line it did not read (on one info line when only lines without a focus
  word were left, else with the read_file(offset=, limit=) call that reads them); and a
  read_file call the pass may prune, without a limit and not opted out, reads on to the
  end of the file. The older promises: output_prune false and a limit get
  exactly what they ask for, the repeat guard never hides data, an identical extract is
  reused, trimming, sessions (and their resume) and sub-agents.

  The log has 640 lines; four say something, spread so that three lie beyond the first
  200-line page. The pruning model is declared small (tiny-pruner: chunks of at most
  1,024 tokens, one window a request) with a 4,096-token window, so the log needs many
  requests; it copies the lines holding "ERROR". The trigger is size (every large result
  is pruned) unless a scenario says otherwise.

  Background:
    Given a workspace log "app.log" of 640 lines in which only these lines are not filler:
      | line | text                                                                                |
      | 130  | 02:30:01 ERROR worker-1 deadlock #1 on table orders; transaction rolled back        |
      | 350  | 02:30:02 ERROR worker-2 deadlock #2 on table orders; transaction rolled back        |
      | 470  | 02:40:00 ERROR worker-5 lock wait timeout on table invoices; the nightly job stopped |
      | 590  | 02:30:03 ERROR worker-3 deadlock #3 on table orders; transaction rolled back        |
    And the pruning model keeps the lines holding "ERROR"
    And the pruning model is declared as a small model with a window of 4096 tokens
    And every agent has tools "read_file", allow_tool_output_pruning true, window 200000, pruning_trigger "size", pruning_concurrency 1

  Scenario: A pruned read_file without a limit reads on to the end, reads the windows with the focus word, and names the rest
    Given an agent with the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | Three deadlocks on table orders.                                        |
    When the agent is asked "Why did the nightly job stop?"
    Then the tool "read_file" received {"path": "app.log"} then {"path": "app.log", "offset": 201, "limit": 400} then {"path": "app.log", "offset": 601, "limit": 400}
    And report call 1 was pruned and notes that it read on to line 640
    And the pass before request 2 read 3 request(s), one window each around a line holding "deadlock"
    And tool message 1 in request 2 shows the log's lines 130, 350 and 590
    And tool message 1 in request 2 shows no filler line
    And every line of the log the pass before request 2 did not read is named as unread on the one info line of tool message 1

  Scenario: output_prune false on a read_file without a limit gets exactly the 200-line page it asked for (reading on x opt-out)
    Given an agent with the script:
      | reply                                                     |
      | call read_file {"path": "app.log", "output_prune": false} |
      | The first page shows no error.                            |
    When the agent is asked "Why did the nightly job stop?"
    Then the tool "read_file" received {"path": "app.log"}
    And tool message 1 in request 2 is exactly what read_file gives for {"path": "app.log"}
    And the extraction model got 0 requests
    And the report says tool call 1 was not pruned
    And report call 1 did not read on

  Scenario: A read_file with a limit is pruned on what it asked for, without reading on (reading on x limit)
    Given an agent with the script:
      | reply                                                                                |
      | call read_file {"path": "app.log", "limit": 50, "output_prune_context": "deadlocks"} |
      | The first lines say nothing.                                                         |
    When the agent is asked "Why did the nightly job stop?"
    Then the tool "read_file" received {"path": "app.log", "limit": 50}
    And the report says tool call 1 was pruned
    And report call 1 did not read on
    And the pass before request 2 showed the pruning model only lines 1-50

  Scenario Outline: A range the early stop left unread, read later with the call the result named, is no repeat and comes back (early stop x unread ranges x the guard, trigger <trigger>)
    Given a reading agent with pruning_trigger "<trigger>" and the script:
      | reply                                                              |
      | call read_file {"path": "app.log"}                                 |
      | call the read_file a pruned result named for line 470 of "app.log" |
      | Three deadlocks, and a lock wait timeout on table invoices.        |
    When the agent is asked "Which deadlocks were there?"
    Then the answer is "Three deadlocks, and a lock wait timeout on table invoices."
    And the report says stop_reason "answer" after 3 steps
    And report call 1 has fate "pruned"
    And tool message 1 in request 2 shows the log's lines 130, 350 and 590
    And the read_file call a pruned result named for line 470 ran as named, and was no repeat
    And the report counts 0 repeated calls
    And tool message 2 in request 3 shows the log's line 470
    And report call 2 has fate "<fate>"

    Examples:
      | trigger | fate   |
      | size    | pruned |
      | budget  | kept   |

  Scenario: A pruned result trimmed from the view and asked for again reuses the early-stopped extract (early stop x reuse x trimming x the guard)
    Given the workspace has "b.txt" holding 60 numbered lines
    And the workspace has "c.txt" holding 60 numbered lines
    And the workspace has "d.txt" holding 60 numbered lines
    And an agent with window 3000, pruning_min_chars 5000 and the script:
      | reply                                                                                      |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"}                    |
      | call read_file {"path": "b.txt"}; read_file {"path": "c.txt"}; read_file {"path": "d.txt"} |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"}                    |
      | Three deadlocks on table orders.                                                           |
    When the agent is asked "Why did the nightly job stop?"
    Then report call 1 has fate "trimmed"
    And request 3 has no tool result containing "deadlock #1"
    And report call 5 notes "ran again: the result of the same call at step 1 was trimmed"
    And report call 5 was pruned and notes that it read on to line 640
    And the pass before request 4 made no extraction request
    And the extraction model got 3 requests
    And the "leanloop.pruned" events say reused false, true
    And the report has an event mentioning "step 3: read_file output identical to one pruned earlier; its extract reused"
    And tool message 5 in request 4 shows the log's lines 130, 350 and 590

  # A focus replaces the task context in the extraction prompt and the scoring, so the
  # reuse key leaves the task context out when there is a focus: a model that writes a
  # line of reasoning with each call still gets its extract reused (before the fix the
  # second pass sent 3 more extraction requests).
  Scenario: A trimmed extract asked for again with the same focus is reused although the model's reasoning changed (early stop x reuse x trimming)
    Given the workspace has "b.txt" holding 60 numbered lines
    And the workspace has "c.txt" holding 60 numbered lines
    And the workspace has "d.txt" holding 60 numbered lines
    And an agent with window 3000, pruning_min_chars 5000 and the script:
      | reply                                                                                                                 |
      | say "First the deadlocks." then call read_file {"path": "app.log", "output_prune_context": "deadlocks"}               |
      | call read_file {"path": "b.txt"}; read_file {"path": "c.txt"}; read_file {"path": "d.txt"}                            |
      | say "Back to the deadlocks, once more." then call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | Three deadlocks on table orders.                                                                                      |
    When the agent is asked "Why did the nightly job stop?"
    Then report call 1 has fate "trimmed"
    And report call 5 notes "ran again: the result of the same call at step 1 was trimmed"
    And the pass before request 4 made no extraction request
    And the "leanloop.pruned" events say reused false, true

  Scenario: The same read spelled another way gives the same output and reuses the early-stopped extract (early stop x reuse)
    Given an agent with the script:
      | reply                                                                                 |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"}               |
      | call read_file {"path": "app.log", "offset": 1, "output_prune_context": "deadlocks"} |
      | Three deadlocks on table orders.                                                      |
    When the agent is asked "Why did the nightly job stop?"
    Then the report counts 0 repeated calls
    And the tool "read_file" ran 6 times
    And the pass before request 3 made no extraction request
    And the "leanloop.pruned" events say reused false, true
    And tool message 2 in request 3 shows the log's lines 130, 350 and 590

  Scenario: The same read with another focus reads again, best first for the new focus (reuse x focus)
    Given an agent with the script:
      | reply                                                                            |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"}          |
      | call read_file {"path": "app.log", "output_prune_context": "lock wait timeouts"} |
      | The job stopped on a lock wait timeout.                                          |
    When the agent is asked "Why did the nightly job stop?"
    Then the report counts 0 repeated calls
    And the "leanloop.pruned" events say reused false, false
    And the pass before request 3 read 1 request(s), one window each around a line holding "lock wait"
    And tool message 2 in request 3 shows the log's line 470
    And tool message 2 in request 3 names the log's lines 130, 350 and 590 as not read because "weaker matches than the lines kept"

  Scenario: Lines that match the focus much less than the line found are named, and reading them later works (weaker match x unread ranges x the guard)
    Given a reading agent with the script:
      | reply                                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "lock wait timeouts"}        |
      | call the read_file a pruned result named for line 130 of "app.log"                      |
      | The job stopped on a lock wait timeout after a deadlock.                                |
    When the agent is asked "Why did the nightly job stop?"
    Then tool message 1 in request 2 names the log's line 130 as not read because "weaker matches than the lines kept"
    And the report counts 0 repeated calls
    And tool message 2 in request 3 shows the log's line 130

  Scenario: Opting out after a pass stopped at the best match gets the page asked for (weaker match x opt-out)
    Given an agent with the script:
      | reply                                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "lock wait timeouts"}        |
      | call read_file {"path": "app.log", "output_prune": false}                               |
      | The first page shows no error.                                                          |
    When the agent is asked "Why did the nightly job stop?"
    Then the report counts 0 repeated calls
    And tool message 2 in request 3 is exactly what read_file gives for {"path": "app.log"}

  Scenario: The same pruned call asked for again at once runs again without the pass, and so without reading on (early stop x the guard x opt-out)
    Given an agent with the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | The first page shows no error.                                          |
    When the agent is asked "Why did the nightly job stop?"
    Then report call 2 was not pruned and notes "ran again: the result of the same call at step 1 was pruned"
    And report call 2 did not read on
    And the pass before request 3 made no extraction request
    And tool message 2 in request 3 is exactly what read_file gives for {"path": "app.log"}

  Scenario: A session's next turn is sent the stored extract of an early-stopped read, and reads a range it named (early stop x sessions x unread ranges)
    Given the agents keep their sessions in the scenario's store
    And a reading agent with the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | Three deadlocks on table orders.                                        |
      | call the read_file a pruned result named for line 470 of "app.log"      |
      | A lock wait timeout on table invoices.                                  |
    When in thread "t1" the agent is asked "Why did the nightly job stop?"
    And in thread "t1" the agent is asked "What else went wrong?"
    Then the answer is "A lock wait timeout on table invoices."
    And tool message 1 in request 3 is the text of tool message 1 in request 2
    And turn 1 of thread "t1" stores its read_file result as the pruned text request 2 carried, without the lines it left out
    And the read_file call a pruned result named for line 470 ran as named, and was no repeat
    And tool message 2 in request 4 shows the log's line 470

  Scenario: A turn that failed after an early-stopped read resumes from the stored extract, without reading or pruning again (early stop x resume)
    Given the agents keep their sessions in the scenario's store
    And an agent with the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | raise connection reset by peer                                          |
      | Three deadlocks on table orders.                                        |
    When in thread "r1" the agent is asked "Why did the nightly job stop?" and the turn fails
    And in thread "r1" the agent resumes the failed turn
    Then the answer is "Three deadlocks on table orders."
    And the report has an event mentioning "resumed after step 1"
    And tool message 1 in request 3 is the text of tool message 1 in request 2
    And turn 1 of thread "r1" stores its read_file result as the pruned text request 3 carried, without the lines it left out
    And the tool "read_file" ran 3 times
    And the extraction model got 3 requests

  Scenario: A file the question names is prefetched through the pass, read on to its end, for the question's words (reading on x prefetch)
    Given an agent with the script:
      | reply                                   |
      | The job stopped on a lock wait timeout. |
    When the agent is asked "Why did the nightly job in app.log stop?"
    Then the report lists the prefetched files "app.log"
    And the tool "read_file" received {"path": "app.log"} then {"path": "app.log", "offset": 201, "limit": 400} then {"path": "app.log", "offset": 601, "limit": 400}
    And report call 1 was pruned and notes that it read on to line 640
    And the pass before request 1 read 1 request(s), one window each around a line holding "nightly"
    And tool message 1 in request 1 shows the log's line 470
    And tool message 1 in request 1 shows no filler line

  Scenario: Under the budget trigger a read_file without a limit whose whole file fits is read on and kept whole (reading on x the budget trigger)
    Given a workspace log "short.log" of 300 lines in which only these lines are not filler:
      | line | text                                                                                |
      | 250  | 02:40:00 ERROR worker-5 lock wait timeout on table invoices; the nightly job stopped |
    And an agent with pruning_trigger "budget" and the script:
      | reply                                   |
      | call read_file {"path": "short.log"}    |
      | The job stopped on a lock wait timeout. |
    When the agent is asked "Why did the nightly job stop?"
    Then the tool "read_file" received {"path": "short.log"} then {"path": "short.log", "offset": 201, "limit": 400}
    And the extraction model got 0 requests
    And report call 1 has fate "kept"
    And report call 1 notes "read on to line 300 of 300: a call the pruning pass may prune sees it all"
    And report call 1 notes "kept whole: the round's results fit the request"
    And tool message 1 in request 2 shows the log's lines 1, 200, 201, 250 and 300

  Scenario: A sub-agent's own read reads on and stops early; the lead gets its answer and the nested report shows the pruned call (early stop x sub-agents)
    Given a researcher agent with the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | Three deadlocks on table orders.                                        |
    And a lead agent with the tool "agent:researcher" and the script:
      | reply                                                             |
      | call researcher {"task": "Find out why the nightly job stopped."} |
      | The researcher found three deadlocks on table orders.             |
    When the agent is asked "Why did the nightly job stop?"
    Then the answer is "The researcher found three deadlocks on table orders."
    And tool message 1 in request 2 is "Three deadlocks on table orders."
    And the sub-run of lead call 1 read {"path": "app.log"} on to line 640 through the pass and pruned it with lines unread
    And the researcher's pruning model read 3 requests, each around a line holding "deadlock"

  Scenario: A range named by a pruned result that was trimmed since is read later with the named call (early stop x unread ranges x trimming x the guard)
    Given the workspace has "b.txt" holding 60 numbered lines
    And the workspace has "c.txt" holding 60 numbered lines
    And the workspace has "d.txt" holding 60 numbered lines
    And a reading agent with window 3000, pruning_min_chars 5000 and the script:
      | reply                                                                                      |
      | call read_file {"path": "app.log"}                                                         |
      | call read_file {"path": "b.txt"}; read_file {"path": "c.txt"}; read_file {"path": "d.txt"} |
      | call the read_file a pruned result named for line 470 of "app.log"                         |
      | Three deadlocks, and a lock wait timeout on table invoices.                                |
    When the agent is asked "Which deadlocks were there?"
    Then report call 1 has fate "trimmed"
    And request 3 has no tool result containing "lines kept; unread"
    And the read_file call a pruned result named for line 470 ran as named, and was no repeat
    And the report counts 0 repeated calls
    And tool message 5 in request 4 shows the log's line 470
    And the answer is "Three deadlocks, and a lock wait timeout on table invoices."

  Scenario: A small pruning model that names lines by their numbers gets them kept whole, as read_file numbered them (numbers x reading on x unread ranges)
    Given the pruning model names the lines holding "deadlock" by their numbers
    And a reading agent with the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | Three deadlocks on table orders.                                        |
    When the agent is asked "Why did the nightly job stop?"
    Then report call 1 was pruned and notes that it read on to line 640
    And the pass before request 2 read 3 request(s), one window each around a line holding "deadlock"
    And every line the pass before request 2 showed has one number, the file's
    And the pass before request 2 never showed read_file's closing line
    And the kept lines of tool message 1 in request 2 leave out read_file's closing line, which said only that the file ended
    And tool message 1 in request 2 shows the log's lines 130, 350 and 590
    And tool message 1 in request 2 shows no filler line
