Feature: Human approval of tool calls (issue 41, ADR 0037)
  A call of a tool that asks (the edits and run_command by default) runs only once a
  person decided: approve, edit the arguments, or reject with a reason the model reads.
  With nobody to ask the run pauses, and a resume with the decisions goes on.

  Background:
    Given a workspace with a file "notes.txt" holding "port 7431"

  Scenario: An approved edit runs and the report says who approved it
    Given an approving agent scripted to write "out.txt" then answer
    When the approval agent is asked "write it"
    Then the file "out.txt" holds "done"
    And the report's approvals say "approve" by "approver"

  Scenario: Edited arguments run instead of the model's
    Given an agent whose approver renames the file to "other.txt", scripted to write "out.txt"
    When the approval agent is asked "write it"
    Then the file "other.txt" holds "done"
    And no file "out.txt" exists

  Scenario: A rejected call is told to the model, which tries another way
    Given an agent whose approver rejects "out.txt" with "use a .md file", scripted to try "out.txt" then "out.md"
    When the approval agent is asked "write it"
    Then the model's second request carries "the user rejected this call: use a .md file"
    And the file "out.md" holds "done"
    And no file "out.txt" exists

  Scenario: A rejected call repeated unchanged is rejected again without asking
    Given an agent whose approver rejects "out.txt" with "no", scripted to try "out.txt" twice
    When the approval agent is asked "write it"
    Then the approver was asked 1 time
    And the report counts 1 repeated call

  Scenario: With nobody to ask the run pauses, and a resume with the decision goes on
    Given an agent with no approver scripted to write "out.txt" then answer, in session "t1"
    When the approval agent is asked "write it"
    Then the run stopped "paused" with 1 pending call "c1"
    And the answer says the run is waiting for approval of 1 tool call
    And no file "out.txt" exists
    When session "t1" is resumed with "c1" approved
    Then the file "out.txt" holds "done"
    And the run stopped "answer"

  Scenario: A new question while a turn waits for approval is refused, and nothing is lost
    Given an agent with no approver scripted to write "out.txt" then answer, in session "t1"
    When the approval agent is asked "write it"
    Then the run stopped "paused" with 1 pending call "c1"
    When the approval agent is asked "something else" in the same session
    Then it is refused with ApprovalPending naming call "c1" and "aresume"
    When session "t1" is resumed with "c1" approved
    Then the file "out.txt" holds "done"
    And the run stopped "answer"

  Scenario: An approved edit of a file read before the pause runs in a new process
    Given a workspace with a file "notes.md" holding "old"
    And an agent with no approver scripted to read "notes.md" then overwrite it, in session "t2"
    When the approval agent is asked "rewrite notes.md"
    Then the run stopped "paused" with 1 pending call "c2"
    When a new agent resumes session "t2" with "c2" approved
    Then the file "notes.md" holds "done"
    And the run stopped "answer"

  Scenario: A file changed on disk during the pause is not edited blind
    Given a workspace with a file "notes.md" holding "old"
    And an agent with no approver scripted to read "notes.md" then overwrite it, in session "t3"
    When the approval agent is asked "rewrite notes.md"
    And the file "notes.md" is changed on disk to "changed by a person"
    And a new agent resumes session "t3" with "c2" approved
    Then the file "notes.md" holds "changed by a person"
    And the resumed call's result says "changed on disk since you read it"

  Scenario: A sub-agent's call asks through its parent's approver
    Given a parent agent with an approver whose sub-agent is scripted to write "sub.txt"
    When the approval agent is asked "delegate"
    Then the approver was asked about "write_file" from the agent "writer"
    And the file "sub.txt" holds "done"

  Scenario: An approved command's long output is capped as any result
    Given an approving agent scripted to run a command that prints 5000 lines
    When the approval agent is asked "run it"
    Then the command's record was cut from its raw size
    And the model read the command's result cut to its record's size, with "characters left out to save context"
    And the report's approvals say "approve" by "approver"

  Scenario: A typed answer of a paused run is none
    Given an agent with no approver and an answer schema, scripted to write "out.txt"
    When the approval agent is asked "write it"
    Then the run stopped "paused" with 1 pending call "c1"
    And the typed answer is none

  Scenario: leanloop run without a terminal or a flag pauses with exit code 4
    Given an agents file whose agent is scripted to write "out.txt" then answer
    When leanloop run is called with "--json"
    Then the exit code is 4 and the JSON says "paused" with the pending call "c1"
    When leanloop run is called with "--json --approve write_file"
    Then the exit code is 0 and the file "out.txt" holds "done"

  Scenario: A tool that asks only on a condition runs the other calls without asking
    Given an agents file whose writer asks only for paths matching "^deploy", scripted to write "draft.md" then "deploy.cfg"
    When leanloop run is called with "--json"
    Then the exit code is 4 and the JSON says "paused" with the pending call "c2"
    And the file "draft.md" holds "done"
    And no file "deploy.cfg" exists
