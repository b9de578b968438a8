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
    When a model config is built with class "leanloop.testing:ScriptedChatModel" and kwargs {"replies": "sk-test-secret"} and api_key "sk-test-secret"
    Then the model config error mentions "cannot build the model"
    And the model config error does not mention "sk-test-secret"
