Feature: Budget window discovery
  leanloop asks the server that loaded the model how big its context window is, before
  trusting a model profile or a default, and records where the figure came from.

  Background:
    Given a window resolver with a fake clock

  Scenario: A configured window wins and no server is asked
    Given a window test server answering GET "/props" with
      """
      {"default_generation_settings": {"n_ctx": 4096}}
      """
    When the window is resolved with configured 2048 for provider "openai-compatible"
    Then the window is 2048 tokens from "config"
    And the window test server received no requests

  Scenario: A zero configured window is a clear error
    When the window is resolved with configured 0 for provider "openai-compatible"
    Then the window resolution fails with "context_window must be a positive number of tokens"

  Scenario Outline: Each kind of local server tells its window
    Given a window test server answering <method> "<path>" with
      """
      <answer>
      """
    When the window is resolved for provider "<provider>" at the test server with model "<model>"
    Then the window is <tokens> tokens from "<source>"

    Examples: servers
      | provider          | model   | method | path           | answer                                                                                                  | tokens | source               |
      | openai-compatible | qwen    | GET    | /props         | {"default_generation_settings": {"n_ctx": 4096}}                                                        | 4096   | server:llama.cpp     |
      | openai-compatible | qwen    | GET    | /props         | {"n_ctx": 3072}                                                                                         | 3072   | server:llama.cpp     |
      | openai-compatible | qwen    | GET    | /v1/models     | {"data": [{"id": "/models/qwen.gguf", "meta": {"n_ctx": 2048, "n_ctx_train": 32768}}]}                  | 2048   | server:openai-models |
      | openai-compatible | mistral | GET    | /v1/models     | {"data": [{"id": "llama", "max_model_len": 8192}, {"id": "mistral", "max_model_len": 16384}]}           | 16384  | server:openai-models |
      | openai-compatible | phi     | GET    | /api/v0/models | {"data": [{"id": "phi", "state": "loaded", "max_context_length": 131072, "loaded_context_length": 6144}]} | 6144   | server:lm-studio     |
      | ollama            | llama3  | GET    | /api/ps        | {"models": [{"name": "llama3:latest", "model": "llama3:latest", "context_length": 8192}]}               | 8192   | server:ollama-ps     |
      | ollama            | llama3  | POST   | /api/show      | {"parameters": "stop <eot>\nnum_ctx 12288\ntemperature 0.2"}                                            | 12288  | server:ollama-show   |
      | ollama            | llama3  | POST   | /api/show      | {"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}}                        | 8192   | default:ollama       |
      | openai-compatible | llama3  | GET    | /api/ps        | {"models": [{"name": "llama3:latest", "context_length": 4096}]}                                         | 4096   | server:ollama-ps     |

  Scenario: Ollama's model show request names the model
    Given a window test server answering POST "/api/show" with
      """
      {"parameters": "num_ctx 4096"}
      """
    When the window is resolved for provider "ollama" at the test server with model "llama3"
    Then the window is 4096 tokens from "server:ollama-show"
    And the window test server saw POST "/api/show" with a JSON body naming "llama3"

  Scenario: The running Ollama model wins over its Modelfile
    Given a window test server answering GET "/api/ps" with
      """
      {"models": [{"name": "other:7b", "context_length": 2048}, {"name": "llama3:latest", "context_length": 8192}]}
      """
    And a window test server answering POST "/api/show" with
      """
      {"parameters": "num_ctx 4096"}
      """
    When the window is resolved for provider "ollama" at the test server with model "llama3"
    Then the window is 8192 tokens from "server:ollama-ps"

  Scenario: An Ollama that only takes POST on its process list is still read
    Given a window test server answering GET "/api/ps" with 405 and "{}"
    And a window test server answering POST "/api/ps" with
      """
      {"models": [{"name": "llama3:latest", "context_length": 6000}]}
      """
    When the window is resolved for provider "ollama" at the test server with model "llama3"
    Then the window is 6000 tokens from "server:ollama-ps"

  Scenario: llama.cpp's /props wins over its model listing
    Given a window test server answering GET "/props" with
      """
      {"default_generation_settings": {"n_ctx": 2048}}
      """
    And a window test server answering GET "/v1/models" with
      """
      {"data": [{"id": "qwen", "meta": {"n_ctx": 4096}}]}
      """
    When the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    Then the window is 2048 tokens from "server:llama.cpp"

  Scenario: A model listing that does not name the model is not guessed from
    Given a window test server answering GET "/v1/models" with
      """
      {"data": [{"id": "llama", "max_model_len": 8192}, {"id": "mistral", "max_model_len": 16384}]}
      """
    When the window is resolved for provider "openai-compatible" at the test server with model "phi"
    Then the window is 32768 tokens from "default:local"

  Scenario Outline: A server answering garbage is unknown, never an error
    Given a window test server answering GET "/props" with <status> and "<raw>"
    And the window model profile says 20000 max input tokens
    When the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    Then the window is 20000 tokens from "profile"

    Examples: garbage
      | status | raw                                                |
      | 200    | this is not json                                   |
      | 200    | [1, 2, 3]                                          |
      | 200    | {"default_generation_settings": {"n_ctx": "lots"}} |
      | 200    | {"n_ctx": -1}                                    |
      | 200    | {"n_ctx": true}                                  |
      | 500    | {"n_ctx": 4096}                                  |

  Scenario: A server that will not say falls back to the local default
    Given a window test server that answers nothing it knows
    When the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    Then the window is 32768 tokens from "default:local"

  Scenario Outline: A base URL nothing answers at falls back without an error
    When the window is resolved for provider "openai-compatible" at "<base_url>"
    Then the window is <tokens> tokens from "<source>"

    Examples: unreachable
      | base_url                  | tokens | source        |
      | http://127.0.0.1:1/v1     | 32768  | default:local |
      | http://127.0.0.1:99999/v1 | 32768  | default:local |
      | ftp://127.0.0.1/v1        | 32768  | default:local |
      | http://[::1/v1            | 128000 | default:hosted |

  Scenario Outline: A default window says it is one, and a public host is labelled hosted
    Given a window resolver whose HTTP client cannot connect anywhere
    When the window is resolved for provider "openai-compatible" at "<base_url>"
    Then the window is <tokens> tokens from "<source>"
    And the window's note says "<note>"

    Examples: where the server is
      | base_url                         | tokens | source         | note                                  |
      | http://127.0.0.1:8080/v1         | 32768  | default:local  | did not say its window                |
      | http://10.1.2.3:8000/v1          | 32768  | default:local  | set context_window                    |
      | http://llama:8080/v1             | 32768  | default:local  | the server at http://llama:8080/v1    |
      | http://gpu-box.local:8080/v1     | 32768  | default:local  | did not say its window                |
      | https://api.groq.com/openai/v1   | 128000 | default:hosted | (a hosted API) did not say its window |
      | https://openrouter.ai/api/v1     | 128000 | default:hosted | set context_window if it is smaller   |
      | http://8.8.8.8:8000/v1           | 128000 | default:hosted | (a hosted API)                        |

  Scenario: A hanging server is given up on after the probe timeout
    Given a window resolver with a fake clock and a probe timeout of 0.2 seconds
    And a window test server that hangs 2.0 seconds on every request
    And the window model profile says 24000 max input tokens
    When the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    Then the window is 24000 tokens from "profile"

  Scenario: The default probe timeout gives up on a server slower than 1.5 seconds
    Given a window test server that hangs 3.0 seconds on every request
    When the window is resolved for provider "openai-compatible" at the test server with model "llama3"
    Then the window is 32768 tokens from "default:local"

  Scenario: A server's answer is reused for 30 seconds
    Given a window test server answering GET "/props" with
      """
      {"n_ctx": 4096}
      """
    When the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    And the window clock advances 29.0 seconds
    And the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    Then the window is 4096 tokens from "server:llama.cpp"
    And the window resolution sent no new requests
    When the window clock advances 2.0 seconds
    And the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    Then the window resolution asked the server again
    And the window is 4096 tokens from "server:llama.cpp"

  Scenario: A server's silence is reused for 3 seconds only
    Given a window test server that answers nothing it knows
    When the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    And the window clock advances 2.5 seconds
    And the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    Then the window resolution sent no new requests
    When the window clock advances 1.0 seconds
    And the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    Then the window resolution asked the server again

  Scenario: An Ollama Modelfile answer is asked again soon, since the loaded model knows better
    Given a window test server answering POST "/api/show" with
      """
      {"parameters": "num_ctx 4096"}
      """
    When the window is resolved for provider "ollama" at the test server with model "llama3"
    And the window clock advances 3.5 seconds
    And the window is resolved for provider "ollama" at the test server with model "llama3"
    Then the window resolution asked the server again

  Scenario: The cache is kept per model
    Given a window test server answering GET "/props" with
      """
      {"n_ctx": 4096}
      """
    When the window is resolved for provider "openai-compatible" at the test server with model "qwen"
    And the window is resolved for provider "openai-compatible" at the test server with model "phi"
    Then the window resolution asked the server again

  Scenario: Probes carry the API key as a bearer token
    Given a window test server answering GET "/props" with
      """
      {"n_ctx": 4096}
      """
    When the window is resolved with API key "sk-local" for provider "openai-compatible" at the test server with model "qwen"
    Then the window is 4096 tokens from "server:llama.cpp"
    And every window probe carried the header "Authorization: Bearer sk-local"
    And the window test server saw only GET requests to "/props"

  Scenario Outline: Hosted OpenAI is never probed
    Given a window resolver whose HTTP client must never be built
    When the window is resolved for provider "openai" at "<base_url>"
    Then the window is 128000 tokens from "default:hosted"

    Examples: hosted
      | base_url                  |
      | https://api.openai.com/v1 |
      | https://api.openai.com    |

  Scenario: A hosted model's profile gives its window
    Given a window resolver whose HTTP client must never be built
    And the window model profile says 200000 max input tokens
    When the window is resolved for provider "openai" without a base URL
    Then the window is 200000 tokens from "profile"

  Scenario: A model built from a class path with no server falls back to the hosted default
    Given a window resolver whose HTTP client must never be built
    When the window is resolved for provider "None" without a base URL
    Then the window is 128000 tokens from "default:hosted"

  Scenario: A window under 8,192 tokens gets a one-line warning on how to raise it
    When the window is resolved with configured 2048 for provider "openai-compatible"
    Then the small window warning mentions "2,048" and "--ctx-size" and "num_ctx"

  Scenario: A window of 8,192 tokens gets no warning
    When the window is resolved with configured 8192 for provider "openai-compatible"
    Then there is no small window warning
    And the default window resolver is shared
