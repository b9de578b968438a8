Feature: The CLI refuses what it cannot use in one line, and says what it printed
  Tracker issue 28. Bytes that are not UTF-8 in a session ID or a question (on Linux they
  reach Python as lone surrogates) are bad input: one located `error:` line, exit 2,
  with `--json` the usual JSON error object, and no request sent. A `chat` line with such
  bytes is refused the same way and the session goes on (the exit code is then 2); from
  Python such a `thread_id` is a `SessionError`, as a blank one is. Usage errors print the
  JSON error object under `--json` too. An `--html` path where no page can be written is
  bad input, found before the run (exit 2); a page that cannot be written after an
  answered run makes it exit 1. Text a failed run already streamed to stdout is followed
  by a line saying it is no answer.

  The agents talk to the Robot suites' scripted OpenAI-compatible server over HTTP, so a
  refused input shows as no request; the cut-stream scenario writes its own agents file
  for the cut-stream server.

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
          system_prompt: You answer.
          tools: [read_file]
          workspace: ./ws
      """

  Scenario Outline: Bytes that are not UTF-8 in argv are refused in one located line (<what>)
    When the CLI runs "<command>" with each \xNN as that raw byte
    Then the CLI exits with 2
    And the CLI stderr is one line that starts "error: <message>"
    And the CLI stdout is empty
    And the scripted server got 0 requests in all

    Examples:
      | what       | command                                   | message                                                                                                                    |
      | --session  | run agents.yaml --session 'ab\xff' 'What port?' | --session 'ab\udcff' is not UTF-8 text: character 3 is the byte 0xff, which is not UTF-8; no session can be stored under it |
      | question   | run agents.yaml 'What p\xe9rt?'            | the question is not UTF-8 text: character 7 is the byte 0xe9, which is not UTF-8; nothing was sent                          |
      | session+q  | run agents.yaml --session t1 'What p\xe9rt?' | the question is not UTF-8 text: character 7 is the byte 0xe9, which is not UTF-8; nothing was sent                        |

  Scenario Outline: With --json, bytes that are not UTF-8 still print the JSON error object (<what>)
    When the CLI runs "<command>" with each \xNN as that raw byte
    Then the CLI exits with 2
    And the CLI stdout is one JSON error object mentioning "<text>"
    And the CLI stderr has no traceback
    And the scripted server got 0 requests in all

    Examples:
      | what      | command                                                | text                              |
      | --session | run agents.yaml --json --session 'ab\xff' 'What port?' | character 3 is the byte 0xff       |
      | question  | run agents.yaml --json 'What p\xe9rt?'                 | the question is not UTF-8 text     |

  Scenario: A chat line with bytes that are not UTF-8 is refused, and the chat goes on
    Given the scripted server's script:
      | reply      |
      | Port 8931. |
    When the CLI chat "chat agents.yaml --session c1 -q" is sent the raw lines "What p\xe9rt?|What port?"
    Then the CLI exits with 2
    And the CLI stderr is one line that starts "error: line 1 is not UTF-8 text: character 7 is the byte 0xe9, which is not UTF-8; it was not sent"
    And the CLI stdout is "Port 8931."
    And the scripted server got 1 requests in all

  Scenario Outline: From Python, a thread_id that is not UTF-8 text is a SessionError (<id>)
    When Python invoke is given the session ID <id>
    Then it is refused with the one line "<message>"
    And the scripted server got 0 requests in all

    Examples:
      | id          | message                                                                                                                  |
      | "p\udcff"   | thread_id 'p\udcff' is not UTF-8 text: character 2 is the byte 0xff, which is not UTF-8; no session can be stored under it |
      | "p\ud800q"  | thread_id 'p\ud800q' is not UTF-8 text: character 2 is a lone surrogate U+D800, which is not text; no session can be stored under it |

  Scenario Outline: With --json, a usage error prints the JSON error object (<what>)
    When the CLI runs "<command>"
    Then the CLI exits with 2
    And the CLI stdout is one JSON error object mentioning "<text>"
    And the CLI stderr mentions "error: <text>"
    And the scripted server got 0 requests in all

    Examples:
      | what                       | command                                           | text                                                    |
      | no question                | run agents.yaml --json                            | the question is missing (only --resume may leave it out) |
      | an empty question          | run agents.yaml --json ''                         | the question is missing (only --resume may leave it out) |
      | a blank question           | run agents.yaml --json '  '                       | the question '  ' is blank                              |
      | --resume without --session | run agents.yaml --json --resume                   | --resume needs --session ID (the session to resume)     |
      | an unknown option          | run agents.yaml --json --colour 'What port?'      | unrecognized arguments: --colour                        |

  Scenario Outline: An --html path where no page can be written is bad input, before the run (<what>)
    When the CLI runs "<command>"
    Then the CLI exits with 2
    And the CLI stderr is one line that starts "error: --html <path>: cannot write the page there: <why>"
    And the scripted server got 0 requests in all

    Examples:
      | what                      | command                                          | path                  | why                   |
      | a folder                  | run agents.yaml 'What port?' --html ws           | ws                    | it is a folder        |
      | below a file              | run agents.yaml 'What port?' --html ws/notes.txt/run.html | ws/notes.txt/run.html | ws/notes.txt is not a folder |

  Scenario: leanloop report --html to a folder is bad input too
    Given a CLI file "run.json" with:
      """
      {"answer": "Port 8931.", "stop_reason": "answer"}
      """
    When the CLI runs "report run.json --html ws"
    Then the CLI exits with 2
    And the CLI stderr is one line that starts "error: --html ws: cannot write the page there: it is a folder"

  Scenario: A page written where it can be still exits 0
    Given the scripted server's script:
      | reply      |
      | Port 8931. |
    When the CLI runs "run agents.yaml 'What port?' --html pages/run.html"
    Then the CLI exits with 0
    And the CLI stdout is "Port 8931."
    And the CLI stderr mentions "leanloop: wrote pages/run.html"

  Scenario: Text a cut stream already printed is followed by a line saying it is no answer
    Given a cut-stream server that replies:
      | fault | text                 |
      | cut   | The code word is riv |
      | cut   | The code word is riv |
    When the CLI runs "run agents.yaml 'Which code word?'"
    Then the CLI exits with 1
    And the CLI stdout ends with the line that marks the text above as no answer
    And the CLI stderr mentions "cut off"
    And the CLI stderr has no traceback
