Feature: Sessions: a conversation under a thread_id that stays inside the window
  With config={"configurable": {"thread_id": ...}} each call is one turn of a conversation
  kept in a session store (SQLite here). The next turn's request starts from the earlier
  turns; the budget still decides what is sent: old turns' results are trimmed first, then
  whole old turns are left out, announced in one line, and the model can bring them back
  with recall. Each completed step is stored before the next request, so a turn that died
  resumes from its last step. The scripted model reports usage at 4 characters a token,
  standing in for the server's count.

  Scenario: The second turn's request carries the first turn
    Given a session agent
    When thread "t1" is asked "My name is Ada."
    And thread "t1" is asked "What is my name?"
    Then the last request of the run holds "My name is Ada." and "ok: My name is Ada."
    And the last request ends with the question "What is my name?"
    And the run's report says turn 2 of thread "t1" with 1 earlier turns

  Scenario: A new agent on the same store continues the thread (as a new process would)
    Given a session agent
    When thread "t1" is asked "Remember the word heron."
    And a new session agent on the same store
    And thread "t1" is asked "Which word?"
    Then the last request of the run holds "Remember the word heron." and "ok: Remember the word heron."

  Scenario: Threads never see each other's turns
    Given a session agent
    When thread "a" is asked "alpha secret"
    And thread "b" is asked "bravo question"
    Then the last request of the run does not hold "alpha secret"

  Scenario: Thirty turns at a 4,096 window stay under the ceiling and recall brings back an omitted fact
    Given a session agent with a window of 4096 tokens
    When thread "long" is asked "The launch code is ZEBRA-42. Keep it."
    And thread "long" is asked 28 filler questions of 600 characters
    And thread "long" is asked "What was the launch code?"
    Then no request of thread "long" was over its ceiling by the server's count
    And the first request of the last turn does not hold "ZEBRA-42"
    And the first request of the last turn says earlier turns are omitted and names recall
    And the last request ends with the question "What was the launch code?"
    And the turn's answer is "The launch code was ZEBRA-42."
    And the run's report says some earlier turns were omitted

  Scenario: Old turns' tool results are trimmed before whole turns are left out
    Given a session agent with a window of 4096 tokens and the tool "lookup"
    When thread "tr" is asked "look up big" and the model calls lookup first
    And thread "tr" is asked "second question"
    And thread "tr" is asked 12 filler questions of 600 characters
    Then some request trims the lookup result while it still holds "look up big"

  Scenario: Notes are sent with every later turn, never trimmed or omitted
    Given a session agent with a window of 4096 tokens and notes
    When thread "n" is asked "I prefer metric units." and the model notes "user prefers metric units"
    And thread "n" is asked 28 filler questions of 600 characters
    And thread "n" is asked "Which units?"
    Then every request after the note holds "user prefers metric units" in its system message
    And the run's report lists the note "user prefers metric units"

  Scenario: A turn that failed at step 3 resumes from step 2 and runs each tool once
    Given a session agent with the tool "lookup"
    When thread "r" is asked "look up a, b, c" and the model calls lookup a, lookup b, then fails
    And thread "r" is resumed with the model calling lookup c, then answering "done: a b c"
    Then the turn's answer is "done: a b c"
    And lookup ran exactly once for each of "a", "b", "c"
    And the resumed run's report says it resumed after step 2
    And the first request of the resumed run holds the results of steps 1 and 2

  Scenario: Resuming with another question is refused and the turn stays resumable
    Given a session agent with the tool "lookup"
    When thread "x" is asked "look up a, b, c" and the model calls lookup a, lookup b, then fails
    And thread "x" is resumed with the question "something else" expecting an error
    Then the session error says "leave the question out to resume"
    When thread "x" is resumed with the model calling lookup c, then answering "done: a b c"
    Then the turn's answer is "done: a b c"
    And lookup ran exactly once for each of "a", "b", "c"

  Scenario: A new question after a failed turn starts a new turn without the failed one
    Given a session agent with the tool "lookup"
    When thread "f" is asked "look up a, b, c" and the model calls lookup a, lookup b, then fails
    And thread "f" is asked "a fresh question"
    Then the last request of the run does not hold "look up a, b, c"
    And the run's report says turn 2 of thread "f" with 0 earlier turns

  Scenario: Fifty threads at once plus five turns on one shared thread
    Given a session agent
    When 50 threads and 5 turns on thread "shared" run at once
    Then every thread's stored turns are its own
    And thread "shared" holds 5 turns, each question once
    And no request carried a question of another thread

  Scenario: With a thread_id, a message list is refused in one line
    Given a session agent
    When thread "m" is given two human messages
    Then the session error says "pass only the new question"

  Scenario: Resuming a thread with nothing to resume is a clear error
    Given a session agent
    When thread "done" is asked "hello"
    And thread "done" is resumed expecting an error
    Then the session error says "no unfinished turn to resume"
