Feature: Memory: nothing of a finished run stays behind, and a step costs what it added
  A run's history lives as long as the run. A trimmed copy is cached only while its
  original lives and the request view belongs to the run's budget, so once a run is over
  its tool outputs can be collected (a module-level trim cache used to keep 4,096 of them
  alive: RSS grew from 70 to 201 MB over 100 runs of one agent). The budget check keeps
  the view and its running sums from one step to the next, so a step measures only the
  messages it added, however long the history (the counter's cache used to thrash past
  8,192 messages: 63 ms a check at 9,000).

  Scenario: No tool output of a finished run is still reachable
    Given a memory agent whose tool returns 30000 characters 6 times a run in a 65536-token window
    When the memory agent runs 3 times
    Then every memory run trimmed a tool result
    And no tool result of the memory runs is still reachable after a garbage collection

  Scenario: A step past the budget at 9,000 messages measures only what it added
    Given a memory run budget that has checked a history of 9000 messages past its ceiling
    When one more memory step is appended and the run budget checks the history again
    Then the memory check measured only the new messages and the copies it trimmed
    And the memory check kept every result trimmed before

  Scenario: The run's incremental view is the view fit_messages builds from the previous one
    When 60 random memory runs are fitted step by step by the run fitter and by fit_messages
    Then every memory view, figure and trimmed copy matched
