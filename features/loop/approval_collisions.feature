Feature: Approval meets the other rules (issue 41, ADR 0037)
  A call that asks a person runs only once decided; after that it is a call like any
  other. These scenarios are where the decision meets another rule: an approved
  command's output is pruned as any prunable result (and a pause keeps the model's focus
  for the pruning), the repeat guard stops a model that insists on a rejected call, and a
  sub-agent's call asks through its parent, on the command line too.
  (In approval.feature already: an approved command's long output cut for the model, a
  rejected call repeated once, a sub-agent's approved call, a typed answer of a paused run,
  and `leanloop run --json` pausing with exit code 4 and the pending call.)

  Background:
    Given a workspace with a file "notes.txt" holding "port 7431"

  Scenario: An approved command's output is pruned for the model, and the approval is on the report
    Given the approval extraction model keeps the lines mentioning "ERROR"
    And an approving agent with run_command pruned, scripted to run a noisy command for "the ERROR lines"
    When the approval agent is asked "run it"
    Then the approver was asked 1 time
    And the approver saw run_command with its argv only, not the pruning meta-arguments
    And the report's one approval is "approve" by "approver" for call "c1"
    And the extraction model was asked to look for "the ERROR lines" in the command's output
    And the model read the command's result pruned to "line 7 ERROR boom" alone
    And the run stopped "answer"

  Scenario: A paused command keeps the model's pruning focus until the resume runs it
    Given the approval extraction model keeps the lines mentioning "ERROR"
    And an agent with run_command pruned and no approver, scripted to run a noisy command for "the ERROR lines", in session "t4"
    When the approval agent is asked "run it"
    Then the run stopped "paused" with 1 pending call "c1"
    And the pending call "c1" is run_command with its argv only
    When session "t4" is resumed with "c1" approved
    Then the report's one approval is "approve" by "resume" for call "c1"
    And the extraction model was asked to look for "the ERROR lines" in the command's output
    And the model read the command's result pruned to "line 7 ERROR boom" alone
    And the run stopped "answer"

  Scenario: A model that insists on a rejected call is stopped by the repeat guard, and says so
    Given an agent whose approver rejects every call with "no", scripted to try "out.txt" 3 times then answer
    When the approval agent is asked "write it"
    Then the approver was asked 1 time
    And no file "out.txt" exists
    And the report's approvals are "reject by approver", then "reject by repeat" for each repeat, 3 in all
    And every result the model read says "the user rejected this call: no; do not repeat it"
    And the last request asked for the answer without offering a tool
    And the answer is "I wrote nothing: the user said no.", and the report says the model kept repeating

  Scenario: A call rejected through a resume and repeated is rejected again, not paused again
    Given an agent with no approver scripted to try "out.txt" 3 times then answer, in session "t5"
    When the approval agent is asked "write it"
    Then the run stopped "paused" with 1 pending call "c1"
    When session "t5" is resumed with "c1" rejected with "not in this folder"
    Then no file "out.txt" exists
    And the report's approvals are "reject by resume", then "reject by repeat" for each repeat, 3 in all
    And every result the model read says "the user rejected this call: not in this folder"
    And the answer is "I wrote nothing: the user said no.", and the report says the model kept repeating

  Scenario: A sub-agent's call rejected through its parent's approver is told to the sub-agent's model
    Given a parent agent whose approver rejects with "not there", its sub-agent scripted to write "sub.txt"
    When the approval agent is asked "delegate"
    Then the approver was asked about "write_file" from the agent "writer"
    And no file "sub.txt" exists
    And the sub-agent's model was told "the user rejected this call: not there"
    And the sub-run's report records "reject" by "approver" with the reason "not there"
    And the parent's model read the sub-agent's answer "I wrote nothing: the user said no."
    And the run stopped "answer"

  Scenario: With nobody to ask, a sub-agent's call does not run and the parent's call fails saying so
    # The parent's run itself does not pause (ADR 0037, open): the sub-run's pending call
    # is in its report, and the parent's call of the sub-agent fails with what waits, so
    # neither its model nor its report takes a waiting text for work done.
    Given a parent agent with no approver, its sub-agent scripted to write "sub.txt"
    When the approval agent is asked "delegate"
    Then no file "sub.txt" exists
    And the sub-run stopped "paused" with the pending call "s1" of write_file
    And the sub-agent's model was asked once, and never after the pause
    And the parent's model read that the call "s1" needs a person's approval and nothing ran
    And the parent's call of the sub-agent is recorded as failed

  Scenario: leanloop run --approve reaches a sub-agent's call
    Given an agents file whose lead delegates to a sub-agent scripted to write "sub.txt"
    When leanloop run asks the lead with "--json --approve write_file"
    Then it exits 0 and the sub-run's approval in the JSON is "approve" by "flag --approve write_file"
    And the file "sub.txt" holds "done"
