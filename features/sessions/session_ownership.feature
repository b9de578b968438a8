Feature: A session belongs to the agent that started it, and its turns wait for each other
  Tracker issue 28 (ADR 0024). A stored thread records the agent that first wrote it: the
  resolved path of its agents file and its name; an agent built in Python without a file
  is known by its name alone. Another agent that asks for a turn of the thread, or to
  resume its unfinished turn, is refused with one line that names the thread, the agent
  that owns it and the one that asked: another agent of the same file, an agent of the
  same name in another agents file on the same store, a Python agent of another name.
  Nothing is sent to its model and the thread is unchanged. A thread stored before threads
  recorded their agent is adopted by the first agent that continues it. The store
  scenarios run on SQLite and on a real PostgreSQL server.

  In one process, turns of one thread run one at a time: a call from another event loop
  (asyncio.run in another OS thread, the background loop of invoke) waits for the running
  turn without blocking its own loop, and the waiting calls run in the order they asked
  (ADR 0019). In the messages below, <folder> stands for the scenario's folder.

  Scenario Outline: Another agent of the same file cannot continue the thread; its own agent can (<store>)
    Given a <store> session store
    And the agents file "agents.yaml" on that store, with the scripted agents "writer" and "reader"
    When "writer" of "agents.yaml" is asked "My name is Ada." on thread "t1"
    Then it answered "ok: My name is Ada."
    When "reader" of "agents.yaml" is asked "What is my name?" on thread "t1"
    Then the call is refused with SessionAgentMismatch: "session 't1' belongs to the agent 'writer' of '<folder>/agents.yaml'; the agent 'reader' of '<folder>/agents.yaml' cannot continue or resume it (give it a session ID of its own)"
    And the model of "reader" of "agents.yaml" got no request
    When "writer" of "agents.yaml" is asked "What is my name?" on thread "t1"
    Then it answered "ok: What is my name?"
    And its request held "My name is Ada."
    And thread "t1" holds the done turns "My name is Ada.|What is my name?", recorded as "writer" of "agents.yaml"

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: An agent of the same name in another agents file cannot resume the unfinished turn (<store>)
    Given a <store> session store
    And the agents file "agents.yaml" on that store, with the scripted agents "writer" and "reader"
    And the agents file "copy/agents.yaml" on that store, with the scripted agents "writer" and "reader"
    When "writer" of "agents.yaml" is asked "Look it up." on thread "t1", and its model fails
    Then thread "t1" has an unfinished turn "Look it up."
    When "writer" of "copy/agents.yaml" resumes thread "t1"
    Then the call is refused with SessionAgentMismatch: "session 't1' belongs to the agent 'writer' of '<folder>/agents.yaml'; the agent 'writer' of '<folder>/copy/agents.yaml' cannot continue or resume it (give it a session ID of its own)"
    When "writer" of "copy/agents.yaml" is asked "Something else." on thread "t1"
    Then the call is refused with SessionAgentMismatch: "session 't1' belongs to the agent 'writer' of '<folder>/agents.yaml'; the agent 'writer' of '<folder>/copy/agents.yaml' cannot continue or resume it (give it a session ID of its own)"
    And the model of "writer" of "copy/agents.yaml" got no request
    And thread "t1" has an unfinished turn "Look it up."
    When "writer" of "agents.yaml" resumes thread "t1"
    Then it answered "ok: Look it up."
    And thread "t1" holds the done turns "Look it up.", recorded as "writer" of "agents.yaml"

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A thread stored before threads recorded their agent is adopted by the first agent that continues it (<store>)
    Given a <store> session store
    And the store holds thread "old" in the layout from before threads recorded their agent, with a done turn "My name is Ada."
    And the agents file "agents.yaml" on that store, with the scripted agents "writer" and "reader"
    When "reader" of "agents.yaml" is asked "What is my name?" on thread "old"
    Then it answered "ok: What is my name?"
    And its request held "My name is Ada."
    And thread "old" holds the done turns "My name is Ada.|What is my name?", recorded as "reader" of "agents.yaml"
    When "writer" of "agents.yaml" is asked "Who are you?" on thread "old"
    Then the call is refused with SessionAgentMismatch: "session 'old' belongs to the agent 'reader' of '<folder>/agents.yaml'; the agent 'writer' of '<folder>/agents.yaml' cannot continue or resume it (give it a session ID of its own)"

    @sqlite
    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  @sqlite
  Scenario: An agent built in Python without a file is known by its name alone
    Given a sqlite session store
    And the agents file "agents.yaml" on that store, with the scripted agents "writer" and "reader"
    When a Python-built agent "writer" is asked "Hello." on thread "p1"
    Then it answered "ok: Hello."
    When another Python-built agent "writer" is asked "Again." on thread "p1"
    Then it answered "ok: Again."
    And thread "p1" holds the done turns "Hello.|Again.", recorded as "writer" built in Python
    When a Python-built agent "helper" is asked "Me too?" on thread "p1"
    Then the call is refused with SessionAgentMismatch: "session 'p1' belongs to the agent 'writer' built in Python (no agents file); the agent 'helper' built in Python (no agents file) cannot continue or resume it (give it a session ID of its own)"
    When "writer" of "agents.yaml" is asked "And me?" on thread "p1"
    Then the call is refused with SessionAgentMismatch: "session 'p1' belongs to the agent 'writer' built in Python (no agents file); the agent 'writer' of '<folder>/agents.yaml' cannot continue or resume it (give it a session ID of its own)"

  @sqlite
  Scenario: leanloop run refuses another agent's session in one line, exit 2, with a JSON error under --json
    Given the scripted server
    And the agents file "agents.yaml" on the scripted server:
      """
      version: 1
      models:
        m: {provider: openai-compatible, model: scripted-model, base_url: "<server>",
            api_key: none, temperature: 0, context_window: 8192, max_retries: 0}
      agents:
        writer:
          model: m
          system_prompt: You take notes.
        reader:
          model: m
          system_prompt: You answer questions.
      """
    And the scripted server's script:
      | reply       |
      | Noted, Ada. |
    When the CLI runs "run agents.yaml 'My name is Ada.' --agent writer --session t1"
    Then the CLI exits with 0
    When the CLI runs "run agents.yaml 'What is my name?' --agent reader --session t1"
    Then the CLI exits with 2
    And the CLI stderr is the one line "error: session 't1' belongs to the agent 'writer' of '<folder>/agents.yaml'; the agent 'reader' of '<folder>/agents.yaml' cannot continue or resume it (give it a session ID of its own)"
    When the CLI runs "run agents.yaml 'What is my name?' --agent reader --session t1 --json"
    Then the CLI exits with 2
    And the CLI stdout is one JSON error object mentioning "session 't1' belongs to the agent 'writer' of"
    And the CLI stderr has no traceback
    And the scripted server got 1 requests in all

  @sqlite
  Scenario: Turns of one thread from three event loops wait for each other and run in the order they asked
    Given a sqlite session store
    And a Python-built agent "talker" on that store whose answer to "first" waits until it is released
    When thread "t" is asked "first" with asyncio.run in an OS thread, which takes the turn
    And thread "t" is asked "second" with invoke on its background event loop, until it waits for the turn
    And thread "t" is asked "third" with asyncio.run in another OS thread, until it waits for the turn
    And the answer to "first" is released
    Then the three calls answered "ok: first", "ok: second" and "ok: third", none refused
    And thread "t" holds the done turns "first|second|third", recorded as "talker" built in Python
