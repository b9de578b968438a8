Feature: Pruning chunks that fit, and a pass that finishes
  The pruning pass sizes its chunks from the output's own characters per token: counted
  by the pruning model's llama.cpp server (POST /tokenize) when there is one, else
  estimated from the kind of characters. A chunk refused for its size is cut in two and
  retried. A chunk that fails costs only its own lines, which the pruned message names as
  not read; only when every chunk fails is the raw output used. Unless a scenario names a
  focus, the pass looks for words no line holds, so it reads every part in order: these
  passes have no reading allowance and send no shapes request (features/pruning/
  pruning_shapes.feature and ADR 0006 amendment 7 are about those).

  Scenario: A chunk refused for its size is split and retried, and the pass is pruned
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that refuses requests showing more than 40 lines for size
    And the sized pruning window is 4096 tokens
    When the sized pruner built by make_pruner prunes the output
    Then the sized outcome is pruned without a fallback
    And the sized pruning model refused at least 1 request for size
    And the sized outcome has more chunks than were planned
    And every sized request that was answered showed at most 40 lines
    And the sized pruned message keeps the 3 lines mentioning "deadlock"
    And the sized outcome has no unread lines

  Scenario: Without the too_large predicate a refused chunk is only marked unread
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that refuses requests showing more than 50 lines for size
    And the sized pruning window is 4096 tokens
    When a sized pruner without a too_large predicate prunes the output
    Then the sized pruning model refused at least 1 request for size
    And the sized pruning model got one request per planned chunk
    And every refused sized chunk is unread because of "exception: BadRequestError"

  Scenario: One chunk timing out keeps the other chunks' extracts and names the unread lines
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that hangs on the part with the 2nd "deadlock" line
    And the sized pruning window is 4096 tokens
    And the sized pruning timeout is 0.5 seconds
    When the sized pruner built by make_pruner prunes the output
    Then the sized outcome is pruned without a fallback
    And every planned sized chunk got a request
    And the sized pruned message keeps the 1st and 3rd lines mentioning "deadlock"
    And the sized outcome has 1 unread range, because of "timeout", holding the 2nd "deadlock" line
    And the sized info block asks for the unread lines with read_file offset and limit in file lines
    And a sized pruning warning says "marked as not read"

  Scenario: An unread range of another tool's output is named in output lines
    Given a sized pruning log of 40 KB with 3 lines mentioning "deadlock"
    And a sized pruning model that hangs on the part with the 2nd "deadlock" line
    And the sized pruning window is 4096 tokens
    And the sized pruning timeout is 0.5 seconds
    When the sized pruner prunes the "search" output
    Then the sized outcome is pruned without a fallback
    And the sized info block says "of the output not read (timeout); output_prune=false shows them"

  Scenario: When every chunk fails, the pass falls back with the reason
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that fails every request with "server exploded"
    And the sized pruning window is 4096 tokens
    When the sized pruner built by make_pruner prunes the output
    Then the sized outcome is a fallback starting with "exception: ScriptError: server exploded"
    And the sized pruning model got more than 1 request
    And a sized pruning warning says "server exploded"

  Scenario: Later chunks get a timeout scaled to the measured speed
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that answers its first request in 1.2 seconds, its second in 2.6 seconds and the rest at once
    And the sized pruning window is 4096 tokens
    And the sized pruning timeout is 2.0 seconds
    And the sized pruning concurrency is 1
    When the sized pruner built by make_pruner prunes the output
    Then the sized outcome is pruned without a fallback
    And the sized outcome has no unread lines

  Scenario: A chunked pass reads only the windows with the focus words, best first, and names the rest
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that keeps the lines mentioning "deadlock"
    And the sized pruning window is 4096 tokens
    And the sized pruning concurrency is 1
    And the sized focus is "the deadlock errors"
    When the sized pruner built by make_pruner prunes the output
    Then the sized pruning model got 1 request, showing the 3 lines mentioning "deadlock"
    And the sized pruned message keeps the 3 lines mentioning "deadlock"
    And every line the sized pass did not read is named on its one info line, which says 3 of the output's 495 numbered lines were kept
    And no sized pruning warning was logged

  Scenario: A focus found all over the output is read whole, in chunks in order
    Given a sized pruning log of 40 KB in read_file form with 40 lines mentioning "deadlock"
    And a sized pruning model that keeps the lines mentioning "deadlock"
    And the sized pruning window is 4096 tokens
    And the sized focus is "the deadlock errors"
    When the sized pruner built by make_pruner prunes the output
    Then every planned sized chunk got a request
    And the sized pruned message keeps the 40 lines mentioning "deadlock"
    And the sized outcome has no unread lines

  Scenario: The pass's time limit ends it with what was read, and names the parts it did not reach
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that answers every request in 0.3 seconds, keeping "deadlock"
    And the sized pruning window is 4096 tokens
    And the sized pruning concurrency is 1
    And the sized pruning deadline is 1.2 seconds
    When the sized pruner built by make_pruner prunes the output
    Then the sized outcome is pruned without a fallback
    And the sized pruned message keeps the 1st line mentioning "deadlock"
    And the sized outcome names the parts the time limit left unread, with the call that reads them
    And the sized pass took less than 1.5 seconds

  Scenario Outline: The server's count sizes the chunks
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that keeps the lines mentioning "deadlock"
    And the sized pruning window is 4096 tokens
    And a tokenize server that counts <ratio> characters a token
    When the sized pruner built by make_pruner prunes the output
    Then the sized outcome is pruned without a fallback
    And the sized chunks were sized with <ratio> characters a token from the "server"
    And the tokenize server was asked to count the start of the numbered output
    And every sized request fits 4096 tokens at <ratio> characters a token

    Examples:
      | ratio |
      | 1.5   |
      | 4.0   |

  Scenario: A denser count plans more chunks
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that keeps the lines mentioning "deadlock"
    And the sized pruning window is 4096 tokens
    When the output is pruned once against a tokenize server counting 4.0 and once counting 1.5 characters a token
    Then the pass at 1.5 characters a token planned more than twice the chunks of the pass at 4.0

  Scenario: A server without /tokenize means the content-aware estimate, and no error
    Given a sized pruning log of 40 KB in read_file form with 3 lines mentioning "deadlock"
    And a sized pruning model that keeps the lines mentioning "deadlock"
    And the sized pruning window is 4096 tokens
    And a tokenize server without the endpoint
    When the sized pruner built by make_pruner prunes the output
    And the sized pruner built by make_pruner prunes the output again
    Then the sized outcome is pruned without a fallback
    And the sized chunks were sized with the content-aware estimate
    And the tokenize server was asked 1 time
    And no sized pruning warning was logged

  Scenario: A hosted API is never asked to count
    When a hosted base URL is asked for a token count
    Then the token count is unknown without a request

  Scenario Outline: The content-aware estimate packs prose loosely and logs and JSON densely
    When the content-aware estimate reads a sample of <kind>
    Then the estimate is between <low> and <high> characters a token

    Examples:
      | kind         | low | high |
      | prose        | 3.3 | 3.3  |
      | a log        | 2.5 | 3.2  |
      | compact JSON | 1.8 | 2.5  |
