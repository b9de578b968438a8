Feature: Session stores keep each thread's turns, steps and notes, across processes
  A session store (leanloop.sessions) keeps a conversation under its thread_id: turns,
  each turn's completed steps, the model's notes. A step is committed before add_step
  returns, so a process killed half-way leaves every completed step behind, and the next
  process resumes the turn. One process runs one turn of a thread at a time; a second
  process is refused while the first lives. The same scenarios run on SQLite (a file) and
  on a real PostgreSQL server started for the test run in a temporary folder.

  Scenario Outline: Every message type comes back exactly as it was stored (<store>)
    Given a <store> session store
    When thread "t1" stores a turn with every message type and its answer
    And the session "t1" is loaded from a new store object on the same URL
    Then every message of the turn compares equal to the one stored, with its type
    And the AI reply kept its tool calls, invalid tool calls, additional kwargs, response metadata, usage and id
    And the tool result kept its tool_call_id, name, status, artifact and id

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: Turns, steps and notes come back in order (<store>)
    Given a <store> session store
    When thread "t1" runs 3 turns, storing steps "2, 0, 1" of each in that order and a note per step
    And the session "t1" is loaded
    Then it has 3 turns numbered 1, 2, 3, each done with its own question and answer
    And each turn's steps come back numbered 0, 1, 2 with their own messages
    And its notes are the 9 notes in the order they were written
    When the session "other" is loaded
    Then it has no turns and no notes

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A second turn while this process runs one is refused as busy (<store>)
    Given a <store> session store
    And thread "t1" has a running turn with 2 steps
    When a new turn of thread "t1" is begun
    Then it fails with SessionBusy, one line naming "t1", turn 1 and "this process"
    And reopening the turn of thread "t1" fails with SessionBusy too

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A turn whose process died must be resumed first, then goes on (<store>)
    Given a <store> session store
    And thread "t1" has a running turn with 2 steps
    And the turn's owner is recorded as a process that no longer exists
    When the session "t1" is loaded
    Then its unfinished turn is turn 1, orphaned, with last step 1
    When a new turn of thread "t1" is begun
    Then it fails with UnfinishedTurn for turn 1 with 2 steps, saying "turn 1 did not finish, 2 steps stored; resume it"
    When the turn of thread "t1" is reopened
    Then the reopened turn is turn 1, running, with steps 0, 1 as stored
    When step 2 is added and the turn is finished as done
    And the session "t1" is loaded
    Then turn 1 is done with steps 0, 1, 2 and its answer
    And the session has no unfinished turn
    And reopening the turn of thread "t1" fails with SessionError "has no unfinished turn"

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A reused pid is not mistaken for the turn's owner (<store>)
    Given a <store> session store
    And thread "t1" has a running turn with 1 steps
    And the turn's owner is recorded as this pid with another start time
    When a new turn of thread "t1" is begun
    Then it fails with UnfinishedTurn for turn 1 with 1 steps, saying "turn 1 did not finish, 1 step stored; resume it"

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: An owner on another host cannot be checked and counts as alive (<store>)
    Given a <store> session store
    And thread "t1" has a running turn with 1 steps
    And the turn's owner is recorded on host "elsewhere"
    When a new turn of thread "t1" is begun
    Then it fails with SessionBusy, one line naming "t1", turn 1 and "host 'elsewhere'"
    And reopening the turn of thread "t1" fails with SessionBusy too
    When the turn of thread "t1" is reopened with force
    Then the reopened turn is turn 1, running, with steps 0 as stored

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A failed turn does not block the next one, and can be resumed (<store>)
    Given a <store> session store
    And thread "t1" has a running turn with 1 steps
    When the turn is finished as failed with an answer
    And the session "t1" is loaded
    Then turn 1 is failed with no answer
    And its unfinished turn is turn 1, not orphaned, with last step 0
    When a new turn of thread "t1" is begun
    Then it is turn 2
    When the session "t1" is loaded
    Then the session has no unfinished turn
    Given thread "t2" has a running turn with 1 steps
    When the turn is finished as failed with an answer
    And the turn of thread "t2" is reopened
    Then the reopened turn is turn 1, running, with steps 0 as stored

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: Steps are written once, to a running turn of this process only (<store>)
    Given a <store> session store
    And thread "t1" has a running turn with 2 steps
    When step 1 of turn 1 of thread "t1" is stored again
    Then it fails with SessionError "step 1 of turn 1 of session 't1' is already stored"
    When step 5 of turn 7 of thread "t1" is stored
    Then it fails with SessionError "session 't1' has no turn 7"
    When step 2 is added and the turn is finished as done
    And step 3 of turn 1 of thread "t1" is stored
    Then it fails with SessionError "turn 1 of session 't1' is done, no longer running"
    When the turn is finished as failed with an answer
    Then it fails with SessionError "turn 1 of session 't1' is done, no longer running"
    When a note is added to turn 9 of thread "t1"
    Then it fails with SessionError "session 't1' has no turn 9"

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: 50 threads plus 5 turns on one shared thread at once stay apart (<store>)
    Given a <store> session store
    When 50 tasks each run a turn on their own thread and 5 tasks run a turn on thread "shared", all at once under thread_lock
    Then each of the 50 threads holds exactly its own turn, steps and answer
    And thread "shared" holds 5 turns numbered 1 to 5, each task's question exactly once with its own steps and answer
    And at most one task was inside thread "shared"'s lock at a time

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: Without thread_lock, a second turn of one thread at once is refused (<store>)
    Given a <store> session store
    When 2 tasks begin a turn of thread "t1" at once without the lock
    Then one of them got turn 1 and the other failed with SessionBusy

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: Two processes on one store: busy while the other lives, resumable once it is killed (<store>)
    Given a <store> session store
    And a child process that began a turn of thread "t1" and stored steps 0 and 1
    When a new turn of thread "t1" is begun
    Then it fails with SessionBusy, one line naming "t1", turn 1 and the child's pid
    When the child process is killed with SIGKILL
    And a new turn of thread "t1" is begun
    Then it fails with UnfinishedTurn for turn 1 with 2 steps, saying "turn 1 did not finish, 2 steps stored; resume it"
    When the turn of thread "t1" is reopened
    Then the reopened turn holds the child's question and its steps 0 and 1, message for message
    When step 2 is added and the turn is finished as done
    And the session "t1" is loaded
    Then turn 1 is done with steps 0, 1, 2 and its answer

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  @sqlite
  Scenario: A store file in a folder that does not exist yet is created, private, in WAL mode
    Given a sqlite session store at "new/deeper/sessions.db" under the scenario folder
    When thread "t1" has a running turn with 1 steps
    Then the file "new/deeper/sessions.db" exists, readable by its owner only
    And the file is in WAL mode, with schema version 1 recorded
    When the store is closed
    Then the folder "new/deeper" holds only "sessions.db"
    When the session "t1" is loaded
    Then turn 1 is running in this process with last step 0

  @sqlite
  Scenario: A store written by a newer leanloop is refused
    Given a sqlite session store
    And thread "t1" has a running turn with 1 steps
    And the store's schema version is changed to 99
    When the session "t1" is loaded from a new store object on the same URL
    Then it fails with SessionError "was written by a newer leanloop (schema 99"

  Scenario Outline: A URL that names no store fails with one line
    When a store is opened at "<url>"
    Then it fails with SessionError "<message>"
    And the error message is one line and does not contain "hunter2"

    Examples:
      | url                                | message                                           |
      | mysql://root@localhost/db          | unknown session store 'mysql://root@localhost/db' |
      | redis://:hunter2@cache:6379/0      | unknown session store 'redis://:***@cache:6379/0' |
      | sessions.db                        | unknown session store 'sessions.db'               |
      |                                    | unknown session store ''                          |
      | sqlite://relative/sessions.db      | the path must be absolute                         |
      | sqlite:///                         | no database file in the path                      |

  @sqlite
  Scenario: A store whose file cannot be made fails with one line on first use
    Given a plain file "blocker" in the scenario folder
    And a sqlite session store at "blocker/sessions.db" under the scenario folder
    When a new turn of thread "t1" is begun
    Then it fails with SessionError "session store sqlite:///"
    And the error message is one line and does not contain "Traceback"

  @postgres
  Scenario: A postgres URL whose server does not answer fails with one line, password hidden
    When a store is opened at "postgresql://leanloop:hunter2@127.0.0.1:9/none?connect_timeout=2"
    And the session "t1" is loaded
    Then it fails with SessionError "session store postgresql://leanloop:***@127.0.0.1:9/none"
    And the error message is one line and does not contain "hunter2"

  Scenario: thread_lock serialises one thread, runs different threads in parallel, on every loop
    When two tasks on one event loop hold thread_lock for thread "a" of one store
    Then the second entered only after the first left
    When two tasks on one event loop hold thread_lock for threads "a" and "b" at the same time
    Then both were inside their locks at once
    When two OS threads each run asyncio.run with thread_lock for thread "a", 3 times
    Then every run finished without an error
    And no lock and no event loop table is left once the runs are over
