Feature: An LLMAgent is a LangChain Runnable
  The agent composes like any Runnable: invoke, ainvoke, stream, astream, batch and abatch
  work, it takes the usual input shapes, and it fits in an LCEL chain.

  Background:
    Given a runnable agent whose model echoes the last question

  Scenario: invoke answers a string question with a report
    When the runnable agent is invoked with "hello there"
    Then the runnable output is an AIMessage saying "echo: hello there"
    And the runnable output carries a run report with stop_reason "answer"

  Scenario: ainvoke answers a dict input with prior messages
    When the runnable agent is ainvoked with input "and now?" after the history "earlier question"
    Then the runnable output is an AIMessage saying "echo: and now?"
    And the runnable model saw 3 messages: system, human "earlier question", human "and now?"

  Scenario: batch and abatch answer each input
    When the runnable agent is batched with "one, two, three"
    Then the runnable batch answers are "echo: one, echo: two, echo: three"
    When the runnable agent is abatched with "four, five"
    Then the runnable batch answers are "echo: four, echo: five"

  Scenario: stream and astream yield the answer
    When the runnable agent is streamed with "flowing"
    Then the runnable streamed text is "echo: flowing"
    When the runnable agent is astreamed with "async flowing"
    Then the runnable streamed text is "echo: async flowing"

  Scenario: The agent composes in an LCEL chain
    When the runnable chain "prompt | agent | StrOutputParser" runs with topic "tides"
    Then the runnable chain returns the string "echo: Tell me about tides."
    And the runnable model's first message is the system prompt merged with the template's

  Scenario: Custom events reach astream_events
    Given a runnable agent with a lookup tool that is called once
    When the runnable agent's events are collected for "look it up"
    Then the runnable events include the custom event "leanloop.step" with step 1

  Scenario Outline: Input the agent cannot take is a one-line TypeError
    When the runnable agent is invoked with the bad input <input>
    Then the runnable agent refuses it with a TypeError mentioning "<message>"

    Examples:
      | input             | message                          |
      | number            | cannot take input of type int    |
      | dict-without-input | needs an 'input' key            |
      | no-human          | the agent needs a question       |
