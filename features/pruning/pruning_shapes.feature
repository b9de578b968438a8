Feature: A focus in the user's own words, and a named line that is the line meant, crossed with the older rules
  Two rules of ADR 0006 amendment 7 (issue 36) meet the older promises here, on whole runs.
  When no line holds a word or literal of the focus, the pass first shows the pruning model
  one line of each rare kind the output has, between them the kinds closest in meaning to
  the focus (amendment 8), and keeps and reads the kinds it names; an answer that names
  most of the list stands for its first three rare ones, the window of the line closest in
  meaning is read too, and the rest is named as unread; an answer that names a few kinds
  gets the window of the line closest in meaning read as well, as a second opinion
  (amendment 9). A line the pruning model names that holds no focus word, beside one
  that does, stands for that one. The older promises: output_prune false gets exactly what
  it asks for, an identical extract is reused (trimmed from the view too), the repeat guard
  never hides data, the unread ranges it names can be read, sessions carry the extract, and
  a literal the focus names still leads the reading.

  The log has 640 lines; four say something (ERROR lines), the rest are filler that no
  focus here names. The pruning model is declared small (chunks of at most 1,024 tokens,
  one window a request) with a 4,096-token window; it keeps the lines holding "ERROR",
  whether it is shown kinds of line or a window.

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

  Scenario Outline: A focus no line holds is answered by the kinds of line the model names, not read in order (<how>)
    Given an agent with the script:
      | reply                    |
      | call <call>              |
      | Deadlocks and a timeout. |
    When the agent is asked "What went wrong overnight?"
    Then report call 1 was pruned and notes that it read on to line 640
    And the pass before request 2 first showed the pruning model 2 rare kinds of line, a rare one first, and filler only as the kind closest in meaning
    And after the kinds of line the pass before request 2 read 2 window(s), each around a line holding "ERROR"
    And tool message 1 in request 2 shows the log's lines 130, 350, 470 and 590
    And tool message 1 in request 2 shows no filler line
    And every line of the log the pass before request 2 did not read is named in tool message 1 with the read_file call that reads it, because "not of the kinds of line the pruning model named"

    Examples:
      | how                    | call                                                                             |
      | output_prune_context   | read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"} |
      | the question, no focus | read_file {"path": "app.log"}                                                    |

  Scenario: An answer naming every kind of line stands for its first three, the rarest, the window of the line closest in meaning is read too, and the rest is named as unread (shapes x meaning x unread ranges)
    Given a workspace log "app.log" of 640 lines in which only these lines are not filler:
      | line | text                                                 |
      | 50   | 02:00:50 ERROR worker-1 deadlock #1 on table orders  |
      | 300  | 02:05:00 WARN disk usage above 80% on /var           |
      | 330  | 02:05:30 WARN certificate expires in 9 days          |
      | 360  | 02:06:00 WARN slow query on invoices took 4s         |
      | 390  | 02:06:30 WARN cache eviction storm on shard seven    |
      | 420  | 02:07:00 WARN retry budget exhausted for mailer      |
      | 450  | 02:07:30 WARN clock skew of 3s against the ntp peer  |
      | 480  | 02:08:00 WARN queue depth above threshold for emails |
    And the pruning model names every kind of line and keeps the lines holding "ERROR"
    And an agent with the script:
      | reply                                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"} |
      | Deadlock #1 on table orders.                                                            |
    When the agent is asked "What went wrong overnight?"
    Then report call 1 was pruned and notes that it read on to line 640
    And the pass before request 2 first showed the pruning model 8 rare kinds of line, a rare one first, and filler only as the kind closest in meaning
    And tool message 1 in request 2 shows 4 of the log's lines 50, 300, 330, 360, 390, 420, 450 and 480
    And tool message 1 in request 2 shows the log's line 50
    And tool message 1 in request 2 shows no filler line
    And every line of the log the pass before request 2 did not read is named in tool message 1 with the read_file call that reads it, because "not of the kinds of line the pruning model named"

  Scenario: Opting out with a focus in the user's own words gets the page asked for and asks the pruning model nothing (shapes x opt-out)
    Given an agent with the script:
      | reply                                                                                                     |
      | call read_file {"path": "app.log", "output_prune": false, "output_prune_context": "what went wrong overnight"} |
      | The first page shows no error.                                                                            |
    When the agent is asked "What went wrong overnight?"
    Then the tool "read_file" received {"path": "app.log"}
    And tool message 1 in request 2 is exactly what read_file gives for {"path": "app.log"}
    And the extraction model got 0 requests

  Scenario: The same read spelled another way reuses the extract, and asks for no kinds of line again (shapes x reuse)
    Given an agent with the script:
      | reply                                                                                                |
      | call read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"}              |
      | call read_file {"path": "app.log", "offset": 1, "output_prune_context": "what went wrong overnight"} |
      | Deadlocks and a timeout.                                                                             |
    When the agent is asked "What went wrong overnight?"
    Then the report counts 0 repeated calls
    And the pass before request 3 made no extraction request
    And the "leanloop.pruned" events say reused false, true
    And tool message 2 in request 3 shows the log's lines 130, 350, 470 and 590

  Scenario: The same pruned call asked for again at once runs again without the pass (shapes x the guard)
    Given an agent with the script:
      | reply                                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"} |
      | call read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"} |
      | The first page shows no error.                                                          |
    When the agent is asked "What went wrong overnight?"
    Then report call 2 was not pruned and notes "ran again: the result of the same call at step 1 was pruned"
    And the pass before request 3 made no extraction request
    And tool message 2 in request 3 is exactly what read_file gives for {"path": "app.log"}

  Scenario: A range the kinds of line left unread is read later with the call the result named, and is no repeat (shapes x unread ranges x the guard)
    Given a reading agent with the script:
      | reply                                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"} |
      | call the read_file a pruned result named for line 5 of "app.log"                        |
      | Deadlocks and a timeout.                                                                |
    When the agent is asked "What went wrong overnight?"
    Then the read_file call a pruned result named for line 5 ran as named, and was no repeat
    And the report counts 0 repeated calls

  Scenario: A session's next turn is sent the stored extract that the kinds of line made (shapes x sessions)
    Given the agents keep their sessions in the scenario's store
    And a reading agent with the script:
      | reply                                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"} |
      | Deadlocks and a timeout.                                                                |
      | The log said so.                                                                        |
    When in thread "s1" the agent is asked "What went wrong overnight?"
    And in thread "s1" the agent is asked "Are you sure?"
    Then the answer is "The log said so."
    And tool message 1 in request 3 is the text of tool message 1 in request 2
    And tool message 1 in request 3 shows the log's lines 130, 350, 470 and 590

  Scenario: A literal the focus names still leads the reading, and no kinds of line are asked for (shapes x literals)
    Given an agent with the script:
      | reply                                                                    |
      | call read_file {"path": "app.log", "output_prune_context": "the ERROR lines"} |
      | Deadlocks and a timeout.                                                 |
    When the agent is asked "What went wrong overnight?"
    Then the pass before request 2 asked for no kinds of line
    And tool message 1 in request 2 shows the log's lines 130, 350, 470 and 590

  Scenario: A pruning model that names the line after each one it means gets the lines it meant (named lines x reading on x windows)
    Given the pruning model names the line after each line holding "deadlock" by its number
    And a reading agent with the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | Three deadlocks on table orders.                                        |
    When the agent is asked "Why did the nightly job stop?"
    Then tool message 1 in request 2 shows the log's lines 130, 350 and 590
    And tool message 1 in request 2 shows no filler line

  Scenario: An extract the kinds of line made, trimmed from the view and asked for again, is reused without another request (shapes x trimming x reuse x the guard)
    Given the workspace has "b.txt" holding 60 numbered lines
    And the workspace has "c.txt" holding 60 numbered lines
    And the workspace has "d.txt" holding 60 numbered lines
    And an agent with window 3000, pruning_min_chars 5000 and the script:
      | reply                                                                                      |
      | call read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"}    |
      | call read_file {"path": "b.txt"}; read_file {"path": "c.txt"}; read_file {"path": "d.txt"} |
      | call read_file {"path": "app.log", "output_prune_context": "what went wrong overnight"}    |
      | Deadlocks and a timeout.                                                                   |
    When the agent is asked "What went wrong overnight?"
    Then report call 1 has fate "trimmed"
    And report call 5 notes "ran again: the result of the same call at step 1 was trimmed"
    And the pass before request 4 made no extraction request
    And the "leanloop.pruned" events say reused false, true
    And tool message 5 in request 4 shows the log's lines 130, 350, 470 and 590
