Feature: A cut stream is a failed request, never an answer; Ctrl-C cancels a sync run
  A streamed reply that stops before the server says it is finished (no `finish_reason`,
  no `[DONE]`: the connection closed mid-way) is part of a reply. The loop sends the
  request again once; when that is cut too, the run fails with its report, and nothing of
  the cut text counts as the answer. Models that never report a finish reason (test
  doubles, custom classes) are not judged. The server here is real HTTP speaking
  OpenAI's streaming protocol to a real ChatOpenAI client.

  Ctrl-C while `invoke()` waits (KeyboardInterrupt in the caller's thread) cancels the run
  on the background loop: it does not go on after the caller has given up.

  Scenario: A stream cut once is sent again, and the answer is the retry's, shown once
    Given a cut-stream server that replies:
      | fault | text                    |
      | cut   | The code word is riv    |
      | -     | The code word is river. |
    When the cut-stream agent is asked "Which code word?" through astream
    Then the cut-stream run answered "The code word is river."
    And the cut-stream text shown was exactly "The code word is river."
    And the cut-stream server saw 2 requests
    And the cut-stream report has an event mentioning "cut off"

  Scenario: A stream cut twice fails the run with its report, and no answer
    Given a cut-stream server that replies:
      | fault | text                 |
      | cut   | The code word is riv |
      | cut   | The code word is riv |
    When the cut-stream agent is asked "Which code word?" through astream
    Then the cut-stream run failed with an error mentioning "cut off"
    And the cut-stream failure report has stop_reason "failed"
    And the cut-stream server saw 2 requests

  Scenario: A stream cut in the middle of a tool call fails, and the half call never runs
    Given a cut-stream server that replies:
      | fault    | text |
      | cut-call |      |
      | cut-call |      |
    When the cut-stream agent is asked "Which code word?" through astream
    Then the cut-stream run failed with an error mentioning "part of a tool call"
    And the cut-stream failure report has no tool calls

  Scenario: A whole stream with its finish reason answers on the first request
    Given a cut-stream server that replies:
      | fault | text                    |
      | -     | The code word is river. |
    When the cut-stream agent is asked "Which code word?" through astream
    Then the cut-stream run answered "The code word is river."
    And the cut-stream server saw 1 requests

  Scenario: A model that never reports a finish reason is not taken for a cut stream
    Given a cut-stream agent on a streaming test model that answers "Plain answer."
    When the cut-stream agent is asked "Anything?" through astream
    Then the cut-stream run answered "Plain answer."

  Scenario: Ctrl-C during a sync invoke cancels the run on the background loop
    Given a cut-stream agent whose model waits forever
    When Ctrl-C reaches the caller's thread while invoke waits for the model
    Then invoke raised KeyboardInterrupt
    And the model's request was cancelled on the background loop within 2 s
