Feature: Chat models are built from model specs
  Each provider maps to its LangChain class with the options that make it work well:
  usage reporting for OpenAI-compatible servers, a real num_ctx for Ollama.

  Scenario: openai-compatible builds ChatOpenAI with the base URL and usage reporting
    When a model config is built with provider "openai-compatible", model "local-test", base_url "http://127.0.0.1:9/v1"
    Then the built model is a "ChatOpenAI"
    And the built model has "model_name" equal to "local-test"
    And the built model has "openai_api_base" equal to "http://127.0.0.1:9/v1"
    And the built model has "stream_usage" equal to "True"

  Scenario: openai builds ChatOpenAI with the key and limits
    When a model config is built with provider "openai", model "gpt-4o-mini", api_key "sk-test-secret", max_tokens 256, timeout 30
    Then the built model is a "ChatOpenAI"
    And the built model has "max_tokens" equal to "256"
    And the built model has "request_timeout" equal to "30.0"

  Scenario: ollama gets num_ctx from the configured context window
    When a model config is built with provider "ollama", model "qwen2.5:0.5b", context_window 8192
    Then the built model is a "ChatOllama"
    And the built model has "num_ctx" equal to "8192"

  Scenario: A class model is imported and built with its kwargs
    When a model config is built with class "leanloop.testing:ScriptedChatModel" and kwargs {"replies": ["hi"], "report_usage": true}
    Then the built model is a "ScriptedChatModel"
    And the built model has "report_usage" equal to "True"

  Scenario: A class that is not a chat model is a located model config error
    When a model config is built with class "collections:OrderedDict" declared at "agents.yaml" line 4 column 12
    Then the model config error is "agents.yaml:4:12: models.custom: collections:OrderedDict is not a LangChain chat model class"

  Scenario: A constructor failure never shows the API key
    When a model config is built with class "langchain_openai:ChatOpenAI" and kwargs {"max_retries": "sk-test-secret"} and api_key "sk-test-secret"
    Then the model config error mentions "cannot build the model"
    And the model config error does not mention "sk-test-secret"

  Scenario Outline: every option of a class model reaches the model it builds: <class> <option>
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model:
            class: "<class>"
            model: m-1
            base_url: http://127.0.0.1:8791/v1
            api_key: sk-from-yaml
            timeout: 5
            temperature: 0.25
            max_retries: 4
      """
    When the agents file "agents.yaml" is loaded
    And the model of agent "a" is built
    Then the built model has "<field>" equal to "<value>"

    Examples:
      | class                             | option      | field                   | value                    |
      | langchain_openai:ChatOpenAI       | model       | model_name              | m-1                      |
      | langchain_openai:ChatOpenAI       | base_url    | openai_api_base         | http://127.0.0.1:8791/v1 |
      | langchain_openai:ChatOpenAI       | api_key     | openai_api_key          | sk-from-yaml             |
      | langchain_openai:ChatOpenAI       | timeout     | request_timeout         | 5.0                      |
      | langchain_openai:ChatOpenAI       | temperature | temperature             | 0.25                     |
      | langchain_anthropic:ChatAnthropic | model       | model                   | m-1                      |
      | langchain_anthropic:ChatAnthropic | base_url    | anthropic_api_url       | http://127.0.0.1:8791/v1 |
      | langchain_anthropic:ChatAnthropic | api_key     | anthropic_api_key       | sk-from-yaml             |
      | langchain_anthropic:ChatAnthropic | timeout     | default_request_timeout | 5.0                      |
      | langchain_anthropic:ChatAnthropic | temperature | temperature             | 0.25                     |
      | langchain_openai:ChatOpenAI       | max_retries | max_retries             | 4                        |
      | langchain_anthropic:ChatAnthropic | max_retries | max_retries             | 4                        |

  Scenario Outline: the built-in providers take kwargs, and a base_url in kwargs is the server leanloop asks: <provider>
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model:
            provider: <provider>
            model: m-1
            <option>
            kwargs: {<url_key>: "http://127.0.0.1:8792/v1", <extra>: <extra_value>}
      """
    When the agents file "agents.yaml" is loaded
    And the model of agent "a" is built
    Then the spec of agent "a" has:
      | field          | value                      |
      | model.base_url | 'http://127.0.0.1:8792/v1' |
    And the built model has "<url_field>" equal to "http://127.0.0.1:8792/v1"
    And the built model has "<extra>" equal to "<extra_value>"

    Examples:
      | provider  | option           | url_key         | url_field         | extra       | extra_value |
      | openai    | api_key: k       | openai_api_base | openai_api_base   | max_retries | 7           |
      | anthropic | api_key: k       | base_url        | anthropic_api_url | max_retries | 3           |
      | ollama    | temperature: 0.5 | base_url        | base_url          | keep_alive  | 5m          |

  Scenario: an option the provider's class has no field for is an error, not dropped
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {provider: ollama, model: m-1, api_key: k}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:4:43: agents.a.model.api_key: ChatOllama has no option 'api_key' (Ollama takes no key; send headers under kwargs.client_kwargs)"

  Scenario: a model built by hand with an option its class has no field for is an error, not dropped
    When a model config is built with provider "ollama", model "m-1", api_key "k", max_tokens 10, timeout 5
    Then the model config error mentions "ChatOllama has no option 'api_key'"

  Scenario: a request never waits forever: a model without a timeout gets the default
    When a model config is built with provider "openai-compatible", model "local-test", base_url "http://127.0.0.1:9/v1"
    Then the built model has "request_timeout" equal to "120.0"

  Scenario: the anthropic provider without its package says what to install
    Given the Python package "langchain_anthropic" cannot be imported
    When a model config is built with provider "anthropic", model "claude-test", api_key "k", max_tokens 100, timeout 10
    Then the model config error mentions "the 'anthropic' provider needs leanloop[anthropic]: pip install 'leanloop[anthropic]'"
