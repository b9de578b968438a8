Feature: Hardening leftovers: located depth errors, glob errors in glob terms, long lines
  An agents file nested too deeply is refused with a located one-line error like every
  other loader error. A glob the workspace tools cannot use is reported as the glob the
  model sent, never as the regular expression it became. read_file reads a file in
  bounded pieces, so one enormous line costs memory for what is shown, not for the line.

  # ---- agents files nested too deeply ----------------------------------------------------

  Scenario: Lists nested too deeply are one error at the line and column where the limit is crossed
    Given an agents file "agents.yaml" nested 600 lists deep
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:1:109: version[0][0][0]: nested too deeply (more than 100 levels)"

  Scenario: Mappings nested too deeply in model kwargs name the key they are under
    Given an agents file "agents.yaml" whose model kwargs are nested 300 mappings deep
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:4:443: agents.reader.model.kwargs: nested too deeply (more than 100 levels)"

  Scenario: Nesting 100 levels deep, the limit, still loads
    Given an agents file "agents.yaml" whose model kwargs are nested 96 mappings deep
    When the agents file "agents.yaml" is loaded
    Then the agents file gives the agents "reader"

  Scenario: Aliases that nest a value too deeply are located at the entry that uses them
    Given an agents file "agents.yaml" with 4 anchors, each nesting the last 40 lists deeper
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:4:12: a2[0][0][0]: nested too deeply (more than 100 levels)"

  # ---- globs the workspace tools cannot use --------------------------------------------

  Scenario Outline: A bad glob is reported as the glob sent, with its position in the glob
    Given a workspace with files:
      | path     | content |
      | src/a.py | x\n     |
    When the registry runs "<tool>" with:
      """
      <arguments>
      """
    Then the tool call failed
    And the tool result is one line
    And the tool result is "<error>"

    Examples:
      | tool       | arguments                                | error                                                                                                                                   |
      | list_files | {"glob": "src/[z-a]*.py"}                | error: the glob "src/[z-a]*.py" is not valid: the range z-a at character 6 runs backwards (write a-z)                                   |
      | search     | {"pattern": "x", "glob": "*.{py,[9-0]}"} | error: the glob "*.{py,[9-0]}" is not valid: the range 9-0 at character 8 runs backwards (write 0-9)                                    |
      | list_files | {"glob": "x{a,[!]}"}                     | error: the glob "x{a,[!]}" is not valid: the set [!] at character 5 is empty (write ? for any one character, or [[]!] for the text [!]) |

  Scenario: Set-like text inside a glob class is matched literally, without warnings
    Given a workspace with files:
      | path  | content |
      | &.txt | x       |
      | a.txt | x       |
      | b.txt | x       |
    When the workspace tool "list_files" is invoked directly, recording warnings, with:
      """
      {"glob": "[a&&b].txt"}
      """
    Then no warning was recorded
    And the tool result is "&.txt\na.txt\nb.txt\n[3 files]"

  # ---- read_file and one enormous line -------------------------------------------------

  Scenario: read_file streams a sparse file with a single 300 MB line in bounded memory
    Given a sparse workspace file "huge.txt" of one 300000000-character line starting with "start of the long line"
    When a fresh process runs read_file on "huge.txt" and measures its peak memory
    Then that read_file returned within 10 s, its peak memory growing by less than 100 MB
    And the tool result line 1 starts with "    1| start of the long line yyyy"
    And the tool result contains "yyyy … [299,998,000 more characters]"
    And the tool result ends with:
      """
      [lines 1-1 of 1; end of file]
      """

  Scenario: read_file cuts a line longer than its read pieces the way it always did
    Given a workspace file "min.js" whose line 3 has 70000 characters
    When the registry runs "read_file" with:
      """
      {"path": "min.js", "offset": 2, "limit": 3}
      """
    Then the tool result, with "Y" standing for 2000 "y", is:
      """
          2| line 2
          3| Y … [68,000 more characters]
          4| after
      [lines 2-4 of 4; end of file]
      """

  Scenario: read_file still splits lines at CR, LF and CRLF, also across its read pieces
    Given a workspace file "mixed.txt" holding the escaped text "a\r\n<70000 y>\r\nb\rc\r\nd"
    When the registry runs "read_file" with:
      """
      {"path": "mixed.txt"}
      """
    Then the tool result, with "Y" standing for 2000 "y", is:
      """
          1| a
          2| Y … [68,000 more characters]
          3| b
          4| c
          5| d
      [lines 1-5 of 5; end of file]
      """
