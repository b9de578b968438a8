Feature: Progress lines say what the loop did, in colour only where it helps
  The CLI's progress printer turns the loop's events into one line each: budget figures,
  each call with ok/failed, prefetched reads, cuts, trims, pruning passes and fallbacks.
  Colour is used on a terminal only, and never when NO_COLOR is set.

  Scenario: Each kind of event becomes its own line
    Given a progress printer without colour
    When the progress printer receives the events:
      | event                        | data                                                                                                                                                                       |
      | leanloop.step                | {"step": 0, "prefetch": true, "calls": [{"name": "read_file", "args": {"path": "handbook.md"}, "chars_out": 4210, "ok": true}]}                                            |
      | leanloop.budget              | {"step": 1, "estimate": 1432, "ceiling": 6553, "window": 8192, "window_source": "server:llama.cpp"}                                                                        |
      | leanloop.budget              | {"step": 2, "estimate": 1500, "ceiling": 6553, "window": 8192, "window_source": "server:llama.cpp"}                                                                        |
      | leanloop.step                | {"step": 1, "calls": [{"name": "read_file", "args": {"path": "app.log"}, "chars_out": 5305, "chars_raw": 15919, "ok": true, "cut_from": 15919}, {"name": "search", "args": {"pattern": "port"}, "chars_out": 36, "ok": false}]} |
      | leanloop.trimmed             | {"step": 2, "count": 2, "tokens_before": 5120, "tokens_after": 3010}                                                                                                       |
      | leanloop.prune_progress      | {"step": 2, "tool": "read_file", "done": 1, "chunks": 4}                                                                                                                   |
      | leanloop.pruned              | {"step": 2, "tool": "read_file", "chars_raw": 50000, "chars_out": 900, "chunks": 4, "seconds": 61.2, "fallback": null}                                                      |
      | leanloop.pruned              | {"step": 2, "tool": "read_file", "chars_raw": 50000, "chars_out": 700, "chunks": 4, "seconds": 80.0, "fallback": null, "unread": [[201, 300, "timeout"]]}                 |
      | leanloop.pruned              | {"step": 3, "tool": "read_file", "chars_raw": 50000, "chars_out": 50000, "chunks": 4, "seconds": 60.0, "fallback": "timeout"}                                              |
      | leanloop.step                | {"step": 3, "calls": [{"name": "read_file", "args": {"path": "app.log"}, "chars_out": 190, "ok": true, "repeated": true}]}                                                  |
    Then the progress lines are, after their time stamps:
      | line                                                                            |
      | step 0 · read_file(path=handbook.md) · prefetched · 4,210 chars                 |
      | step 1 · 1,432 / 6,553 tokens (22%) · window 8,192 (server:llama.cpp)           |
      | step 2 · 1,500 / 6,553 tokens (23%)                                             |
      | step 1 · read_file(path=app.log) · ok · cut 15,919 → 5,305 chars                |
      | step 1 · search(pattern=port) · failed · 36 chars                               |
      | step 2 · trimmed 2 results · 5,120 → 3,010 tokens                               |
      | step 2 · pruning read_file · chunk 1/4                                          |
      | step 2 · pruned read_file · 50,000 → 900 chars · 4 chunks · 61.2 s              |
      | step 2 · pruned read_file · 50,000 → 700 chars · 4 chunks · 80.0 s · lines 201-300 (timeout) not read |
      | step 3 · pruning read_file fell back to the raw output (timeout)                |
      | step 3 · read_file(path=app.log) · repeat, not run                              |
    And every progress line starts with an elapsed time in seconds

  Scenario: A window that is only a default says so on the first budget line
    Given a progress printer without colour
    When the progress printer receives the events:
      | event           | data                                                                                              |
      | leanloop.budget | {"step": 1, "estimate": 870, "ceiling": 25804, "window": 32768, "window_source": "default:local"} |
    Then the progress lines are, after their time stamps:
      | line                                                                       |
      | step 1 · 870 / 25,804 tokens (3%) · window 32,768 (default:local, a guess) |

  Scenario Outline: Colour only on a terminal, never with NO_COLOR
    Given the environment <no_color>
    And a progress printer writing to a stream that <is> a terminal
    When the progress printer receives a failed call
    Then the progress line <has> colour codes

    Examples:
      | no_color        | is     | has      |
      | without NO_COLOR | is     | has      |
      | without NO_COLOR | is not | has no   |
      | with NO_COLOR=1  | is     | has no   |
