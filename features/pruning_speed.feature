Feature: Pruning limits measured on the server, not a fixed timeout
  A 1.5B model on two CPU cores reads a 1,000-token chunk in 40-60 s; a hosted API in two.
  So the pruning pass gives each extraction request a limit from the server's measured
  speed in prompt tokens per second: its own answers, and the main model's requests when
  the pruning model is the main model's server. Until a speed is known a request may take
  ten times pruning_timeout; a request already waiting is judged again as soon as a speed
  is measured. These scenarios meet that rule with the pass's other promises: prefetched
  files (pruned before any request was sent), a hung server, and a separate pruning server.

  Scenario: While the speed is unknown, a slow first answer is waited for instead of timing out
    Given a sized pruning log of 8 KB in read_file form with 2 lines mentioning "deadlock"
    And a sized pruning model that answers every request in 1.0 seconds, keeping "deadlock"
    And the sized pruning window is 16384 tokens
    And the sized pruning timeout is 0.3 seconds
    And the sized pruning concurrency is 1
    When the sized pruner built by make_pruner prunes the output
    Then the sized outcome is pruned without a fallback
    And the sized pruned message keeps the 2 lines mentioning "deadlock"
    And the sized outcome has no unread lines

  Scenario: A request waiting on a hung server is judged again once another answer measures the speed
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that hangs on the part with the 2nd "deadlock" line
    And the sized pruning window is 4096 tokens
    And the sized pruning timeout is 0.3 seconds
    When the sized pruner built by make_pruner prunes the output
    Then the sized outcome is pruned without a fallback
    And the sized outcome has 1 unread range, because of "timeout", holding the 2nd "deadlock" line
    And the sized pass took less than 2.5 seconds

  Scenario: The main model's requests measure a shared server, so a hung pruning request ends at the measured limit
    Given a paced workspace whose "app.log" holds 30 KB with 2 lines mentioning "deadlock"
    And a paced main model that answers in 0.1 seconds, reporting 2000 prompt tokens, with the script:
      | reply                                 |
      | call read_file {"path": "app.log", "limit": 200} |
      | The log shows two deadlocks.          |
    And a paced pruning model that hangs
    And a paced agent with pruning_timeout 0.3 and the pruning model on the main model's server
    When the paced agent is asked "Why did the job stop?"
    Then the paced run ended with the answer "The log shows two deadlocks."
    And the paced report lists a pruning fallback for read_file because of "timeout"
    And the paced pruning pass ended within 2.0 seconds

  Scenario: A pruning model on another server learns nothing from the main model's requests
    Given a paced workspace whose "app.log" holds 30 KB with 2 lines mentioning "deadlock"
    And a paced main model that answers in 0.1 seconds, reporting 2000 prompt tokens, with the script:
      | reply                                 |
      | call read_file {"path": "app.log"}    |
      | The log shows two deadlocks.          |
    And a paced pruning model that hangs
    And a paced agent with pruning_timeout 0.3 and the pruning model on a server of its own
    When the paced agent is asked "Why did the job stop?"
    Then the paced report lists a pruning fallback for read_file because of "timeout"
    And the paced pruning pass took at least 2.5 seconds

  Scenario: A prefetched file is pruned before any request, at a speed nobody has measured yet
    Given a paced workspace whose "app.log" holds 30 KB with 2 lines mentioning "deadlock"
    And a paced main model that answers in 0.1 seconds, reporting 2000 prompt tokens, with the script:
      | reply                         |
      | The log shows two deadlocks.  |
    And a paced pruning model that answers in 0.8 seconds, keeping "deadlock"
    And a paced agent with pruning_timeout 0.3, prefetching named files
    When the paced agent is asked "Why did the job stop? See app.log."
    Then the paced report says app.log was prefetched and pruned, with no pruning fallback
    And the paced main model's first request holds the 2 lines mentioning "deadlock"
    And the paced run ended with the answer "The log shows two deadlocks."

  Scenario: After the main model measured a fast server, a slow pruning answer within three times the prediction still counts
    Given a paced workspace whose "app.log" holds 30 KB with 2 lines mentioning "deadlock"
    And a paced main model that answers in 1.0 seconds, reporting 2000 prompt tokens, with the script:
      | reply                                 |
      | call read_file {"path": "app.log"}    |
      | The log shows two deadlocks.          |
    And a paced pruning model that answers in 0.6 seconds, keeping "deadlock"
    And a paced agent with pruning_timeout 0.3 and the pruning model on the main model's server
    When the paced agent is asked "Why did the job stop?"
    Then the paced report says read_file was pruned, with no pruning fallback
    And the paced main model's second request holds the 2 lines mentioning "deadlock"

  Scenario: Two passes at once on a one-slot server run one after another, each within its own deadline
    Given a sized pruning log of 2 KB in read_file form with 2 lines mentioning "deadlock"
    And a one-slot pruning model that answers each request in 0.2 seconds, keeping "deadlock"
    When one pruner with 300-token chunks and a 1.0 second deadline prunes the output twice at once
    Then each of the 2 passes read 4 chunks and kept the 2 lines mentioning "deadlock", none unread
    And the one-slot pruning model never had two requests at once

  Scenario: A chunk sent first but read last by a one-slot server is not cut at a limit counted as if it were alone
    Given a sized pruning log of 2 KB in read_file form with 2 lines mentioning "deadlock"
    And a one-slot pruning model that reads the latest request first, each in 0.3 seconds, keeping "deadlock"
    When one pruner with 300-token chunks, 4 requests at once and a 0.5 second timeout prunes the output
    Then the pass read 4 chunks and kept the 2 lines mentioning "deadlock", none unread
    And the one-slot pruning model read the first request sent last
