Feature: Each file named in a question is pruned for its own part of the question
  A question that asks for facts from several files gives each file's pruning pass the
  clauses about that file and the clauses that name no file; the clauses about the other
  files are left out (a small model copied a three-part question back instead of lines).
  A question that names one file, or a call of a file the question does not name, keeps
  the whole question.

  Scenario Outline: The clauses about other files are left out
    Given the question "Answer quoting each value: (1) in logs/a.log, the id of svc-a; (2) in config/b.yaml, the owner of svc-b; (3) in src/c.py, the timeout of job-c. Each fact is in the file named."
    And the question names logs/a.log, config/b.yaml and src/c.py
    When the question is narrowed for a call with path "<path>"
    Then the narrowed question is "<narrowed>"

    Examples:
      | path          | narrowed                                                                                    |
      | logs/a.log    | Answer quoting each value: (1) in logs/a.log, the id of svc-a; Each fact is in the file named. |
      | ./config/b.yaml | Answer quoting each value: (2) in config/b.yaml, the owner of svc-b; Each fact is in the file named. |
      | c.py          | Answer quoting each value: (3) in src/c.py, the timeout of job-c. Each fact is in the file named. |

  Scenario: A call of a file the question does not name keeps the whole question
    Given the question "Compare logs/a.log with config/b.yaml."
    And the question names logs/a.log and config/b.yaml
    When the question is narrowed for a call with path "notes.txt"
    Then the narrowed question is the whole question

  Scenario: A question that names one file keeps all of it
    Given the question "Why did the job stop? See app.log; the night run failed."
    And the question names app.log
    When the question is narrowed for a call with path "app.log"
    Then the narrowed question is the whole question

  Scenario: Prefetched files are each pruned with their own part of the question
    Given a trigger workspace with these logs:
      | name  | kb |
      | a.log | 8  |
      | b.log | 8  |
    And a trigger main model with the script:
      | reply                       |
      | Two deadlocks in each log.  |
    And a trigger agent with pruning_trigger "size", a 16384-token window and prefetching
    When the trigger agent is asked "(1) In a.log, when was the first deadlock? (2) In b.log, when was the last one?"
    Then the trigger pruning model's request for a.log asks "In a.log, when was the first deadlock?" and not about b.log
    And the trigger pruning model's request for b.log asks "In b.log, when was the last one?" and not about a.log
