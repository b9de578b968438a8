Feature: A picture of the run: the run report as one self-contained HTML page
  leanloop.cli.htmlreport renders a run report (response_metadata["leanloop"], or what
  `leanloop run --json` prints) as one HTML page: how the run ended, the conversation with
  every tool call and what became of its result, the context events, every request in a
  table and a plot of the prompt tokens per request against the window. The page carries its
  CSS and its SVG inline, runs no script, and escapes every text it shows; a partial report
  (a failed run's) and an empty one render too. Reports made by hand (empty, partial, an
  answer given to the renderer) are checked in tests/report/test_htmlreport.py.

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
