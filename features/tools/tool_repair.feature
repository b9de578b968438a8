Feature: Tool repair for small models: argument coercion, aliases, tool-name repair, path help
  Small local models send "20" for 20, call read_file(file=...), invent tool names such as
  read_config/app.yaml or find_createServer, and ask for app.yml when the file is
  config/app.yaml. Where the intent is unambiguous the registry and the workspace tools
  read the call the way it was meant and say so in the result; everything else stays a
  one-line error that tells the model what to send.

  # ---- value coercion ------------------------------------------------------------

  Scenario Outline: coercion reads a value of the wrong type that has one sensible reading
    Given a tool registry with the fixture tools:
      | tool                                   |
      | fixtures.tool_fixtures:lookup          |
      | fixtures.tool_fixtures:tune            |
      | fixtures.tool_fixtures:echo_tool       |
      | fixtures.tool_fixtures:pick            |
      | fixtures.tool_fixtures:json_flags_tool |
    When the coercion registry runs "<tool>" with '<sent>'
    Then the tool call succeeded
    And the coercion gave the tool '<received>'
    And the tool outcome notes include "<note>"
    And the tool result starts with "[<note>]"

    Examples: strings for numbers and booleans
      | tool       | sent                                  | received                                          | note                        |
      | lookup     | {"key": "a", "count": "20"}           | {"key": "a", "count": 20}                         | read count "20" as 20       |
      | lookup     | {"key": "a", "count": " 3 "}          | {"key": "a", "count": 3}                          | read count " 3 " as 3       |
      | tune       | {"verbose": "true"}                   | {"verbose": true, "ratio": 1.0, "ids": null}      | read verbose "true" as true |
      | tune       | {"verbose": "No"}                     | {"verbose": false, "ratio": 1.0, "ids": null}     | read verbose "No" as false  |
      | tune       | {"verbose": 1}                        | {"verbose": true, "ratio": 1.0, "ids": null}      | read verbose 1 as true      |
      | tune       | {"verbose": true, "ratio": "0.5"}     | {"verbose": true, "ratio": 0.5, "ids": null}      | read ratio "0.5" as 0.5     |
      | tune       | {"verbose": true, "ratio": "2"}       | {"verbose": true, "ratio": 2, "ids": null}        | read ratio "2" as 2         |
      | json_flags | {"flag": "yes"}                       | {"flag": true}                                    | read flag "yes" as true     |
      | json_flags | {"flag": true, "size": "1.5"}         | {"flag": true, "size": 1.5}                       | read size "1.5" as 1.5      |

    Examples: types from type lists, enums and referenced definitions
      | tool       | sent                                  | received                                          | note                        |
      | json_flags | {"flag": true, "level": "4"}          | {"flag": true, "level": 4}                        | read level "4" as 4         |
      | json_flags | {"flag": true, "mode": "2"}           | {"flag": true, "mode": 2}                         | read mode "2" as 2          |
      | json_flags | {"flag": true, "cfg": {"on": "yes"}}  | {"flag": true, "cfg": {"on": true}}               | read cfg.on "yes" as true   |
      | tune       | {"verbose": true, "ids": "null"}      | {"verbose": true, "ratio": 1.0, "ids": null}      | read ids "null" as null     |

    Examples: a single value where a list is expected
      | tool       | sent                                  | received                                          | note                        |
      | echo       | {"words": "hello"}                    | {"words": ["hello"], "sep": " "}                  | read words "hello" as ["hello"] |
      | tune       | {"verbose": true, "ids": "7"}         | {"verbose": true, "ratio": 1.0, "ids": [7]}       | read ids "7" as [7]         |
      | tune       | {"verbose": true, "ids": 7}           | {"verbose": true, "ratio": 1.0, "ids": [7]}       | read ids 7 as [7]           |
      | json_flags | {"flag": true, "tags": "x"}           | {"flag": true, "tags": ["x"]}                     | read tags "x" as ["x"]      |

    Examples: JSON-encoded lists and objects passed as strings
      | tool       | sent                                                                      | received                                                         | note                       |
      | echo       | {"words": "[\"a\", \"b\"]", "sep": "-"}                                   | {"words": ["a", "b"], "sep": "-"}                                | read words from its JSON text |
      | pick       | {"mode": "fast", "tags": ["t"], "opts": "{\"depth\": 4}", "note": null}   | {"mode": "fast", "tags": ["t"], "opts": {"depth": 4}, "note": null} | read opts from its JSON text |
      | json_flags | {"flag": true, "opts": "{\"depth\": 2}"}                                  | {"flag": true, "opts": {"depth": 2}}                             | read opts from its JSON text |
      | tune       | {"verbose": true, "ids": "[1, \"2\"]"}                                    | {"verbose": true, "ratio": 1.0, "ids": [1, 2]}                   | read ids from its JSON text |

    Examples: numbers where text is expected
      | tool       | sent                                  | received                                          | note                        |
      | lookup     | {"key": 8080}                         | {"key": "8080", "count": 1}                       | read key 8080 as "8080"     |
      | echo       | {"words": [1, true], "sep": 0.5}      | {"words": ["1", "true"], "sep": "0.5"}            | read words.0 1 as "1"       |

  Scenario: coercion inside a plain JSON Schema object is reported with the path of the value
    Given a tool registry with the fixture tools:
      | tool                                   |
      | fixtures.tool_fixtures:json_flags_tool |
    When the registry runs "json_flags" with:
      """
      {"flag": "false", "opts": {"depth": "3"}}
      """
    Then the tool result is:
      """
      [read flag "false" as false]
      [read opts.depth "3" as 3]
      flags flag=False, opts={'depth': 3}
      """

  Scenario: coercion reads the arguments themselves when they come as JSON text
    Given a workspace file "notes.txt" with 3 numbered lines
    When the coercion registry runs "read_file" with the arguments as the text '{"path": "notes.txt", "limit": "1"}'
    Then the tool call succeeded
    And the tool result is:
      """
      [read the arguments from their JSON text]
      [read limit "1" as 1]
          1| line 1
      [lines 1-1 of 3; next: read_file(path="notes.txt", offset=2)]
      """

  Scenario: coercion refuses arguments given as text that is no JSON object
    Given a workspace file "notes.txt" with 3 numbered lines
    When the coercion registry runs "read_file" with the arguments as the text 'notes.txt'
    Then the tool call failed
    And the tool result is "error: read_file takes its arguments as a JSON object of names and values"

  Scenario Outline: coercion does not fire without one sensible reading; the error says what to send
    Given a tool registry with the fixture tools:
      | tool                                   |
      | fixtures.tool_fixtures:lookup          |
      | fixtures.tool_fixtures:tune            |
      | fixtures.tool_fixtures:echo_tool       |
      | fixtures.tool_fixtures:json_flags_tool |
    When the coercion registry runs "<tool>" with '<sent>'
    Then the tool call failed
    And the tool result is one line
    And the tool result contains "<error>"
    And no fixture tool was called

    Examples:
      | tool       | sent                                 | error                                                                                   |
      | lookup     | {"key": "a", "count": "ten"}         | lookup got a wrong argument: "count": input should be a valid integer                    |
      | lookup     | {"key": "a", "count": "2.5"}         | "count": input should be a valid integer                                                 |
      | tune       | {"verbose": "maybe"}                 | tune got a wrong argument: "verbose": input should be a valid boolean                    |
      | tune       | {"verbose": 2}                       | "verbose": input should be a valid boolean                                               |
      | tune       | {"verbose": true, "ids": "[1, 2"}    | "ids": input should be a valid list                                                      |
      | json_flags | {"flag": "perhaps"}                  | json_flags got a wrong argument: "flag": 'perhaps' is not of type 'boolean'              |
      | json_flags | {"flag": true, "opts": "depth 3"}    | "opts": 'depth 3' is not of type 'object'                                                |
      | echo       | {"words": {"a": 1}}                  | echo got a wrong argument: "words.0": input should be a valid string                     |

  Scenario: coercion leaves values of the right type alone and adds no notes
    Given a tool registry with the fixture tools:
      | tool                        |
      | fixtures.tool_fixtures:tune |
    When the registry runs "tune" with:
      """
      {"verbose": false, "ratio": 3, "ids": [1, 2]}
      """
    Then the tool result is "verbose=False ratio=3.0 ids=[1, 2]"
    And the tool outcome has no notes

  Scenario: coercion leaves a value alone where the schema allows any value
    Given a tool registry with the fixture tools:
      | tool                                   |
      | fixtures.tool_fixtures:json_flags_tool |
    When the registry runs "json_flags" with:
      """
      {"flag": true, "anything": "5"}
      """
    Then the tool result is "flags anything='5', flag=True"
    And the tool outcome has no notes

  # ---- argument aliases ----------------------------------------------------------

  Scenario Outline: an alias is read as the parameter it clearly stands for
    Given a workspace with files:
      | path            | content                                   |
      | config/app.yaml | port: 8080\nhost: localhost\nname: demo\n |
    When the coercion registry runs "<tool>" with '<sent>'
    Then the tool call succeeded
    And the tool outcome notes include "<note>"
    And the tool result contains "[<note>]"
    And the tool outcome args are:
      """
      <args>
      """

    Examples:
      | tool       | sent                                                   | note                                | args                                                   |
      | read_file  | {"file": "config/app.yaml"}                            | read "file" as "path"               | {"path": "config/app.yaml"}                            |
      | read_file  | {"filename": "config/app.yaml"}                        | read "filename" as "path"           | {"path": "config/app.yaml"}                            |
      | read_file  | {"filepath": "config/app.yaml"}                        | read "filepath" as "path"           | {"path": "config/app.yaml"}                            |
      | read_file  | {"file_path": "config/app.yaml"}                       | read "file_path" as "path"          | {"path": "config/app.yaml"}                            |
      | read_file  | {"filePath": "config/app.yaml"}                        | read "filePath" as "path"           | {"path": "config/app.yaml"}                            |
      | read_file  | {"Path": "config/app.yaml"}                            | read "Path" as "path"               | {"path": "config/app.yaml"}                            |
      | read_file  | {"path": "config/app.yaml", "start": 2}                | read "start" as "offset"            | {"path": "config/app.yaml", "offset": 2}               |
      | read_file  | {"path": "config/app.yaml", "line": 2}                 | read "line" as "offset"             | {"path": "config/app.yaml", "offset": 2}               |
      | read_file  | {"path": "config/app.yaml", "count": 1}                | read "count" as "limit"             | {"path": "config/app.yaml", "limit": 1}                |
      | read_file  | {"path": "config/app.yaml", "lines": "1"}              | read "lines" as "limit"             | {"path": "config/app.yaml", "limit": 1}                |
      | search     | {"query": "port"}                                      | read "query" as "pattern"           | {"pattern": "port"}                                    |
      | search     | {"regex": "po.t"}                                      | read "regex" as "pattern"           | {"pattern": "po.t"}                                    |
      | search     | {"text": "port"}                                       | read "text" as "pattern"            | {"pattern": "port"}                                    |
      | search     | {"keyword": "port"}                                    | read "keyword" as "pattern"         | {"pattern": "port"}                                    |
      | search     | {"pattern": "port", "maxResults": 5}                   | read "maxResults" as "max_results"  | {"pattern": "port", "max_results": 5}                  |
      | search     | {"pattern": "port", "limit": 5}                        | read "limit" as "max_results"       | {"pattern": "port", "max_results": 5}                  |
      | search     | {"pattern": "port", "directory": "config"}             | read "directory" as "path"          | {"pattern": "port", "path": "config"}                  |
      | list_files | {"folder": "config", "include": "*.yaml"}              | read "include" as "glob"            | {"path": "config", "glob": "*.yaml"}                   |
      | list_files | {"folder": "config", "include": "*.yaml"}              | read "folder" as "path"             | {"path": "config", "glob": "*.yaml"}                   |

  Scenario: an alias and a coerced value are both reported, aliases first
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_file" with:
      """
      {"file": "notes.txt", "start": "2", "colour": "red"}
      """
    Then the tool result is:
      """
      [read "file" as "path"]
      [read "start" as "offset"]
      [read offset "2" as 2]
      [ignored unknown arguments: colour]
          2| line 2
          3| line 3
      [lines 2-3 of 3; end of file]
      """

  Scenario: an alias is not read when the real name is also given
    Given a workspace file "notes.txt" with 3 numbered lines
    And a workspace file "other.txt" with 1 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "notes.txt", "file": "other.txt", "limit": 1}
      """
    Then the tool call succeeded
    And the tool result is:
      """
      [ignored unknown arguments: file]
          1| line 1
      [lines 1-1 of 3; next: read_file(path="notes.txt", offset=2)]
      """
    And the tool outcome args are:
      """
      {"path": "notes.txt", "limit": 1}
      """

  Scenario: two aliases of the same parameter are ambiguous and neither is read
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_file" with:
      """
      {"file": "notes.txt", "filename": "other.txt"}
      """
    Then the tool call failed
    And the tool result is one line
    And the tool result is "error: read_file needs "path" (string); send {"path": ...} ["file", "filename" could each mean "path"; send only "path"] [ignored unknown arguments: file, filename]"

  Scenario: an alias that could mean two parameters of the tool is not read
    Given a tool registry with the fixture tools:
      | tool                        |
      | fixtures.tool_fixtures:move |
    When the registry runs "move" with:
      """
      {"path": "a.txt", "dir": "archive"}
      """
    Then the tool call failed
    And the tool result is "error: move needs "folder" (string); send {"folder": ...} ["dir" could mean "path" or "folder"; send one of them by name] [ignored unknown arguments: dir]"
    And no fixture tool was called

  Scenario: the alias reading keeps names that are no alias of any parameter
    Then the alias reading for the parameters "path, offset, limit" gives:
      | sent                                   | read                                   |
      | {"file": "a", "start": 3}              | {"path": "a", "offset": 3}             |
      | {"name": "a"}                          | {"name": "a"}                          |
      | {"query": "a"}                         | {"query": "a"}                         |
      | {"path": "a", "filename": "b"}         | {"path": "a", "filename": "b"}         |
      | {"LIMIT": 5, "path": "a"}              | {"limit": 5, "path": "a"}              |
      | {"file": "a", "fname": "b"}            | {"file": "a", "fname": "b"}            |

  # ---- tool-name repair through the registry ---------------------------------------

  Scenario: repair runs read_file for a name that embeds a path, and says so
    Given a workspace with files:
      | path            | content                    |
      | config/app.yaml | port: 8080\nhost: local\n |
    When the registry runs "read_config/app.yaml" with no arguments
    Then the tool call succeeded
    And the repair outcome ran "read_file" for "read_config/app.yaml"
    And the tool result is:
      """
      [unknown tool "read_config/app.yaml": ran read_file(path="config/app.yaml") instead]
          1| port: 8080
          2| host: local
      [lines 1-2 of 2; end of file]
      """
    And the tool outcome notes include "unknown tool "read_config/app.yaml": ran read_file(path="config/app.yaml") instead"
    And the tool outcome args are:
      """
      {"path": "config/app.yaml"}
      """

  Scenario Outline: repair runs search for a search verb followed by a pattern
    Given a workspace with files:
      | path          | content                                           |
      | src/server.js | const http = require("http");\nhttp.createServer(handler);\n |
    When the registry runs "<name>" with no arguments
    Then the repair outcome ran "search" for "<name>"
    And the tool result is:
      """
      [unknown tool "<name>": ran search(pattern="createServer") instead]
      src/server.js:2:http.createServer(handler);
      [1 match in 1 file]
      """

    Examples:
      | name                    |
      | find_createServer       |
      | search_createServer     |
      | grep_for_createServer   |

  Scenario: repair reads a file name used as a tool name when the file exists
    Given a workspace with files:
      | path      | content   |
      | README.md | # Demo\n |
    And a repair registry over the workspace with a path check
    When the registry runs "README.md" with no arguments
    Then the repair outcome ran "read_file" for "README.md"
    And the tool result starts with "[unknown tool "README.md": ran read_file(path="README.md") instead]"
    And the tool result contains "    1| # Demo"

  Scenario: repair does not read a file name used as a tool name without a path check
    Given a workspace with files:
      | path      | content   |
      | README.md | # Demo\n |
    When the registry runs "README.md" with no arguments
    Then the tool call failed
    And the repair outcome was not repaired
    And the tool result is "error: no tool named "README.md" (did you mean "read_file"?). Available: read_file {path, offset?, limit?}, search {pattern, path?, glob?, max_results?}, list_files {path?, glob?}"

  Scenario: repair does not read a file name as a tool name when that file is missing
    Given a workspace file "notes.txt" with 1 numbered lines
    And a repair registry over the workspace with a path check
    When the registry runs "CHANGES.md" with no arguments
    Then the tool call failed
    And the tool result starts with "error: no tool named "CHANGES.md". Available: read_file {path, offset?, limit?}"

  Scenario: repair does not fill in a path the model already sent
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_config/app.yaml" with:
      """
      {"file": "notes.txt"}
      """
    Then the tool call failed
    And the repair outcome was not repaired
    And the tool result starts with "error: no tool named "read_config/app.yaml" (did you mean "read_file"?). Available:"

  Scenario Outline: repair runs the tool a misspelt or synonym name clearly means
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "<name>" with:
      """
      <args>
      """
    Then the tool call succeeded
    And the repair outcome ran "<tool>" for "<name>"
    And the tool result starts with "[unknown tool "<name>": ran <call> instead]"

    Examples:
      | name                | args                       | tool       | call                          |
      | ReadFile            | {"path": "notes.txt"}      | read_file  | read_file(path="notes.txt")   |
      | functions.read_file | {"path": "notes.txt"}      | read_file  | read_file(path="notes.txt")   |
      | read_files          | {"path": "notes.txt"}      | read_file  | read_file(path="notes.txt")   |
      | open_file           | {"path": "notes.txt"}      | read_file  | read_file(path="notes.txt")   |
      | get_file_contents   | {"path": "notes.txt"}      | read_file  | read_file(path="notes.txt")   |
      | cat                 | {"path": "notes.txt"}      | read_file  | read_file(path="notes.txt")   |
      | grep                | {"pattern": "line 2"}      | search     | search(pattern="line 2")      |
      | ls                  | {}                         | list_files | list_files()                  |
      | list_directory      | {"path": "."}              | list_files | list_files(path=".")          |

  Scenario: a repaired call still has its arguments checked, and says what it tried
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "cat" with no arguments
    Then the tool call failed
    And the repair outcome ran "read_file" for "cat"
    And the tool result is "error: read_file needs "path" (string); send {"path": ...} [unknown tool "cat": tried read_file() instead]"

  Scenario: a repaired call reads aliases and coerces values of the repaired tool
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "view_file" with:
      """
      {"file": "notes.txt", "lines": "1"}
      """
    Then the tool result is:
      """
      [unknown tool "view_file": ran read_file(path="notes.txt", limit=1) instead]
      [read "file" as "path"]
      [read "lines" as "limit"]
      [read limit "1" as 1]
          1| line 1
      [lines 1-1 of 3; next: read_file(path="notes.txt", offset=2)]
      """

  Scenario: repair of a close spelling among the fixture tools
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:lookup |
      | fixtures.tool_fixtures:lookat |
    When the registry runs "lookp" with:
      """
      {"key": "a"}
      """
    Then the repair outcome ran "lookup" for "lookp"
    And the tool result is:
      """
      [unknown tool "lookp": ran lookup(key="a") instead]
      value-of-a
      """

  Scenario: repair refuses a spelling equally close to two tools and lists both
    Given a tool registry with the fixture tools:
      | tool                          |
      | fixtures.tool_fixtures:lookup |
      | fixtures.tool_fixtures:lookat |
    When the registry runs "look" with:
      """
      {"key": "a"}
      """
    Then the tool call failed
    And the repair outcome was not repaired
    And the tool result is "error: no tool named "look" (did you mean "lookup" or "lookat"?). Available: lookup {key, count?}, lookat {key}"
    And no fixture tool was called

  Scenario Outline: repair refuses weak or ambiguous names and lists the tools with their arguments
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "<name>" with no arguments
    Then the tool call failed
    And the repair outcome was not repaired
    And the tool result is one line
    And the repair refusal for "<name>" suggests <hint>
    And the tool result ends with:
      """
      . Available: read_file {path, offset?, limit?}, search {pattern, path?, glob?, max_results?}, list_files {path?, glob?}
      """

    Examples:
      | name        | hint                        |
      | file        | "read_file" or "list_files" |
      | get_weather | nothing                     |
      | read_config | "read_file"                 |
      | write_file  | "read_file" or "list_files" |
      | read_dir    | "read_file"                 |
      | read_multiple_files | "read_file"         |

  Scenario: an unknown name is shown on one short line however the model wrote it
    Given a workspace file "notes.txt" with 3 numbered lines
    When the repair registry runs the made-up name "a very\nlong invented tool name that goes on and on and on and on and on and on and on"
    Then the tool call failed
    And the tool result is one line
    And the tool result starts with "error: no tool named "a very long invented tool name that goes on and on and on and on and on and o...". Available:"

  Scenario: the listing of available tools stops when it gets long
    Given a repair registry with 40 generated tools
    When the registry runs "zzz" with no arguments
    Then the tool call failed
    And the tool result is one line
    And the tool result starts with "error: no tool named "zzz". Available: generated_00 {item, amount?}, generated_01 {item, amount?}"
    And the tool result ends with:
      """
      and 17 more
      """

  Scenario: a path check that fails does not break the run; the name is refused
    Given a workspace file "notes.txt" with 3 numbered lines
    And a repair registry over the workspace with a failing path check
    And the tool logs are captured
    When the registry runs "notes.txt" with no arguments
    Then the tool call failed
    And the tool result starts with "error: no tool named "notes.txt""
    And a tool log warning mentions "repairing tool name 'notes.txt' failed"

  Scenario: repair_call repairs confident names and refuses the rest
    Then the repair of these calls to the workspace tools, with "README.md, config/app.yaml, src" existing, is:
      | name                              | args                  | tool       | repaired args                                  |
      | read_config/app.yaml              | {}                    | read_file  | {"path": "config/app.yaml"}                    |
      | read_file_config/app.yaml         | {}                    | read_file  | {"path": "config/app.yaml"}                    |
      | read_file(path="config/app.yaml") | {}                    | read_file  | {"path": "config/app.yaml"}                    |
      | read_file:config/app.yaml         | {"limit": 5}          | read_file  | {"limit": 5, "path": "config/app.yaml"}        |
      | cat_src/main.py                   | {}                    | read_file  | {"path": "src/main.py"}                        |
      | open_notes.txt                    | {}                    | read_file  | {"path": "notes.txt"}                          |
      | read_config/app.yaml              | {"path": "x"}         | -          |                                                |
      | read_config/app.yaml              | {"filename": "x"}     | -          |                                                |
      | find_createServer                 | {}                    | search     | {"pattern": "createServer"}                    |
      | find_createServer                 | {"query": "x"}        | -          |                                                |
      | search_for_createServer           | {"path": "src"}       | search     | {"path": "src", "pattern": "createServer"}     |
      | list_src                          | {}                    | list_files | {"path": "src"}                                |
      | list_lib                          | {}                    | -          |                                                |
      | README.md                         | {}                    | read_file  | {"path": "README.md"}                          |
      | README.md                         | {"path": "a.md"}      | -          |                                                |
      | config/app.yaml                   | {}                    | read_file  | {"path": "config/app.yaml"}                    |
      | read-file                         | {}                    | read_file  | {}                                             |
      | default_api:search                | {"pattern": "x"}      | search     | {"pattern": "x"}                               |
      | list_file                         | {}                    | list_files | {}                                             |
      | search_files                      | {"pattern": "x"}      | search     | {"pattern": "x"}                               |
      | search_code                       | {"pattern": "x"}      | search     | {"pattern": "x"}                               |
      | file_search                       | {"pattern": "x"}      | search     | {"pattern": "x"}                               |
      | find_file                         | {"pattern": "x"}      | search     | {"pattern": "x"}                               |
      | show                              | {"path": "a"}         | read_file  | {"path": "a"}                                  |
      | find_files                        | {}                    | search     | {}                                             |
      | search_files_in                   | {}                    | search     | {}                                             |
      | files                             | {}                    | -          |                                                |
      | read_multiple_files               | {}                    | -          |                                                |
      | write_file                        | {"path": "a"}         | -          |                                                |
      | get_weather                       | {}                    | -          |                                                |
      | x                                 | {}                    | -          |                                                |
      |                                   | {}                    | -          |                                                |

  # ---- path help -----------------------------------------------------------------

  Scenario: path help suggests the same file name in another folder
    Given a workspace with files:
      | path            | content     |
      | config/app.yaml | port: 1\n |
    When the registry runs "read_file" with:
      """
      {"path": "app.yaml"}
      """
    Then the tool call failed
    And the tool result is "error: no such file: app.yaml (did you mean: config/app.yaml?)"

  Scenario: path help treats an absolute-looking path outside the workspace like a missing one
    Given a workspace with files:
      | path            | content     |
      | config/app.yaml | port: 1\n |
    When the registry runs "read_file" with:
      """
      {"path": "/app.yaml"}
      """
    Then the tool call failed
    And the tool result is "error: path "/app.yaml" is outside the workspace; use a path relative to its root (did you mean: config/app.yaml?)"

  Scenario: path help lists the workspace paths named in the request
    Given a workspace with files:
      | path            | content        |
      | config/app.yaml | port: 1\n    |
      | docs/setup.md   | # Setup\n    |
    And path help with the request naming "docs/setup.md, docs/missing.md, ../outside.txt" and repair_paths off
    When the registry runs "read_file" with:
      """
      {"path": "app.yml"}
      """
    Then the tool call failed
    And the tool result is "error: no such file: app.yml (did you mean: config/app.yaml?; named in the request: docs/setup.md)"

  Scenario: path help does not list a named path twice
    Given a workspace with files:
      | path            | content        |
      | config/app.yaml | port: 1\n    |
    And path help with the request naming "config/app.yaml" and repair_paths off
    When the registry runs "read_file" with:
      """
      {"path": "app.yml"}
      """
    Then the tool result is "error: no such file: app.yml (named in the request: config/app.yaml)"

  Scenario: path help with repair_paths reads the one path named in the request instead
    Given a workspace with files:
      | path            | content               |
      | config/app.yaml | port: 8080\nhost: a\n |
    And path help with the request naming "config/app.yaml, docs/missing.md" and repair_paths on
    When the registry runs "read_file" with:
      """
      {"path": "app.yml"}
      """
    Then the tool call succeeded
    And the tool result is:
      """
      [no file "app.yml"; read "config/app.yaml" (named in the request) instead]
          1| port: 8080
          2| host: a
      [lines 1-2 of 2; end of file]
      """
    And the tool outcome notes include "no file "app.yml"; read "config/app.yaml" (named in the request) instead"
    And the tool outcome args are:
      """
      {"path": "app.yml"}
      """

  Scenario: path help with repair_paths also repairs an absolute-looking path
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
    And path help with the request naming "config/app.yaml" and repair_paths on
    When the registry runs "read_file" with:
      """
      {"path": "/app.yaml"}
      """
    Then the tool result starts with "[no file "/app.yaml"; read "config/app.yaml" (named in the request) instead]"

  Scenario: path help with repair_paths does not guess between two named paths
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
      | config/db.yaml  | port: 5432\n |
    And path help with the request naming "config/app.yaml, config/db.yaml" and repair_paths on
    When the registry runs "read_file" with:
      """
      {"path": "settings.yml"}
      """
    Then the tool call failed
    And the tool result is "error: no such file: settings.yml (named in the request: config/app.yaml, config/db.yaml)"

  Scenario: path help with repair_paths off only lists the named path
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
    And path help with the request naming "config/app.yaml" and repair_paths off
    When the registry runs "read_file" with:
      """
      {"path": "settings.yml"}
      """
    Then the tool call failed
    And the tool result is "error: no such file: settings.yml (named in the request: config/app.yaml)"

  Scenario: path help with repair_paths leaves existing paths and folders alone
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
      | notes.txt       | hello\n      |
    And path help with the request naming "config/app.yaml" and repair_paths on
    When the registry runs "read_file" with:
      """
      {"path": "notes.txt"}
      """
    Then the tool result is:
      """
          1| hello
      [lines 1-1 of 1; end of file]
      """
    And the tool outcome has no notes
    When the registry runs "read_file" with:
      """
      {"path": "config"}
      """
    Then the tool result is "error: config is a folder; use list_files(path="config") to see its files"

  Scenario: path help with repair_paths repairs the path of search and list_files too
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
    And path help with the request naming "config" and repair_paths on
    When the registry runs "search" with:
      """
      {"pattern": "port", "path": "conf"}
      """
    Then the tool result is:
      """
      [no file or folder "conf"; searched "config" (named in the request) instead]
      config/app.yaml:1:port: 8080
      [1 match in 1 file]
      """
    When the registry runs "list_files" with:
      """
      {"path": "settings"}
      """
    Then the tool result is:
      """
      [no file or folder "settings"; listed "config" (named in the request) instead]
      config/app.yaml
      [1 file]
      """

  Scenario: path help only offers files to read_file
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
    And path help with the request naming "config" and repair_paths on
    When the registry runs "read_file" with:
      """
      {"path": "settings.yml"}
      """
    Then the tool call failed
    And the tool result is "error: no such file: settings.yml"

  Scenario: path help whose hints fail goes on without them
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
    And path help whose request paths cannot be read, with repair_paths on
    And the tool logs are captured
    When the registry runs "read_file" with:
      """
      {"path": "app.yml"}
      """
    Then the tool result is "error: no such file: app.yml (did you mean: config/app.yaml?)"
    And a tool log warning mentions "path_hints failed"

  Scenario: path help repairs a path when the tool is invoked without the registry
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
    And path help with the request naming "config/app.yaml" and repair_paths on
    When the path help tool "read_file" is invoked directly with:
      """
      {"path": "app.yml"}
      """
    Then the tool result starts with "[no file "app.yml"; read "config/app.yaml" (named in the request) instead]"

  Scenario: path help options pass through tool loading by name
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
    And path help loaded by name with the request naming "config/app.yaml" and repair_paths on
    When the registry runs "read_file" with:
      """
      {"path": "app.yml"}
      """
    Then the tool result starts with "[no file "app.yml"; read "config/app.yaml" (named in the request) instead]"

  Scenario: the path help check says which paths exist inside the workspace
    Given a workspace with files:
      | path            | content      |
      | config/app.yaml | port: 8080\n |
    And a file "secret.txt" outside the workspace containing "TOPSECRET"
    Then the path help check finds "config/app.yaml" and "config"
    And the path help check does not find "app.yaml", "../outside/secret.txt", "$OUTSIDE/secret.txt" or "bad\u0000name"
