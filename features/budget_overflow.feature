Feature: Budget overflow errors
  A provider that refuses a request for its size says so in one of several shapes; leanloop
  recognises each, reads the real window and prompt size when given, and leaves every other
  error alone.

  Scenario Outline: Each provider's overflow shape is recognised with its figures
    Given an overflow error of kind "<kind>"
    When the overflow error is parsed
    Then it is an overflow with a prompt of <prompt> tokens and a window of <window> tokens
    And the overflow message is one line mentioning "<words>"

    Examples: shapes
      | kind                          | prompt | window | words                                |
      | openai code                   | 9000   | 8192   | maximum context length is 8192       |
      | openai message only           | 130500 | 128000 | maximum context length               |
      | vllm                          | 4500   | 4096   | in the messages                      |
      | llama.cpp body                | 2500   | 2048   | exceeds the available context size   |
      | llama.cpp response json       | 2600   | 2048   | exceeds the available context size   |
      | llama.cpp plain dict          | 3000   | 2048   | exceeds the available context size   |
      | llama.cpp dict without type   | 3100   | 4096   | too big                              |
      | ollama response error         | none   | none   | input length exceeds the context     |
      | ollama prompt too long        | none   | none   | prompt too long                      |
      | ollama maximum context        | none   | none   | exceeds maximum context              |
      | lm studio keep first          | 5413   | 4096   | context length of only 4096          |
      | lm studio context overflow    | none   | none   | Context overflow                     |
      | generic 400                   | none   | none   | context window                       |
      | generic 413                   | none   | none   | context length                       |
      | langchain openai overflow     | none   | none   | context_length_exceeded              |
      | leanloop overflow             | 700    | 512    | too large                            |
      | plain text 400 body           | none   | 2048   | exceeds the context window           |

  Scenario Outline: An overflow is found through the exception chain
    Given a wrapped overflow error: kind "llama.cpp body" raised inside a <wrapper> by "<link>"
    When the overflow error is parsed
    Then it is an overflow with a prompt of 2500 tokens and a window of 2048 tokens

    Examples: links
      | wrapper      | link      |
      | RuntimeError | cause     |
      | ValueError   | context   |

  Scenario Outline: Other errors are not overflows
    Given an overflow error of kind "<kind>"
    When the overflow error is parsed
    Then it is not an overflow

    Examples: other errors
      | kind                         |
      | bad tool schema 400          |
      | server error mentioning size |
      | authentication 401           |
      | plain value error            |
      | html 400 body                |

  Scenario Outline: A refusal raised through ChatOpenAI by a real HTTP exchange is an overflow
    Given an overflow test server that refuses every chat request like <server>
    And an overflow error from a ChatOpenAI request to the overflow test server
    When the overflow error is parsed
    Then it is an overflow with a prompt of <prompt> tokens and a window of <window> tokens

    Examples: servers
      | server    | prompt | window |
      | llama.cpp | 2500   | 2048   |
      | OpenAI    | 9100   | 8192   |

  Scenario: A cycle in the exception chain does not hang overflow parsing
    Given a cyclic overflow error chain around kind "plain value error"
    When the overflow error is parsed
    Then it is not an overflow

  Scenario: An overflow becomes leanloop's context overflow error
    Given an overflow error of kind "llama.cpp body"
    When the overflow error is parsed
    Then the overflow as an error is a ContextOverflowError with a prompt of 2500 and a window of 2048

  Scenario: A very long overflow message is cut to one short line
    Given an overflow error of kind "long multi-line"
    When the overflow error is parsed
    Then the overflow message is one line of at most 300 characters
