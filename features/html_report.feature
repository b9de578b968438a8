Feature: A picture of the run: the run report as one self-contained HTML page
  leanloop.htmlreport renders a run report (response_metadata["leanloop"], or what
  `leanloop run --json` prints) as one HTML page: how the run ended, the conversation with
  every tool call and what became of its result, the context events, every request in a
  table and a plot of the prompt tokens per request against the window. The page carries its
  CSS and its SVG inline, runs no script, and escapes every text it shows; a partial report
  (a failed run's) and an empty one render too.

  Background:
    Given every agent has tools "lookup, bulky, huge, explode", report_usage true

  Scenario: A run's report shows every request, every tool call with its fate, and the answer
    Given an agent with window 4000 and the script:
      | reply                                                                  |
      | call lookup {"key": "<script>alert('x')</script>"}; explode {"reason": "no"} |
      | call bulky {"key": "a"}                                                |
      | call bulky {"key": "b"}                                                |
      | call bulky {"key": "c"}                                                |
      | call huge {"key": "d"}                                                 |
      | call lookup {"key": "<script>alert('x')</script>"}                     |
      | The stock is 42 & the <b>log</b> is clean.                             |
    When the agent is asked "What is in stock for <script>alert('q')</script>?"
    And the run's report is rendered as HTML
    Then the page is well-formed HTML titled "leanloop run"
    And the page is self-contained: no script, no external address
    And the requests table has one row per request of the report, with its figures
    And the plot has one point per request, at the height of its prompt tokens
    And the plot draws the window line and the 75% line of a 4000-token window
    And every tool call of the report appears in order with its fate and sizes
    And the fates "kept, failed, trimmed, cut, repeat" appear on the page
    And the page shows "<script>alert('x')</script>" as escaped text
    And the page shows the question and the answer escaped
    And the summary says stop "answer" with no flag and no error

  Scenario: A failed run's partial report renders with the error shown
    Given an agent with window 8000 and the script:
      | reply                                 |
      | call lookup {"key": "a"}              |
      | raise connection reset by <upstream>  |
    When the agent is asked "Look up a" and the run fails
    And the failure's partial report is rendered as HTML
    Then the page is well-formed HTML titled "leanloop run"
    And the summary flags the stop reason "failed" and shows the report's error
    And the page says the run failed before it answered
    And the requests table has one row per request of the report, with its figures
    And the plot has one point per request, at the height of its prompt tokens
    And every tool call of the report appears in order with its fate and sizes

  Scenario: An empty report renders a page that says there is nothing to show
    When the report {} is rendered as HTML
    Then the page is well-formed HTML titled "leanloop run"
    And the page is self-contained: no script, no external address
    And the requests table has no rows and says no requests were recorded
    And the plot has 0 points and says no requests were recorded
    And the summary flags the stop reason "unknown"

  Scenario: A hand-made partial report: estimates only, missing figures, no window, no fates
    When this report is rendered as HTML with the title "run <3>":
      """
      {"stop_reason": "max_rounds", "question": "</title><script>alert(1)</script>",
       "answer": "composed <i>answer</i>", "steps": "two",
       "requests": [{"step": 1, "estimated_tokens": 1200},
                    {"step": 2, "kind": "final", "reported_input_tokens": 900, "estimated_tokens": 1000},
                    {"step": 3},
                    "not a request"],
       "tool_calls": [{"step": 1, "name": "read_file", "args": {"path": "<a>"}, "ok": false},
                      {"step": 1, "name": "grep", "args": "oops", "trimmed_at": 2, "chars_raw": 10, "chars_out": 10},
                      {"step": 2, "name": "dump", "cut_from": 90000, "chars_raw": 90000, "chars_out": 4000}],
       "events": ["step 2: <budget> spent"], "pruning_fallbacks": [{"step": 1, "tool": "read_file", "reason": "timeout"}]}
      """
    Then the page is well-formed HTML titled "run <3>"
    And the page is self-contained: no script, no external address
    And the requests table has 3 rows
    And the plot has 3 points: 1 estimated, 1 reported and 1 without a figure
    And the plot draws no window line
    And the tool calls show the fates "failed, trimmed at step 2, cut" in order
    And the page shows "90,000 → 4,000 chars (cut from 90,000)" as escaped text
    And the page shows "step 2: <budget> spent" as escaped text
    And the page shows "</title><script>alert(1)</script>" as escaped text
    And the pruning fallbacks table has 1 row for "read_file" with the reason "timeout"
    And the answer on the page is "composed <i>answer</i>"
    And the summary flags the stop reason "max_rounds"

  Scenario: An answer given to the renderer wins over the report's own
    When the report {"answer": "from the report", "stop_reason": "answer"} is rendered as HTML with the answer "given <here>"
    Then the answer on the page is "given <here>"
