Feature: Workspace tools
  The built-in read_file, search and list_files tools show a workspace in small,
  numbered, page-able pieces, say how to get more, and never reach outside the folder.

  # ---- read_file -----------------------------------------------------------------

  Scenario: read_file shows the first 200 numbered lines and how to read on
    Given a workspace file "notes.txt" with 1234 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "notes.txt"}
      """
    Then the tool call succeeded
    And the tool result has 201 lines
    And the tool result line 1 is "    1| line 1"
    And the tool result line 200 is "  200| line 200"
    And the tool result ends with:
      """
      [lines 1-200 of 1,234; next: read_file(path="notes.txt", offset=201)]
      """

  Scenario: read_file reads a window from an offset
    Given a workspace file "notes.txt" with 30 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "notes.txt", "offset": 11, "limit": 5}
      """
    Then the tool result is:
      """
         11| line 11
         12| line 12
         13| line 13
         14| line 14
         15| line 15
      [lines 11-15 of 30; next: read_file(path="notes.txt", offset=16)]
      """

  Scenario: read_file says when the last window reaches the end of the file
    Given a workspace file "notes.txt" with 1234 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "notes.txt", "offset": 1201, "limit": 100}
      """
    Then the tool result has 35 lines
    And the tool result line 1 is " 1201| line 1201"
    And the tool result ends with:
      """
      [lines 1,201-1,234 of 1,234; end of file]
      """

  Scenario: read_file clamps a large limit to 400 lines and says so
    Given a workspace file "notes.txt" with 1000 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "notes.txt", "limit": 1000}
      """
    Then the tool result has 401 lines
    And the tool result ends with:
      """
      [lines 1-400 of 1,000 (limit 1000 was cut to the maximum of 400); next: read_file(path="notes.txt", offset=401)]
      """

  Scenario: read_file treats an offset below 1 as the first line
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "notes.txt", "offset": 0}
      """
    Then the tool result line 1 is "    1| line 1"

  Scenario: read_file refuses an offset past the end of the file
    Given a workspace file "notes.txt" with 30 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "notes.txt", "offset": 99}
      """
    Then the tool call failed
    And the tool result is "error: offset 99 is past the end of notes.txt (30 lines); use 1-30"

  Scenario: read_file says an empty file is empty
    Given a workspace with files:
      | path      | content |
      | empty.txt |         |
    When the registry runs "read_file" with:
      """
      {"path": "empty.txt"}
      """
    Then the tool call succeeded
    And the tool result is "[empty.txt is empty]"

  Scenario: read_file cuts an overlong line and says how much is left out
    Given a workspace file "min.js" whose line 3 has 5000 characters
    When the registry runs "read_file" with:
      """
      {"path": "min.js"}
      """
    Then the tool result contains "… [3,000 more characters]"
    And the tool result line 4 is "    4| after"

  Scenario: read_file refuses a binary file
    Given a workspace binary file "logo.png"
    When the registry runs "read_file" with:
      """
      {"path": "logo.png"}
      """
    Then the tool call failed
    And the tool result starts with "error: logo.png looks like a binary file ("
    And the tool result is one line

  Scenario: read_file on a missing file suggests the closest existing paths
    Given a workspace with files:
      | path         | content |
      | src/main.py  | x       |
      | docs/main.md | x       |
      | other.txt    | x       |
    When the registry runs "read_file" with:
      """
      {"path": "main.py"}
      """
    Then the tool call failed
    And the tool result starts with "error: no such file: main.py (did you mean: src/main.py, docs/main.md"
    And the tool result does not contain "other.txt"

  Scenario: read_file on a missing file with nothing close just says so
    Given a workspace with files:
      | path      | content |
      | notes.txt | x       |
    When the registry runs "read_file" with:
      """
      {"path": "zzzz.qqq"}
      """
    Then the tool result is "error: no such file: zzzz.qqq"

  Scenario: read_file on a folder points to list_files
    Given a workspace with files:
      | path        | content |
      | src/main.py | x       |
    When the registry runs "read_file" with:
      """
      {"path": "src"}
      """
    Then the tool result is "error: src is a folder; use list_files(path="src") to see its files"

  Scenario: read_file accepts an absolute path inside the workspace
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "$WORKSPACE/notes.txt"}
      """
    Then the tool call succeeded
    And the tool result ends with:
      """
      [lines 1-3 of 3; end of file]
      """

  Scenario: the workspace tools also work when invoked synchronously
    Given a workspace file "notes.txt" with 2 numbered lines
    When the workspace tool "read_file" is invoked directly with:
      """
      {"path": "notes.txt"}
      """
    Then the tool result line 2 is "    2| line 2"

  # ---- search --------------------------------------------------------------------

  Scenario: search finds regex matches as path:line:text
    Given a workspace with files:
      | path        | content                      |
      | a.py        | def main():\n    pass\n      |
      | lib/b.py    | def helper():\n    main()\n  |
      | notes.md    | the main idea\n              |
    When the registry runs "search" with:
      """
      {"pattern": "def \\w+\\("}
      """
    Then the tool result is:
      """
      a.py:1:def main():
      lib/b.py:1:def helper():
      [2 matches in 2 files]
      """

  Scenario: search falls back to a literal search when the regex is invalid
    Given a workspace with files:
      | path     | content                      |
      | a.py     | def main():\n    pass\n      |
      | lib/b.py | def helper():\n    main()\n  |
    When the registry runs "search" with:
      """
      {"pattern": "main("}
      """
    Then the tool result starts with "[not a valid regular expression ("
    And the tool result contains "searched for the text literally]"
    And the tool result contains:
      """
      a.py:1:def main():
      lib/b.py:2:main()
      [2 matches in 2 files]
      """

  Scenario: search narrows by glob and by path
    Given a workspace with files:
      | path          | content        |
      | notes.md      | main idea\n    |
      | src/app.py    | main = 1\n     |
      | src/deep/x.py | main = 2\n     |
      | tests/t.py    | main = 3\n     |
    When the registry runs "search" with:
      """
      {"pattern": "main", "path": "src", "glob": "*.py"}
      """
    Then the tool result is:
      """
      src/app.py:1:main = 1
      src/deep/x.py:1:main = 2
      [2 matches in 2 files]
      """

  Scenario: search with a path glob matches paths under the searched folder
    Given a workspace with files:
      | path          | content        |
      | src/app.py    | main = 1\n     |
      | src/deep/x.py | main = 2\n     |
    When the registry runs "search" with:
      """
      {"pattern": "main", "path": "src", "glob": "deep/*.{py,txt}"}
      """
    Then the tool result is:
      """
      src/deep/x.py:1:main = 2
      [1 match in 1 file]
      """

  Scenario: search stops at 80 matches by default and says to narrow the query
    Given a workspace file "log.txt" with 100 lines matching "hit"
    When the registry runs "search" with:
      """
      {"pattern": "hit"}
      """
    Then the tool result has 81 lines
    And the tool result line 80 is "log.txt:80:hit 79"
    And the tool result ends with:
      """
      [stopped at 80 matches; there are more: narrow the pattern, path or glob, or raise max_results (up to 200)]
      """

  Scenario: search caps max_results at 200
    Given a workspace file "log.txt" with 300 lines matching "hit"
    When the registry runs "search" with:
      """
      {"pattern": "hit", "max_results": 500}
      """
    Then the tool result has 201 lines
    And the tool result ends with:
      """
      [stopped at 200 matches; there are more: narrow the pattern, path or glob]
      """

  Scenario: search skips .git, binary files and very large files
    Given a workspace with files:
      | path        | content              |
      | .git/config | needle = secret\n    |
      | ok.txt      | no match here\n      |
    And a workspace binary file "logo.png"
    And a workspace file "huge.log" of 5 MB containing "needle"
    When the registry runs "search" with:
      """
      {"pattern": "needle|IHDR"}
      """
    Then the tool call succeeded
    And the tool result is:
      """
      no matches for "needle|IHDR"
      [skipped 1 file over 4 MB]
      """

  Scenario: search shows the part of a very long line around the match
    Given a workspace file "min.js" whose line 1 has 3000 characters
    And a workspace with files:
      | path    | content                 |
      | min2.js | aaaa needle bbbb\n      |
    When the registry runs "search" with:
      """
      {"pattern": "y{10}|needle"}
      """
    Then the tool result contains "min.js:1:yyyy"
    And the tool result contains "min2.js:1:aaaa needle bbbb"
    And every tool result line is at most 320 characters

  Scenario: search refuses an empty pattern
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "search" with:
      """
      {"pattern": ""}
      """
    Then the tool call failed
    And the tool result is "error: pattern is empty; send the text or regular expression to look for"

  Scenario: search in a missing folder says so
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "search" with:
      """
      {"pattern": "x", "path": "nowhere"}
      """
    Then the tool result is "error: no such file or folder: nowhere"

  Scenario: search can search one file
    Given a workspace file "notes.txt" with 12 numbered lines
    When the registry runs "search" with:
      """
      {"pattern": "line 1\\d", "path": "notes.txt"}
      """
    Then the tool result is:
      """
      notes.txt:10:line 10
      notes.txt:11:line 11
      notes.txt:12:line 12
      [3 matches in 1 file]
      """

  # ---- list_files ----------------------------------------------------------------

  Scenario: list_files lists sorted relative paths and skips .git
    Given a workspace with files:
      | path      | content |
      | b.txt     | x       |
      | a/z.py    | x       |
      | a/b/c.py  | x       |
      | .git/HEAD | x       |
    When the registry runs "list_files" with no arguments
    Then the tool result is:
      """
      a/b/c.py
      a/z.py
      b.txt
      [3 files]
      """

  Scenario: list_files filters by file-name glob, by path glob and by folder
    Given a workspace with files:
      | path     | content |
      | b.txt    | x       |
      | a/z.py   | x       |
      | a/b/c.py | x       |
    When the registry runs "list_files" with:
      """
      {"glob": "*.py"}
      """
    Then the tool result is:
      """
      a/b/c.py
      a/z.py
      [2 files]
      """
    When the registry runs "list_files" with:
      """
      {"path": "a", "glob": "*/*.py"}
      """
    Then the tool result is:
      """
      a/b/c.py
      [1 file]
      """

  Scenario Outline: list_files understands the usual glob forms
    Given a workspace with files:
      | path       | content |
      | a.txt      | x       |
      | b.txt      | x       |
      | ab.txt     | x       |
      | d/a.txt    | x       |
      | d/e/f.md   | x       |
    When the registry runs "list_files" with:
      """
      {"glob": "<glob>"}
      """
    Then the tool result is "<listing>"

    Examples:
      | glob      | listing                   |
      | ?.txt     | a.txt\nb.txt\nd/a.txt\n[3 files] |
      | [!a]*.txt | b.txt\n[1 file]           |
      | [ab].txt  | a.txt\nb.txt\nd/a.txt\n[3 files] |
      | d/**      | d/a.txt\nd/e/f.md\n[2 files] |
      | d/**/*.md | d/e/f.md\n[1 file]        |
      | *.{md,py} | d/e/f.md\n[1 file]        |

  Scenario: list_files stops at 200 entries and says how many there are
    Given 250 workspace files under "data"
    When the registry runs "list_files" with:
      """
      {"path": "data"}
      """
    Then the tool result has 201 lines
    And the tool result line 1 is "data/f0000.txt"
    And the tool result ends with:
      """
      [showing 200 of 250 files; narrow with path or glob]
      """

  Scenario: list_files says when nothing matches
    Given a workspace with files:
      | path  | content |
      | b.txt | x       |
    When the registry runs "list_files" with:
      """
      {"glob": "*.rs"}
      """
    Then the tool call succeeded
    And the tool result is "no files match "*.rs" under ."

  Scenario: list_files on a file names that file
    Given a workspace with files:
      | path    | content |
      | a/z.py  | x       |
    When the registry runs "list_files" with:
      """
      {"path": "a/z.py"}
      """
    Then the tool result is "a/z.py"

  # ---- confinement ---------------------------------------------------------------

  Scenario: a path climbing out with .. is refused
    Given a file "secret.txt" outside the workspace containing "TOPSECRET"
    And a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "../outside/secret.txt"}
      """
    Then the tool call failed
    And the tool result is "error: path "../outside/secret.txt" is outside the workspace"

  Scenario: an absolute path outside the workspace is refused
    Given a file "secret.txt" outside the workspace containing "TOPSECRET"
    When the registry runs "read_file" with:
      """
      {"path": "$OUTSIDE/secret.txt"}
      """
    Then the tool call failed
    And the tool result contains "is outside the workspace"
    And the tool result does not contain "TOPSECRET"

  Scenario: a symlinked file that leads outside is refused
    Given a file "secret.txt" outside the workspace containing "TOPSECRET"
    And a workspace symlink "leak.txt" to the outside file "secret.txt"
    When the registry runs "read_file" with:
      """
      {"path": "leak.txt"}
      """
    Then the tool result is "error: path "leak.txt" is outside the workspace"

  Scenario: search does not follow symlinks that lead outside
    Given a file "secret.txt" outside the workspace containing "TOPSECRET"
    And a workspace symlink "ext" to the outside folder
    And a workspace symlink "leak.txt" to the outside file "secret.txt"
    And a workspace with files:
      | path      | content          |
      | notes.txt | not a secret\n   |
    When the registry runs "search" with:
      """
      {"pattern": "SECRET"}
      """
    Then the tool result does not contain "ext/secret.txt"
    And the tool result does not contain "leak.txt"
    And the tool result contains "[skipped 2 links leading outside the workspace]"
    When the registry runs "search" with:
      """
      {"pattern": "SECRET", "path": "ext"}
      """
    Then the tool result is "error: path "ext" is outside the workspace"

  Scenario: list_files does not follow symlinks that lead outside
    Given a file "secret.txt" outside the workspace containing "TOPSECRET"
    And a workspace symlink "ext" to the outside folder
    And a workspace with files:
      | path      | content |
      | notes.txt | x       |
    When the registry runs "list_files" with no arguments
    Then the tool result is:
      """
      notes.txt
      [skipped 1 link leading outside the workspace]
      [1 file]
      """
    When the registry runs "list_files" with:
      """
      {"path": ".."}
      """
    Then the tool result is "error: path ".." is outside the workspace"

  Scenario: symlinks that stay inside the workspace are followed once
    Given a workspace with files:
      | path          | content         |
      | docs/guide.md | hello guide\n   |
    And a workspace symlink "alias.md" to the workspace path "docs/guide.md"
    And a workspace symlink "docs/loop" to the workspace path "docs"
    When the registry runs "read_file" with:
      """
      {"path": "alias.md"}
      """
    Then the tool result line 1 is "    1| hello guide"
    When the registry runs "list_files" with no arguments
    Then the tool result is:
      """
      alias.md
      docs/guide.md
      [2 files]
      """

  Scenario: a path that climbs out and back in is fine
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "sub/../notes.txt", "limit": 1}
      """
    Then the tool result ends with:
      """
      [lines 1-1 of 3; next: read_file(path="notes.txt", offset=2)]
      """

  Scenario: a path the system cannot use is refused in one line
    Given a workspace file "notes.txt" with 3 numbered lines
    When the registry runs "read_file" with:
      """
      {"path": "bad\u0000name"}
      """
    Then the tool call failed
    And the tool result starts with "error: path "bad"
    And the tool result contains "cannot be used"
