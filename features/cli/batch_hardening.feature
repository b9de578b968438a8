Feature: A batch meets broken input and a busy results file with one line, never a trace
  Tracker issue 38 (N4, N6, N8, N20). `leanloop batch` checks its tasks file whole before
  any task runs: a task whose text is not UTF-8 (a lone surrogate, which JSON can spell
  and no results line can hold) and a line nested too deeply to read are located errors,
  exit 2, as any bad line is; a byte order mark at the file's start is no error. A results
  file another batch is writing is refused in one line, exit 2, and left as it was: two
  batches on one file would run every task twice.

  Background:
    Given a CLI agents file "agents.yaml" with:
      """
      version: 1
      agents:
        geo:
          model:
            class: leanloop.testing:ScriptedChatModel
            kwargs: {replies: ["Paris is the capital."]}
      """

  Scenario: A tasks file that starts with a byte order mark runs
    Given a batch tasks file "tasks.jsonl" with:
      """
      {"id": "q1", "question": "Capital of France?", "expected": "Paris"}
      """
    And the file "tasks.jsonl" starts with a UTF-8 byte order mark
    When the CLI runs "batch agents.yaml tasks.jsonl --out out.jsonl"
    Then the CLI exits with 0
    And the CLI stdout mentions "batch: 1/1 tasks done (1 this run, 0 earlier) · 1 answered"
    And the CLI stdout mentions "accuracy: 1/1 correct"
    And the results file "out.jsonl" holds the ids "q1"

  Scenario: A question with a lone surrogate is refused at its line, before any task runs
    Given a batch tasks file "tasks.jsonl" with:
      """
      {"id": "q1", "question": "Capital of France?"}
      {"id": "q2", "question": "half a character: \ud800"}
      """
    When the CLI runs "batch agents.yaml tasks.jsonl --out out.jsonl"
    Then the CLI exits with 2
    And the CLI stderr is one line that starts "error: tasks.jsonl:2: question: holds '\ud800', a lone surrogate: not text (UTF-8)"
    And the CLI stderr has no traceback
    And there is no results file "out.jsonl"

  Scenario: A line nested too deeply to read is refused at its line
    Given a batch tasks file "tasks.jsonl" whose line 2 nests 100000 arrays
    When the CLI runs "batch agents.yaml tasks.jsonl --out out.jsonl"
    Then the CLI exits with 2
    And the CLI stderr is one line that starts "error: tasks.jsonl:2: not a task: nested too deeply to read"
    And the CLI stderr has no traceback
    And there is no results file "out.jsonl"

  Scenario: A results file another batch is writing is refused in one line and left alone
    Given a batch tasks file "tasks.jsonl" with:
      """
      {"id": "q1", "question": "Capital of France?"}
      {"id": "q2", "question": "Capital of Italy?"}
      """
    And another batch is writing the results file "out.jsonl"
    When the CLI runs "batch agents.yaml tasks.jsonl --out out.jsonl"
    Then the CLI exits with 2
    And the CLI stderr is one line that starts "error: out.jsonl: another `leanloop batch` is writing to it; wait for it to end, or give another --out"
    And the results file "out.jsonl" is as the other batch left it
    When the other batch ends
    And the CLI runs "batch agents.yaml tasks.jsonl --out out.jsonl"
    Then the CLI exits with 0
    And the results file "out.jsonl" holds the ids "q1, q2"
