Feature: Tool registry and tool loading
  The registry runs the model's tool calls so that nothing a tool does or a model sends
  ends the run: every failure is one line the model can act on, and every result is
  capped. Tools come from built-in names or import paths.

  # ---- failures are messages -----------------------------------------------------

  # An unknown name that can be repaired runs the repaired call: see tool_repair.feature.
  Scenario: an unknown tool name lists the tools there are, with their arguments
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:lookup |
      | fixtures.tool_fixtures:shout  |
    When the registry runs "lookat" with:
      """
      {"key": "a"}
      """
    Then the tool call failed
    And the tool result is "error: no tool named "lookat" (did you mean "lookup"?). Available: lookup {key, count?}, shout {text}"
    And no fixture tool was called

  Scenario: arguments the tool does not take are dropped and the result says so
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:lookup |
    When the registry runs "lookup" with:
      """
      {"key": "a", "colour": "red", "size": 3}
      """
    Then the tool call succeeded
    And the tool result is:
      """
      [ignored unknown arguments: colour, size]
      value-of-a
      """
    And the fixture tool received:
      """
      {"key": "a", "count": 1}
      """
    And the tool outcome args are:
      """
      {"key": "a"}
      """
    And the tool outcome notes include "ignored unknown arguments: colour, size"

  Scenario: a missing required argument says what to send
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:lookup |
    When the registry runs "lookup" with:
      """
      {"count": 2}
      """
    Then the tool call failed
    And the tool result is "error: lookup needs "key" (string); send {"key": ...}"
    And no fixture tool was called

  # "file" itself is now read as "path" (see tool_repair.feature); "name" is no alias.
  Scenario: a missing argument and a wrong name are reported together in one line
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_file" with:
      """
      {"name": "notes.txt"}
      """
    Then the tool call failed
    And the tool result is "error: read_file needs "path" (string); send {"path": ...} [ignored unknown arguments: name]"

  Scenario: a wrongly typed argument is one line naming the argument
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:lookup |
    When the registry runs "lookup" with:
      """
      {"key": "a", "count": "many"}
      """
    Then the tool call failed
    And the tool result is one line
    And the tool result contains "lookup got a wrong argument: "count": input should be a valid integer"
    And the tool result contains "(got "many")"
    And no fixture tool was called

  Scenario: values are coerced the way the tool's schema says, and recorded as received
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:lookup |
    When the registry runs "lookup" with:
      """
      {"key": "a", "count": "2"}
      """
    Then the tool result is:
      """
      [read count "2" as 2]
      value-of-a value-of-a
      """
    And the fixture tool received:
      """
      {"key": "a", "count": 2}
      """
    And the tool outcome args are:
      """
      {"key": "a", "count": 2}
      """
    And the tool outcome notes include "read count "2" as 2"

  Scenario: the outcome records validated nested arguments in JSON form
    Given a tool registry with the fixture tools:
      | tool                        |
      | fixtures.tool_fixtures:pick |
    When the registry runs "pick" with:
      """
      {"mode": "fast", "tags": ["a"], "opts": {"depth": "3"}, "note": null}
      """
    Then the tool result is:
      """
      [read opts.depth "3" as 3]
      picked
      """
    And the tool outcome args are:
      """
      {"mode": "fast", "tags": ["a"], "opts": {"depth": 3}, "note": null}
      """

  Scenario: arguments that are not an object are refused
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:lookup |
    When the registry runs "lookup" with:
      """
      ["a"]
      """
    Then the tool call failed
    And the tool result is "error: lookup takes its arguments as a JSON object of names and values"

  Scenario: a tool that raises becomes an error line with the exception type
    Given a tool registry with the fixture tools:
      | tool                           |
      | fixtures.tool_fixtures:explode |
    And the tool logs are captured
    When the registry runs "explode" with:
      """
      {"reason": "disk on fire"}
      """
    Then the tool call failed
    And the tool result is "error: ValueError: disk on fire"
    And the fixture tool received:
      """
      {"reason": "disk on fire"}
      """
    And a tool log warning mentions "tool explode failed: ValueError: disk on fire"

  Scenario: a ToolException becomes its own message, on one line
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:refuse |
    When the registry runs "refuse" with:
      """
      {"reason": "the door is locked"}
      """
    Then the tool call failed
    And the tool result is "error: cannot do that: the door is locked"

  Scenario: a None result becomes an empty string
    Given a tool registry with the fixture tools:
      | tool                           |
      | fixtures.tool_fixtures:nothing |
    When the registry runs "nothing" with no arguments
    Then the tool call succeeded
    And the tool result is empty
    And the fixture tool received:
      """
      {}
      """

  Scenario: a structured result becomes JSON
    Given a tool registry with the fixture tools:
      | tool                           |
      | fixtures.tool_fixtures:numbers |
    When the registry runs "numbers" with:
      """
      {"n": 3}
      """
    Then the tool result is "{"n": 3, "squares": [0, 1, 4], "label": "ü"}"

  Scenario Outline: other results become readable text
    Given a tool registry with the fixture tools:
      | tool                           |
      | fixtures.tool_fixtures:convert |
    When the registry runs "convert" with:
      """
      {"kind": "<kind>"}
      """
    Then the tool call succeeded
    And the tool result is "<text>"

    Examples:
      | kind     | text                |
      | model    | {"x":1,"y":2}       |
      | bytes    | grüße               |
      | message  | from a message      |
      | object   | <opaque thing>      |
      | circular | [1, [...]]          |

  Scenario: missing arguments of several kinds are described for the model
    Given a tool registry with the fixture tools:
      | tool                        |
      | fixtures.tool_fixtures:pick |
    When the registry runs "pick" with no arguments
    Then the tool call failed
    And the tool result is "error: pick needs "mode" (one of "fast", "slow") and "tags" (array of string) and "opts" (object) and "note" (string); send {"mode": ..., "tags": ..., "opts": ..., "note": ...}"
    And no fixture tool was called

  # ---- kinds of tools ------------------------------------------------------------

  Scenario: an async plain callable is run as a coroutine
    Given a tool registry with the fixture tools:
      | tool                                |
      | fixtures.tool_fixtures:async_lookup |
    When the registry runs "async_lookup" with:
      """
      {"key": "k"}
      """
    Then the tool result is "async-value-of-k"
    And the fixture tool received:
      """
      {"key": "k"}
      """

  Scenario: a @tool function is used as it is
    Given a tool registry with the fixture tools:
      | tool                         |
      | fixtures.tool_fixtures:shout |
    When the registry runs "shout" with:
      """
      {"text": "hi"}
      """
    Then the tool result is "HI!"

  Scenario: a BaseTool instance is used as it is and its schema is checked
    Given a tool registry with the fixture tools:
      | tool                             |
      | fixtures.tool_fixtures:echo_tool |
    When the registry runs "echo" with:
      """
      {"words": ["a", "b"], "sep": "-"}
      """
    Then the tool result is "a-b"
    When the registry runs "echo" with:
      """
      {"words": [{"a": 1}]}
      """
    Then the tool call failed
    And the tool result contains "echo got a wrong argument: "words.0": input should be a valid string"

  Scenario: a tool with a plain JSON Schema is checked against it
    Given a tool registry with the fixture tools:
      | tool                                    |
      | fixtures.tool_fixtures:json_schema_tool |
    When the registry runs "json_schema" with:
      """
      {"query": "x", "limit": "ten"}
      """
    Then the tool call failed
    And the tool result is "error: json_schema got a wrong argument: "limit": 'ten' is not of type 'integer'"
    When the registry runs "json_schema" with:
      """
      {"limit": 3}
      """
    Then the tool result is "error: json_schema needs "query" (string); send {"query": ...}"
    When the registry runs "json_schema" with:
      """
      {"query": "x", "extra": 1}
      """
    Then the tool result is:
      """
      [ignored unknown arguments: extra]
      searched x
      """

  Scenario: the registry knows each tool's parameters in order
    Given a tool registry with the fixture tools:
      | tool                                    |
      | fixtures.tool_fixtures:lookup           |
      | fixtures.tool_fixtures:echo_tool        |
      | fixtures.tool_fixtures:json_schema_tool |
    Then the registry parameters of "lookup" are "key, count"
    And the registry parameters of "echo" are "words, sep"
    And the registry parameters of "json_schema" are "query, limit"
    And the registry names are "lookup, echo, json_schema"

  Scenario: the workspace tools declare their parameters in order
    Given a workspace file "notes.txt" with 3 numbered lines
    Then the registry parameters of "read_file" are "path, offset, limit"
    And the registry parameters of "search" are "pattern, path, glob, max_results"
    And the registry parameters of "list_files" are "path, glob"

  Scenario: cancelling a run is not turned into a message
    Given a tool registry with the fixture tools:
      | tool                        |
      | fixtures.tool_fixtures:hang |
    When the registry call of "hang" is cancelled while it runs
    Then the registry let the cancellation through

  # ---- the global cap ------------------------------------------------------------

  Scenario: a long result is cut on a line boundary with a note
    Given a tool registry capped at 1000 characters with the fixture tools:
      | tool                       |
      | fixtures.tool_fixtures:big |
    When the registry runs "big" with:
      """
      {"lines": 100, "width": 40}
      """
    Then the tool call succeeded
    And the tool result is at most 1000 characters and 4099 before the registry cap
    And the tool result keeps only whole lines of 40 characters before its note
    And the tool outcome notes include "capped at 1,000 of 4,099 characters"

  Scenario: a result under the cap is left alone
    Given a tool registry capped at 1000 characters with the fixture tools:
      | tool                       |
      | fixtures.tool_fixtures:big |
    When the registry runs "big" with:
      """
      {"lines": 10, "width": 40}
      """
    Then the tool result is at most 1000 characters and 409 before the registry cap
    And the tool result has 10 lines
    And the tool outcome has no notes

  Scenario: the registry refuses duplicate names and a cap too small to use
    Then building a tool registry with the tools "fixtures.tool_fixtures:lookup, fixtures.tool_fixtures:lookup_again" fails with "two tools are named "lookup""
    And building a tool registry capped at 10 characters fails with "result_max_chars must be at least"

  # ---- loading tools -------------------------------------------------------------

  Scenario: built-in names and import paths load in order
    When the tools are loaded from:
      | tool                                |
      | read_file                           |
      | fixtures.tool_fixtures:lookup       |
      | search                              |
      | fixtures.tool_fixtures:EchoTool     |
      | list_files                          |
    Then the loaded tools are named "read_file, lookup, search, echo, list_files"
    And the loaded tool "lookup" is described as "Look up a key"

  Scenario: a callable without a docstring still loads, with a warning
    Given the tool logs are captured
    When the tools are loaded from:
      | tool                                |
      | fixtures.tool_fixtures:undocumented |
    Then the loaded tools are named "undocumented"
    And the loaded tool "undocumented" is described as "undocumented (no description)"
    And a tool log warning mentions "has no docstring"

  Scenario Outline: a bad tool reference is a one-line error
    When the tools are loaded from:
      | tool  |
      | <ref> |
    Then the tool loading fails with:
      """
      <message>
      """

    Examples:
      | ref                                   | message                                                                              |
      | read_files                            | unknown tool "read_files" (did you mean "read_file"?); built-in tools are read_file |
      | calculator                            | other tools are given as 'package.module:name'                                       |
      | fixtures.nope:thing                   | tool 'fixtures.nope:thing': cannot import module 'fixtures.nope'                     |
      | fixtures.tool_fixtures:missing        | module 'fixtures.tool_fixtures' has no attribute 'missing'                           |
      | fixtures.tool_fixtures:NOT_A_TOOL     | is not a tool or a function (it is of type int)                                      |
      | fixtures.tool_fixtures:NotATool       | is the class NotATool, not a tool or a function                                      |
      | fixtures.tool_fixtures:NeedsArguments | cannot create NeedsArguments() without arguments                                     |
      | fixtures.tool_fixtures:badly_named    | is named 'look up'; use 1-64 letters, digits, '_' or '-'                             |

  Scenario: two tools with the same name are an error
    When the tools are loaded from:
      | tool                                |
      | fixtures.tool_fixtures:lookup       |
      | fixtures.tool_fixtures:lookup_again |
    Then the tool loading fails with:
      """
      two tools are named "lookup" ('fixtures.tool_fixtures:lookup' and 'fixtures.tool_fixtures:lookup_again')
      """

  Scenario: built-in tools need an existing workspace
    When the tools are loaded without a workspace from:
      | tool      |
      | read_file |
    Then the tool loading fails with:
      """
      tool "read_file" needs a workspace folder; set "workspace" for the agent
      """
    When the tool "search" is loaded with the workspace "missing"
    Then the tool loading fails with:
      """
      is not an existing folder
      """

  Scenario: one built-in tool loads on its own
    When the tool "list_files" is loaded with the workspace "."
    Then the loaded tools are named "list_files"
