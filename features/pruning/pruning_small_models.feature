Feature: Pruning that a small model can do, and that never changes what a line says
  Measured on the embedded Qwen2.5-Coder-0.5B: in a 3,300-token chunk it names the wrong
  lines or echoes the focus; in a 1,000-token chunk, with short instructions before the
  lines and the question after them, it copies the deadlock line, though often without
  its timestamp, behind a label, or without the markers. Verification turns every such
  piece into the whole raw line, and only into a line that really holds it.

  Background:
    Given the raw output lines:
      | line                                                                                   |
      | 2026-11-30 02:08:20,412 INFO  [worker-2] db.pool: processed job 10100 status=ok         |
      | 2026-11-30 02:08:21,412 ERROR [worker-3] db.pool: deadlock detected on table jobs (tx 88121) |
      | The service does NOT listen on port 8080; it listens on 9090.                          |
      | retry scheduled for queue=nightly                                                      |
      | retry scheduled for queue=nightly batch=2                                              |

  Scenario Outline: a piece of a line stands for the whole line: <how>
    When the extracted line "<extracted>" is verified
    Then the kept line is raw line <line>

    Examples:
      | how                                   | extracted                                                                          | line |
      | copied whole                          | 2026-11-30 02:08:21,412 ERROR [worker-3] db.pool: deadlock detected on table jobs (tx 88121) | 2 |
      | without its timestamp                 | [worker-3] db.pool: deadlock detected on table jobs (tx 88121)                      | 2    |
      | behind a long label                   | ERROR lines that report a deadlock: db.pool: deadlock detected on table jobs (tx 88121) | 2 |
      | as a bullet                           | - db.pool: deadlock detected on table jobs (tx 88121)                               | 2    |
      | with the prompt's number              | 2\| deadlock detected on table jobs                                                 | 2    |
      | a fragment that would change its sense | listen on port 8080; it listens on 9090.                                           | 3    |

  Scenario Outline: a piece that is too short or in more than one line is dropped: <how>
    When the extracted line "<extracted>" is verified
    Then no line is kept and 1 is dropped

    Examples:
      | how                       | extracted                          |
      | too short to be sure      | db.pool: deadlock                  |
      | in two raw lines          | scheduled for queue=nigh           |
      | not in the output at all  | the ERROR lines that report a deadlock |

  Scenario: a line too long to keep whole is kept as its piece, marked partial
    Given the raw output has a line of 5000 characters holding "needle-in-a-very-long-minified-line"
    When the extracted line "needle-in-a-very-long-minified-line" is verified
    Then the kept line is "…needle-in-a-very-long-minified-line…"

  Scenario: the small prompt style puts short instructions first and the question after the lines
    When an extraction request is built in the "small" style for the focus "the ERROR lines that report a deadlock"
    Then the system message is the small instructions
    And the user message ends with "Which lines are the ERROR lines that report a deadlock? Write their numbers."
    And the user message shows the numbered lines before the question

  Scenario: an answer without markers is read as the output when lines are verified
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a pruning model that answers with the "deadlock" lines and no markers
    When the pruner prunes the "read_file" output for the task "find the deadlock"
    Then the pruned tool message contains "deadlock"
    And the pruner outcome dropped 0 unverifiable lines

  Scenario: an unread range that ends on read_file's footer still names the read_file call
    When the unread range of output lines 2-4 is described for read_file output:
      | line                                        |
      |    40\| first line                          |
      |    41\| second line                         |
      |    42\| third line                          |
      | [lines 40-42 of 90; next: read_file(offset=43)] |
    Then the description is "lines 41-42 not read (timeout); read_file(offset=41, limit=2) reads them"
