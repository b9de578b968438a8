Feature: The info block of a pruned result: one short line on the common path
  Every request of a run carries every pruned result again, so what a result's info block
  says is read many times over (issue 36). When the pass found lines and left out only
  parts that hold no focus word, the block is one line: how many lines were kept of how
  many, which lines were not read, and how to get them all. read_file's closing line is
  left out when it said only that the file ended: the count on the info line is the
  file's. Everywhere else (a part not read for time or a failure, the reading allowance
  spent, nothing found, most of the output kept, lines dropped) the block keeps its
  sentences, with the read_file(offset=, limit=) call that reads each part not read.

  The log has 640 lines; four say something. The pruning model is declared small (one
  window a request) and copies the lines holding "ERROR".

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

  Scenario: A whole file read for a focus comes back as the lines kept under one info line, without the closing line
    Given an agent with the script:
      | reply                                                                   |
      | call read_file {"path": "app.log", "output_prune_context": "deadlocks"} |
      | Three deadlocks on table orders.                                        |
    When the agent is asked "Why did the nightly job stop?"
    Then tool message 1 in request 2 reads, as the main model got it:
      """
      [PRUNE_INFO_START]
      3/640 lines kept; unread 1-123, 136-343, 356-583, 596-640; output_prune=false for all
      [PRUNE_INFO_END]
      [PRUNE_OUTPUT_START]
        130| 02:30:01 ERROR worker-1 deadlock #1 on table orders; transaction rolled back
        350| 02:30:02 ERROR worker-2 deadlock #2 on table orders; transaction rolled back
        590| 02:30:03 ERROR worker-3 deadlock #3 on table orders; transaction rolled back
      [PRUNE_OUTPUT_END]
      """
    And every line of the log the pass before request 2 did not read is named as unread on the one info line of tool message 1

  Scenario: A page that stops before the end of the file keeps the closing line that says how to go on
    Given an agent with the script:
      | reply                                                                                 |
      | call read_file {"path": "app.log", "limit": 400, "output_prune_context": "deadlocks"} |
      | Two deadlocks so far; the rest of the log is next.                                    |
    When the agent is asked "Why did the nightly job stop?"
    Then tool message 1 in request 2 reads, as the main model got it:
      """
      [PRUNE_INFO_START]
      2/400 lines kept; unread 1-123, 136-343, 356-400; output_prune=false for all
      [PRUNE_INFO_END]
      [PRUNE_OUTPUT_START]
        130| 02:30:01 ERROR worker-1 deadlock #1 on table orders; transaction rolled back
        350| 02:30:02 ERROR worker-2 deadlock #2 on table orders; transaction rolled back
      [lines 1-400 of 640; next: read_file(path="app.log", offset=401)]
      [PRUNE_OUTPUT_END]
      """

  Scenario: Lines left unread for a weaker match keep the sentence with the call that reads them
    Given an agent with the script:
      | reply                                                                            |
      | call read_file {"path": "app.log", "output_prune_context": "lock wait timeouts"} |
      | The job stopped on a lock wait timeout.                                          |
    When the agent is asked "Why did the nightly job stop?"
    Then tool message 1 in request 2 reads, as the main model got it:
      """
      [PRUNE_INFO_START]
      pruned from 41570 to 91 characters; output_prune=false gives the full output
      lines 1-123, 136-343, 356-463, 476-583, 596-640 not read (no focus word in them); read_file(offset=1, limit=123) reads the first
      lines 124-135, 344-355, 584-595 not read (weaker matches than the lines kept); read_file(offset=124, limit=12) reads the first
      [PRUNE_INFO_END]
      [PRUNE_OUTPUT_START]
        470| 02:40:00 ERROR worker-5 lock wait timeout on table invoices; the nightly job stopped
      [lines 1-640 of 640; end of file]
      [PRUNE_OUTPUT_END]
      """
