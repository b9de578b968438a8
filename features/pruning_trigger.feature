Feature: Which results are pruned: every large one, or only what does not fit
  On a small model on a CPU, one pruning pass reads the output as slowly as the main model
  does; pruning three files that fit the request cost minutes and gained nothing. With
  pruning_trigger "budget" a round's results are pruned only when together they do not fit
  the room left in the request, the largest first, until the rest fits; "size" prunes every
  prunable result of at least pruning_min_chars; "auto" follows the pruning model's
  profile. These scenarios meet the trigger with the other promises: the model's own
  output_prune_context and output_prune: false, the per-result cap, and prefetched files.

  Background:
    Given a trigger workspace with these logs:
      | name    | kb |
      | a.log   | 8  |
      | b.log   | 8  |
      | c.log   | 8  |
      | d.log   | 8  |
      | big.log | 9  |

  Scenario: Under the budget trigger, results that fit together are kept whole and the pruning model is never asked
    Given a trigger main model with the script:
      | reply                                                                                     |
      | call read_file {"path": "a.log"}; read_file {"path": "b.log"}; read_file {"path": "c.log"} |
      | Two deadlocks in each log.                                                                |
    And a trigger agent with pruning_trigger "budget" and a 16384-token window
    When the trigger agent is asked "Why did the jobs stop?"
    Then the trigger pruning model was asked 0 times
    And the trigger report shows a.log, b.log, c.log kept whole and none pruned
    And the trigger main model's second request holds a.log, b.log, c.log whole

  Scenario: Under the budget trigger, results that do not fit lose the largest first, and the rest stay whole
    Given a trigger main model with the script:
      | reply                                                                                                                                          |
      | call read_file {"path": "a.log"}; read_file {"path": "big.log"}; read_file {"path": "b.log"}; read_file {"path": "c.log"}; read_file {"path": "d.log"} |
      | Two deadlocks in each log.                                                                                                                     |
    And a trigger agent with pruning_trigger "budget" and a 16384-token window
    When the trigger agent is asked "Why did the jobs stop?"
    Then the trigger report shows a.log, b.log, c.log, d.log kept whole and big.log pruned
    And the trigger main model's second request holds a.log, b.log, c.log, d.log whole
    And the trigger main model's second request holds the 2 "deadlock" lines of big.log

  Scenario: Under the size trigger, every large result is pruned even when all of them fit
    Given a trigger main model with the script:
      | reply                                                                                     |
      | call read_file {"path": "a.log"}; read_file {"path": "b.log"}; read_file {"path": "c.log"} |
      | Two deadlocks in each log.                                                                |
    And a trigger agent with pruning_trigger "size" and a 16384-token window
    When the trigger agent is asked "Why did the jobs stop?"
    Then the trigger report shows none kept whole and a.log, b.log, c.log pruned

  Scenario: A call that says what it looks for is pruned under the budget trigger, though it fits
    Given a trigger main model with the script:
      | reply                                                                                                       |
      | call read_file {"path": "a.log", "output_prune_context": "deadlock lines"}; read_file {"path": "b.log"} |
      | Two deadlocks in each log.                                                                                  |
    And a trigger agent with pruning_trigger "budget" and a 16384-token window
    When the trigger agent is asked "Why did the jobs stop?"
    Then the trigger report shows b.log kept whole and a.log pruned

  Scenario: output_prune false is never pruned under the budget trigger, even when it does not fit
    Given a trigger main model with the script:
      | reply                                                                                                                                                                   |
      | call read_file {"path": "a.log"}; read_file {"path": "big.log", "output_prune": false}; read_file {"path": "b.log"}; read_file {"path": "c.log"}; read_file {"path": "d.log"} |
      | Two deadlocks in each log.                                                                                                                                              |
    And a trigger agent with pruning_trigger "budget" and a 16384-token window
    When the trigger agent is asked "Why did the jobs stop?"
    Then the trigger report shows big.log not pruned
    And the trigger report shows at least one of a.log, b.log, c.log, d.log pruned

  Scenario: A result longer than its cap is pruned under the budget trigger rather than cut
    Given a trigger main model with the script:
      | reply                              |
      | call read_file {"path": "big.log"} |
      | Two deadlocks.                     |
    And a trigger agent with pruning_trigger "budget" and a 8192-token window
    When the trigger agent is asked "Why did the job stop?"
    Then the trigger report shows none kept whole and big.log pruned
    And the trigger main model's second request holds the 2 "deadlock" lines of big.log

  Scenario: Prefetched files are pruned only as far as they do not fit
    Given a trigger main model with the script:
      | reply                       |
      | Two deadlocks in each log.  |
    And a trigger agent with pruning_trigger "budget", a 14336-token window and prefetching
    When the trigger agent is asked "Why did the jobs stop? See a.log, b.log, c.log and d.log."
    Then the trigger report shows b.log, c.log, d.log kept whole and a.log pruned
    And the trigger main model's first request holds b.log, c.log, d.log whole
    And the trigger main model's first request holds the 2 "deadlock" lines of a.log

  Scenario: Prefetched files that fit together are all kept whole
    Given a trigger main model with the script:
      | reply                       |
      | Two deadlocks in each log.  |
    And a trigger agent with pruning_trigger "budget", a 16384-token window and prefetching
    When the trigger agent is asked "Why did the jobs stop? See a.log, b.log, c.log and d.log."
    Then the trigger pruning model was asked 0 times
    And the trigger report shows a.log, b.log, c.log, d.log kept whole and none pruned

  Scenario: A result kept whole and later trimmed runs again when asked for, and comes back whole when it fits
    Given a trigger main model with the script:
      | reply                                                        |
      | call read_file {"path": "a.log"}                             |
      | call read_file {"path": "b.log"}                             |
      | call read_file {"path": "c.log"}                             |
      | call read_file {"path": "d.log"}                             |
      | call read_file {"path": "big.log", "output_prune": false}    |
      | call read_file {"path": "a.log"}                             |
      | Two deadlocks in each log.                                   |
    And a trigger agent with pruning_trigger "budget" and a 16384-token window
    When the trigger agent is asked "Why did the jobs stop?"
    Then the trigger report shows the first read of a.log kept whole and trimmed
    And the trigger report shows the second read of a.log ran again and kept whole
    And the trigger main model's last request holds a.log whole

  Scenario: The same output pruned again in one run reuses its extract without a second pass
    When one pruner prunes the output of big.log twice with the focus "deadlock lines"
    Then the second outcome is the first extract, reused, with no request of its own
    And the trigger pruning model was asked once

  Scenario: The same output with another focus is read again
    When one pruner prunes the output of big.log with the focus "deadlock lines" and then "job ids"
    Then the second outcome is not reused
    And the trigger pruning model was asked 2 times

  Scenario Outline: pruning_trigger "auto" follows the pruning model's profile
    Then for a pruning model named "<model>" with prompt_profile "<profile>" the trigger is "<trigger>"

    Examples:
      | model              | profile | trigger |
      | qwen2.5-coder-1.5b | auto    | budget  |
      | local-test         | auto    | budget  |
      | gpt-4o-mini        | auto    | size    |
      | gpt-4o-mini        | small   | budget  |
      | qwen2.5-coder-1.5b | default | size    |
