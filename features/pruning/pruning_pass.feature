Feature: The pruning pass
  After a prunable tool runs, a stateless call to the pruning model keeps only the
  lines the main model is looking for, verified against the raw output. Anything that
  goes wrong means the raw output is used, with a warning; a run never fails for it.

  Scenario: A 50 KB read_file result of which three lines matter is pruned to at most 300 characters
    Given a pruning test log of 50 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock"
    When the pruner prunes the "read_file" output for the task "why did the nightly job stop?"
    Then the pruner outcome is pruned from 51200 characters in 1 chunk
    And the pruned tool message is at most 300 characters with both marker blocks
    And the pruned tool message keeps the 3 lines mentioning "deadlock" without line numbers
    And the pruner info is the one line "3/1496 lines kept; output_prune=false for all"
    And a pruning info log names "read_file" and "51200"

  Scenario: The extraction is a single-turn pruning request without tools
    Given a pruning test log of 10 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock"
    When the pruner prunes the "read_file" output for the task "why did the nightly job stop?"
    Then the pruning model got 1 request of a system and a human message and no tools
    And the pruning extraction prompt contains "verbatim"
    And the pruning extraction prompt contains "   7| "
    And the pruning extraction prompt contains "why did the nightly job stop?"

  Scenario: The output_prune=false opt-out keeps the raw output without a pruning call
    Given a pruning test log of 50 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock"
    When the pruner prunes the "read_file" output with output_prune false
    Then the pruner kept the raw output because it was skipped as "opted out"
    And the pruning model received no request

  Scenario: An output below pruning_min_chars is not worth a pruning call
    Given a pruning test log of 1 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock"
    And the pruning settings min_chars=2000
    When the pruner prunes the "read_file" output for the task "why did the nightly job stop?"
    Then the pruner kept the raw output because it was skipped as "below min_chars"
    And the pruning model received no request

  Scenario: The output_prune_context focus reaches the pruning prompt and replaces the task context
    Given a pruning test log of 10 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock"
    When the pruner prunes the "read_file" output with focus "the deadlock errors" for the task "TASK-CONTEXT-7"
    Then the pruning extraction prompt contains "the deadlock errors"
    And the pruning extraction prompt does not contain "TASK-CONTEXT-7"
    And the pruner outcome is pruned from 10240 characters in 1 chunk

  Scenario: Invented lines are dropped by pruning verification and counted
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock" and invents 2 more
    When the pruner prunes the "read_file" output for the task "find the deadlock"
    Then the pruner outcome is pruned from 20480 characters in 1 chunk
    And the pruner outcome dropped 2 unverifiable lines
    And the pruner info says "2 unverifiable line(s) dropped"
    And the pruned tool message keeps the 3 lines mentioning "deadlock" without line numbers
    And the pruned tool message does not contain "INVENTED"

  Scenario: Pruning verification forgives wrong line numbers and drops a wrapping code fence
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a pruning model that fences the lines mentioning "deadlock" with wrong line numbers
    When the pruner prunes the "read_file" output for the task "find the deadlock"
    Then the pruner outcome is pruned from 20480 characters in 1 chunk
    And the pruner outcome dropped 0 unverifiable lines
    And the pruned tool message keeps the 3 lines mentioning "deadlock" without line numbers
    And the pruned tool message does not contain "```"

  Scenario: A thinking pruning model's draft markers are ignored
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a thinking pruning model that drafts "DRAFT" and then keeps the lines mentioning "deadlock"
    When the pruner prunes the "read_file" output for the task "find the deadlock"
    Then the pruner outcome dropped 0 unverifiable lines
    And the pruned tool message keeps the 3 lines mentioning "deadlock" without line numbers
    And the pruned tool message does not contain "DRAFT"

  Scenario: Pruning verification can be switched off
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock" and invents 2 more
    And the pruning settings verify=false
    When the pruner prunes the "read_file" output for the task "find the deadlock"
    Then the pruner outcome dropped 0 unverifiable lines
    And the pruned tool message keeps the 3 lines mentioning "deadlock" without line numbers
    And the pruned tool message contains "INVENTED"

  Scenario: A pruning answer with only invented lines falls back to the raw output
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a pruning model that only invents lines
    When the pruner prunes the "read_file" output for the task "find the deadlock"
    Then the pruner kept the raw output because of the fallback "nothing verifiable"
    And a pruning warning names "read_file" and "nothing verifiable"

  Scenario: An empty OUTPUT block means nothing relevant, and the pruned message says so
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a pruning model that finds nothing relevant
    When the pruner prunes the "read_file" output for the task "find the password"
    Then the pruner outcome is pruned from 20480 characters in 1 chunk
    And the pruner info says "nothing relevant was found; pruned from 20480 to 0 characters"

  Scenario: A pruning answer that keeps everything saves nothing, so the raw output is kept
    Given a pruning test log of 3 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps every line
    When the pruner prunes the "read_file" output for the task "show me the whole log"
    Then the pruner kept the raw output because of the fallback "not smaller"

  Scenario: Reserved markers in a tool output can neither end the pruning block nor forge content
    Given a pruning tool output with injected marker lines between "alpha" and "omega"
    And a pruning model that copies the lines from "alpha" to "omega" verbatim
    And the pruning settings min_chars=0
    When the pruner prunes the "read_file" output for the task "show the alpha to omega block"
    Then the pruning extraction prompt shows the reserved markers only escaped
    And the pruner info block holds no forged text
    And the pruned output block is the raw lines from "alpha" to "omega" with the markers restored

  Scenario: A 500 KB output is pruned in chunks that fit a 4k pruning window, merged in order
    Given a pruning test log of 500 KB with 5 short lines mentioning "needle"
    And a concurrent pruning model that keeps the lines mentioning "needle", later chunks first
    And the pruning settings window_tokens=4096, concurrency=2, read_tokens=1000000, shapes=0
    When the pruner prunes the "read_file" output for the task "find the lines that matter"
    Then the pruning model got several requests, each fitting a 4096-token pruning window
    And the pruner outcome counts one chunk per pruning request
    And at most 2 pruning requests ran at once
    And the pruned tool message keeps the 5 lines mentioning "needle" in their original order

  Scenario: A single very long line is pruned in numbered pieces, reading only the piece that holds the literal
    Given a pruning test output of one 60000-character line with "needle-77" in the middle
    And a pruning model that keeps the lines mentioning "needle-77"
    And the pruning settings window_tokens=4096
    When the pruner prunes the "read_file" output for the task "find needle-77"
    Then the pruner outcome is pruned from 60000 characters in 1 chunk
    And the pruned tool message contains "needle-77"
    And the pruner outcome dropped 0 unverifiable lines

  Scenario Outline: A failing pruning call falls back to the raw output with a warning
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And <model>
    And the pruning settings timeout=0.05
    When the pruner prunes the "read_file" output for the task "find the deadlock"
    Then the pruner kept the raw output because of the fallback "<fallback>"
    And a pruning warning names "read_file" and "<fallback>"

    Examples:
      | model                                            | fallback                      |
      | a pruning model that fails with "boom"           | exception: ScriptError: boom  |
      | a slow pruning model                             | timeout                       |
      | a pruning model that answers "The log is fine."  | nothing verifiable            |
      | a pruning model that answers "[PRUNE_INFO_START] kept nothing" | unparseable     |

  Scenario: A bug inside the pruning pass still falls back to the raw output
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock"
    When the pruner prunes the "read_file" output with a malformed prune request
    Then the pruner kept the raw output because of a fallback starting with "exception: TypeError"
    And a pruning warning names "read_file" and "exception: TypeError"

  Scenario: Cancelling a pruning pass is not turned into a fallback
    Given a pruning test log of 20 KB with 3 short lines mentioning "deadlock"
    And a slow pruning model
    When the pruning pass is cancelled while the pruner waits for the model
    Then the pruning pass ended with a cancellation

  Scenario: The pruning call carries the caller's callbacks
    Given a pruning test log of 10 KB with 3 short lines mentioning "deadlock"
    And a pruning model that keeps the lines mentioning "deadlock"
    When the pruner prunes the "read_file" output with a recording callback in the pruning config
    Then the pruning callback saw one chat model call named "leanloop.prune"

  Scenario: The pruning task context is the user's request and the latest reasoning
    Given a pruning test conversation with a system prompt, a request, reasoning and a tool result
    When the pruning task context is taken from the conversation
    Then the pruning task context contains "find why the nightly job stopped"
    And the pruning task context contains "now look for the deadlock in the log"
    And the pruning task context does not contain "You are a careful assistant"
    And the pruning task context does not contain "RAW TOOL OUTPUT"

  Scenario: A long request and long reasoning are shortened in the pruning task context
    Given a pruning test conversation with a 5000-character request and 5000-character reasoning
    When the pruning task context is taken from the conversation
    Then the pruning task context contains "REQUEST-START"
    And the pruning task context contains "REASONING-END"
    And the pruning task context does not contain "REQUEST-END"
    And the pruning task context does not contain "REASONING-START"
    And the pruning task context is at most 2100 characters

  Scenario Outline: Impossible pruning settings are refused with a clear error
    When pruning settings are made with <setting>
    Then the pruning settings are refused naming "<name>"

    Examples:
      | setting           | name            |
      | concurrency=0     | concurrency     |
      | timeout=0         | timeout         |
      | window_tokens=0   | window_tokens   |
      | min_chars=-1      | min_chars       |
      | chars_per_token=0 | chars_per_token |
