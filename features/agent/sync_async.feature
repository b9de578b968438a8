Feature: One agent serves sync and async callers in any order
  `invoke` runs on leanloop's background event loop, `asyncio.run(ainvoke(...))` on a new
  loop each time, Jupyter calls `invoke` from inside a running loop. The model's HTTP
  client keeps one connection pool per loop, so every order works against a real server.

  Background:
    Given an echo chat server
    And an agent on the echo chat server

  Scenario: invoke, then asyncio.run(ainvoke), then invoke again
    When the agent is called "invoke, arun, invoke, arun" with questions "one, two, three, four"
    Then the answers are "echo: one, echo: two, echo: three, echo: four"

  Scenario: asyncio.run(ainvoke) first, then invoke
    When the agent is called "arun, invoke, arun" with questions "one, two, three"
    Then the answers are "echo: one, echo: two, echo: three"

  Scenario: invoke from inside a running event loop, as a notebook cell does
    When the agent is called "invoke inside a running loop, arun" with questions "one, two"
    Then the answers are "echo: one, echo: two"

  Scenario: eight threads call invoke at once and each gets its own answer
    Given the echo chat server waits 0.2 seconds before each answer
    When 8 threads call invoke on the agent at once, thread N asking "question N"
    Then thread N got "echo: question N" for every thread
    And the echo chat server answered 8 requests

  Scenario: two threads run asyncio.run(ainvoke) at once, each on its own loop
    Given the echo chat server waits 0.2 seconds before each answer
    When 2 threads call asyncio.run(ainvoke) on the agent at once, thread N asking "question N"
    Then thread N got "echo: question N" for every thread

  Scenario: one hundred concurrent runs of one agent each get their own answer
    When 100 runs of the agent go at once with asyncio.gather, run N asking "question N"
    Then run N got "echo: question N" for every run
    And the echo chat server answered 100 requests
