Feature: Sub-agents inside a session, and the session's ID and resume command
  An `agent:NAME` call made inside a session turn (`leanloop run --session`, `leanloop
  chat`, `configurable.thread_id`) runs without a session (ADR 0022): the sub-run neither
  waits for the turn it is part of nor writes into the caller's conversation; the turn
  stores the call and the sub-agent's answer, like any tool's result, so a resumed turn
  does not run a sub-agent whose step was stored. A run inside a turn that asks for a
  turn of the same session is refused at once instead of waiting for the tool timeout.
  An empty or blank session ID is refused with one line, never taken as "no session";
  the resume command the CLI prints names the agent.

  Both agents talk to the fake model server over HTTP; the lead's tool_timeout is 3 s, so a
  sub-run that waits for the turn's lock fails fast. What a session adds to a sub-agent's
  time is measured by benchmarks/session_subagent_overhead.py, not here.

  Background:
    Given a sub-agent workspace file "notes.txt" holding "port=8931"
    And the scripted server
    And the agents file "agents.yaml" on the scripted server:
      """
      version: 1
      models:
        m: {provider: openai-compatible, model: scripted-model, base_url: "<server>",
            api_key: none, temperature: 0, context_window: 8192, max_retries: 0}
      agents:
        lead:
          model: m
          system_prompt: You lead. Ask the researcher.
          tools: ["agent:researcher"]
          tool_timeout: 3
        researcher:
          model: m
          system_prompt: You research in the notes.
          tools: [read_file]
          workspace: ./ws
      """

  Scenario: A sub-agent inside a --session run answers as it does without a session
    Given each run's script is:
      | reply                                     |
      | call researcher {"task": "find the port"} |
      | call read_file {"path": "notes.txt"}      |
      | The port is 8931.                         |
      | Port 8931.                                |
    When the CLI command "run agents.yaml 'What port?' --agent lead --json" runs the script as "without a session"
    And the CLI command "run agents.yaml 'What port?' --agent lead --session t1 --json" runs the script as "with --session t1"
    Then in both runs the lead answered "Port 8931." after a researcher call that nested a sub-run stopped with "answer"
    And in both runs the lead's last request holds the researcher's answer "The port is 8931."
    And the sub-run of "with --session t1" reports no session

  Scenario: In leanloop chat, sub-runs work on every turn and their messages stay out of the conversation
    Given the scripted server's script:
      | reply                                     |
      | call researcher {"task": "find the port"} |
      | call read_file {"path": "notes.txt"}      |
      | The port is 8931.                         |
      | Port 8931.                                |
      | call researcher {"task": "check again"}   |
      | call read_file {"path": "notes.txt"}      |
      | Still 8931.                               |
      | Still port 8931.                          |
    When the CLI chat "chat agents.yaml --agent lead --session c1" is sent the lines "What port?|And now?"
    Then the CLI exits with 0
    And the CLI stdout holds the answers "Port 8931." and "Still port 8931."
    And the session store beside "agents.yaml" holds only the thread "c1", with 2 done turns
    And every message stored in thread "c1" is the lead's: no "read_file" call and no "port=8931"
    And the stored results of thread "c1" are the researcher's answers "The port is 8931." and "Still 8931."
    And the lead's first request of turn 2 holds "The port is 8931." but no lead request holds "port=8931"

  Scenario: A turn that failed after its sub-agent step resumes without running the sub-agent again
    Given the scripted server's script:
      | reply                                     |
      | call researcher {"task": "find the port"} |
      | call read_file {"path": "notes.txt"}      |
      | The port is 8931.                         |
      | fail 500 "the server went away"           |
    When the agent "lead" is asked "What port?" in Python with thread_id "p1"
    Then the Python run failed mentioning "the server went away"
    And the session store beside "agents.yaml" holds only the thread "p1", with 0 done turns
    Given the scripted server's script:
      | reply      |
      | Port 8931. |
    When the agent "lead" resumes thread "p1" in Python
    Then the Python answer is "Port 8931."
    And the Python run's report says it resumed after step 1
    And the scripted server got 1 request since the resume, holding "The port is 8931."

  Scenario: A run inside a turn that asks for a turn of the same session fails at once
    Given the scripted server's script:
      | reply                                     |
      | call ask_helper {"task": "find the port"} |
      | The helper failed.                        |
    When the agent "lead", with a tool "ask_helper" that asks the agent "researcher" in the caller's config, is asked "What port?" in Python with thread_id "p2"
    Then the Python answer is "The helper failed."
    And call 1 of the Python run failed at once with "a run inside one of its turns cannot take a turn of the same session"
    And the scripted server got 2 requests in all

  Scenario Outline: An empty or blank session ID is refused in one line (<how>)
    When <how> is given the session ID <id>
    Then it is refused with the one line "<message>"
    And the scripted server got 0 requests in all

    Examples:
      | how            | id  | message                                                                                                                  |
      | leanloop run   | ""  | error: --session '' is empty or blank: a session needs an ID with some text in it (leave it out to run without a session)  |
      | leanloop run   | " " | error: --session ' ' is empty or blank: a session needs an ID with some text in it (leave it out to run without a session) |
      | leanloop chat  | ""  | error: --session '' is empty or blank: a session needs an ID with some text in it (leave it out to run without a session)  |
      | leanloop chat  | " " | error: --session ' ' is empty or blank: a session needs an ID with some text in it (leave it out to run without a session) |
      | Python invoke  | ""  | thread_id '' is empty or blank: a session needs an ID with some text in it (leave it out to run without a session)         |
      | Python invoke  | " " | thread_id ' ' is empty or blank: a session needs an ID with some text in it (leave it out to run without a session)        |

  Scenario: The printed resume command names the agent of a file with several agents, and works
    Given session "s1" of "agents.yaml" has a turn "What port?" whose process died
    When the CLI runs "run agents.yaml 'Another question' --agent lead --session s1"
    Then the CLI exits with 2
    And the CLI stderr ends with "; finish it with: leanloop run agents.yaml --agent lead --session s1 --resume"
    Given the scripted server's script:
      | reply      |
      | Port 8931. |
    When the printed resume command is run
    Then the CLI exits with 0
    And the CLI stdout is "Port 8931."
    And the session store beside "agents.yaml" holds only the thread "s1", with 1 done turns
