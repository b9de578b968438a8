Feature: Budget trimming of old tool results
  When a request would exceed the plan's ceiling, old tool results are trimmed in the
  request view, oldest first, in three passes, until the estimate reaches the trim target.
  Pruned results (the extracts the pruning pass made) are trimmed only as far as the
  ceiling, after the raw results of older steps, and while one is spared the newest step
  is too. The stored history is never touched and a tool call is never parted from its
  result.

  Background:
    Given a trimming counter at 4.0 characters a token

  Scenario: Nothing is trimmed under the ceiling
    Given a trimming conversation of 5 tool steps with results of 1000 characters
    And a trimming plan with a ceiling of 10000 tokens and a trim target of 6500 tokens
    When the conversation is fitted for trimming
    Then no tool result is trimmed
    And the trimming view holds the very same messages
    And no trimming passes ran

  Scenario: Pass 1 trims results of steps older than the two most recent, oldest first
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 5000 tokens and a trim target of 3500 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 2
    And the trimming passes that ran are "1"
    And the trimming estimate is at or under the trim target
    And the trimming figures add up

  Scenario: Pass 2 trims results of any step but the newest
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 3000 tokens and a trim target of 2000 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 2, 3, 4
    And the trimming passes that ran are "1, 2"
    And the trimming estimate is at or under the trim target

  Scenario: Pass 3 trims any result, the newest too
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 1000 tokens and a trim target of 500 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 2, 3, 4, 5
    And the trimming passes that ran are "1, 2, 3"
    And the trimming view is not over the ceiling

  Scenario: A step with several calls keeps every result with its call
    Given a trimming conversation of 3 tool steps with 2 calls each and results of 4000 characters
    And a trimming plan with a ceiling of 4000 tokens and a trim target of 3300 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 1, 2
    And every trimming tool call is still followed by exactly its results

  Scenario: Keeping no steps lets pass 1 trim everything
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 1000 tokens and a trim target of 500 tokens
    When the conversation is fitted for trimming keeping 0 steps
    Then the trimmed results are those of steps 1, 2, 3, 4, 5
    And the trimming passes that ran are "1"

  Scenario: Keeping more steps narrows pass 1
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 5000 tokens and a trim target of 3500 tokens
    When the conversation is fitted for trimming keeping 4 steps
    Then the trimmed results are those of steps 1, 2
    And the trimming passes that ran are "1, 2"

  Scenario: A conversation too big even after trimming everything is reported over
    Given a trimming conversation of 3 tool steps with results of 4000 characters
    And the trimming conversation ends with a question of 40000 characters
    And a trimming plan with a ceiling of 5000 tokens and a trim target of 3250 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 2, 3
    And the trimming view is over the ceiling
    And the trimming question is untouched

  Scenario: Results already shorter than their trimmed form are left alone
    Given a trimming conversation of 4 tool steps with results of 20 characters
    And the trimming conversation ends with a question of 40000 characters
    And a trimming plan with a ceiling of 5000 tokens and a trim target of 3250 tokens
    When the conversation is fitted for trimming
    Then no tool result is trimmed
    And the trimming view is over the ceiling

  Scenario: A trimmed result keeps its first line and says how to get the rest back
    Given a trimming conversation of 3 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 1000 tokens and a trim target of 500 tokens
    When the conversation is fitted for trimming
    Then every trimmed result is its first line and the trimming note
    And every trimmed result is marked trimmed and keeps its call id and tool name

  Scenario: A long first line is cut to 160 characters when trimming
    Given a trimming conversation of 2 tool steps with results of 4000 characters
    And the first trimming result starts with a line of 500 characters
    And a trimming plan with a ceiling of 600 tokens and a trim target of 390 tokens
    When the conversation is fitted for trimming
    Then the first trimmed result's first line has 160 characters

  Scenario: Trimming is idempotent and reuses its copies
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 3000 tokens and a trim target of 2000 tokens
    When the conversation is fitted for trimming
    And the trimming view is fitted again under a ceiling of 1000 tokens and a trim target of 500 tokens
    Then the second trimming fit trimmed 1 more result
    And no trimming result was trimmed twice
    And trimming a trimmed result returns it unchanged
    When the conversation is fitted for trimming
    Then the trimmed copies are the same objects as in the first trimming view

  Scenario: Results trimmed for the previous request stay trimmed, so the prefix stays the same
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 3000 tokens and a trim target of 2000 tokens
    When the conversation is fitted for trimming
    And the conversation is fitted again from that view under a ceiling of 5000 tokens and a trim target of 3500 tokens
    Then the trimmed results are those of steps 1, 2, 3, 4
    And the trimmed copies are the same objects as in the first trimming view
    And no trimming passes ran

  Scenario: A conversation that fits again is sent whole, whatever the previous view trimmed
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 3000 tokens and a trim target of 2000 tokens
    When the conversation is fitted for trimming
    And the conversation is fitted again from that view under a ceiling of 20000 tokens and a trim target of 15000 tokens
    Then no tool result is trimmed
    And the trimming view holds the very same messages

  Scenario: Raw results pay for the headroom; pruned results stay whole under the ceiling
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And the trimming results of steps 1, 2, 3 are pruned extracts of 600 characters
    And a trimming plan with a ceiling of 2400 tokens and a trim target of 1560 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 4
    And the trimming passes that ran are "2"
    And the trimming view is not over the ceiling
    And the trimming estimate is over the trim target
    And the trimming figures add up

  Scenario: Pruned results are trimmed oldest first only as far as the ceiling, sparing the newest step
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And the trimming results of steps 1, 2, 3 are pruned extracts of 600 characters
    And a trimming plan with a ceiling of 1500 tokens and a trim target of 975 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 2, 4
    And the trimming passes that ran are "2"
    And the trimming view is not over the ceiling
    And the trimming estimate is over the trim target

  Scenario: A raw result is trimmed before older pruned ones, and a recent pruned one is spared
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And the trimming results of steps 1, 2, 4 are pruned extracts of 600 characters
    And a trimming plan with a ceiling of 1500 tokens and a trim target of 975 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 2, 3
    And the trimming passes that ran are "1, 2"
    And the trimming view is not over the ceiling

  Scenario: With every older result trimmed, the newest step is trimmed down to the trim target
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And the trimming results of steps 1, 2, 3 are pruned extracts of 600 characters
    And a trimming plan with a ceiling of 600 tokens and a trim target of 390 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 2, 3, 4, 5
    And the trimming passes that ran are "2, 3"
    And the trimming estimate is at or under the trim target

  Scenario: Pruned results spared for the previous request stay whole, trimmed ones stay trimmed
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And the trimming results of steps 1, 2, 3 are pruned extracts of 600 characters
    And a trimming plan with a ceiling of 1500 tokens and a trim target of 975 tokens
    When the conversation is fitted for trimming
    And the conversation is fitted again from that view under a ceiling of 2400 tokens and a trim target of 1560 tokens
    Then the trimmed results are those of steps 1, 2, 4
    And the trimmed copies are the same objects as in the first trimming view
    And no trimming passes ran

  Scenario: A text-mode turn holding a pruned result counts as pruned
    Given a trimming conversation of 4 text-mode steps with results of 4000 characters
    And the trimming results of steps 1, 2 are pruned extracts of 600 characters
    And a trimming plan with a ceiling of 1800 tokens and a trim target of 1170 tokens
    When the conversation is fitted for trimming
    Then the trimming results of steps 1, 2 count as pruned and the others as raw
    And the trimmed results are those of steps 3
    And the trimming passes that ran are "2"
    And the trimming view is not over the ceiling

  Scenario: Text-mode results are trimmed, other human turns never
    Given a trimming conversation of 4 text-mode steps with results of 4000 characters
    And the trimming conversation ends with a question of 4000 characters
    And a trimming plan with a ceiling of 3000 tokens and a trim target of 1950 tokens
    When the conversation is fitted for trimming
    Then the trimmed results are those of steps 1, 2, 3
    And the trimming view is not over the ceiling
    And the trimming question is untouched

  Scenario: Trimming can be turned off
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 3000 tokens and a trim target of 2000 tokens
    When the conversation is fitted with trimming turned off
    Then no tool result is trimmed
    And the trimming view is over the ceiling
    And no trimming passes ran

  Scenario: Trimming never mutates the stored history
    Given a trimming conversation of 5 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 1000 tokens and a trim target of 500 tokens
    When the conversation is fitted for trimming
    Then the trimming history is exactly as it was
    And the trimming view is a different list from the history

  Scenario: Trimming measures each message once, not once per trimmed result
    Given a trimming conversation of 40 tool steps with results of 4000 characters
    And a trimming plan with a ceiling of 20000 tokens and a trim target of 13000 tokens
    When the conversation is fitted for trimming
    Then the trimming counter measured each message and each trimmed copy once

  Scenario: A negative number of kept steps is refused by trimming
    Given a trimming conversation of 2 tool steps with results of 400 characters
    And a trimming plan with a ceiling of 1000 tokens and a trim target of 500 tokens
    Then fitting for trimming keeping -1 steps fails with "trim_keep_steps must be 0 or more"

  Scenario: Trimming keeps pairs, order and every other message across random conversations
    When 300 seeded random conversations are fitted for trimming
    Then every trimming view kept its length, order and pairs
    And every trimming view left system, human and AI messages byte-identical
    And no trimming input was mutated
    And every trimming view is under its ceiling unless nothing more could be trimmed
    And the random trimming conversations exercised all three passes

  Scenario: Trimming spares pruned results and the newest step across random conversations
    When 300 seeded random conversations with pruned results are fitted for trimming
    Then every trimming view kept its length, order and pairs
    And every trimming view left system, human and AI messages byte-identical
    And no trimming input was mutated
    And every trimming view is under its ceiling unless nothing more could be trimmed
    And every trimming view trimmed a pruned result only after the raw results of older steps
    And every trimming view trimmed the newest step only after every older result
    And the random pruned conversations both trimmed and spared pruned results
