Feature: On a llama.cpp server, a request is counted as the server will count it
  An estimate in characters is off by the content (logs and numbers tokenise two or three
  times denser than prose). A llama.cpp server of our own renders a request with its chat
  template (POST /apply-template) and counts it (POST /tokenize): the budget asks before
  each request, learns from the count and decides by it. The server here counts one
  token a character, three times the estimate's starting guess.

  Scenario: Each request's figure is the server's own count
    Given a dense llama.cpp server with a window of 8192 tokens
    And an agent on the dense server
    When the dense agent is asked "Say hello."
    Then every request's figure in the report equals the server's count
    And the dense server was asked to render and count each request

  Scenario: A request the estimate would send is trimmed first when the server's count is over
    Given a dense llama.cpp server with a window of 2048 tokens
    And a dense workspace file "data.log" of 1900 characters of digits
    And an agent on the dense server
    When the dense agent is asked "What is in data.log?"
    Then the dense server refused no request
    And the run made no overflow recovery
    And the prefetched read of data.log was trimmed in the request

  Scenario: Without the server's count, the same request is refused and recovered
    Given a dense llama.cpp server with a window of 2048 tokens that cannot render requests
    And a dense workspace file "data.log" of 1900 characters of digits
    And an agent on the dense server
    When the dense agent is asked "What is in data.log?"
    Then the dense server refused 1 request
    And the run made 1 overflow recovery
    And the dense server was asked to render at most 2 times
