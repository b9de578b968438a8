Feature: An LLMAgent is a LangChain Runnable
  The agent composes like any Runnable: invoke, ainvoke, stream, astream, batch and abatch
  work, it takes the usual input shapes, and it fits in an LCEL chain.

  Background:
    Given an agent with system_prompt "You are a test agent.", repeat_last true and the script:
      | reply                  |
      | echo the last question |

  Scenario: invoke answers a string question with a report
    When the agent is asked "hello there" through invoke
    Then the answer is "echo: hello there"
    And the report says stop_reason "answer" after 1 steps
    And the report lists 1 model requests

  Scenario: ainvoke answers a dict input with prior messages
    When the agent is asked "and now?" after "earlier question" was answered "noted"
    Then the answer is "echo: and now?"
    And request 1 holds the turns system, human "earlier question", ai "noted", human "and now?"

  Scenario: batch and abatch answer each input
    When the agent is batched with "one, two, three"
    Then the batch answers are "echo: one, echo: two, echo: three"
    When the agent is abatched with "four, five"
    Then the batch answers are "echo: four, echo: five"

  Scenario: stream and astream yield the answer
    When the agent is asked "flowing" through stream
    Then the streamed text is exactly "echo: flowing"
    When the agent is asked "async flowing" through astream
    Then the streamed text is exactly "echo: async flowing"

  Scenario: The agent composes in an LCEL chain
    When the chain "prompt | agent | StrOutputParser" runs with topic "tides"
    Then the chain returns the string "echo: Tell me about tides."
    And request 1 has the system message "You are a test agent.\n\nBe brief."

  Scenario: Custom events reach astream_events
    Given an agent with tools "lookup" and the script:
      | reply                    |
      | call lookup {"key": "k"} |
      | found it                 |
    When the agent is asked "look it up" through astream_events
    Then the astream_events stream carried the custom event "leanloop.step" with step 1

  Scenario Outline: Input the agent cannot take is a one-line TypeError
    When the agent is given the bad input <input>
    Then the agent refuses it with a TypeError mentioning "<message>"

    Examples:
      | input              | message                       |
      | number             | cannot take input of type int |
      | dict-without-input | needs an 'input' key          |
      | no-human           | the agent needs a question    |
