Feature: Ollama runs at the window leanloop budgets for
  Ollama loads a model at the num_ctx each request asks for (its own default of 2,048 or
  4,096 when none does) and cuts the front of a longer prompt without a word. So for
  `provider: ollama` the window is the file's context_window, else the loaded model's
  context_length from /api/ps, else the Modelfile's num_ctx, else a default of 8,192 that
  says it is one; never the trained length alone. Every request of a run asks for it.

  Background:
    Given a window resolver with a fake clock

  Scenario: The trained length alone is never the window
    Given a window test server answering POST "/api/show" with
      """
      {"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 131072}}
      """
    When the window is resolved for provider "ollama" at the test server with model "qwen3:4b"
    Then the window is 8192 tokens from "default:ollama"
    And the window's note says "num_ctx 8,192, leanloop's default (the model was trained for 131,072)"
    And the window's note says "set context_window"

  Scenario: A model trained for less than the default asks for its trained length
    Given a window test server answering POST "/api/show" with
      """
      {"model_info": {"general.architecture": "llama", "llama.context_length": 2048}}
      """
    When the window is resolved for provider "ollama" at the test server with model "tinyllama"
    Then the window is 2048 tokens from "default:ollama"
    And the window's note says "the length the model was trained for"

  Scenario: The Modelfile's num_ctx wins over the trained length
    Given a window test server answering POST "/api/show" with
      """
      {"parameters": "num_ctx 12288", "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 131072}}
      """
    When the window is resolved for provider "ollama" at the test server with model "qwen3:4b"
    Then the window is 12288 tokens from "server:ollama-show"

  Scenario: Another loaded model's context says nothing about this one
    Given a window test server answering GET "/api/ps" with
      """
      {"models": [{"name": "other:7b", "model": "other:7b", "context_length": 2048}]}
      """
    When the window is resolved for provider "ollama" at the test server with model "qwen3:4b"
    Then the window is 8192 tokens from "default:ollama"

  Scenario: An Ollama nothing answers at gets the default, which says so
    Given a window resolver whose HTTP client cannot connect anywhere
    When the window is resolved for provider "ollama" at "http://127.0.0.1:11434"
    Then the window is 8192 tokens from "default:ollama"
    And the window's note says "Ollama reports no loaded"

  Scenario: The default is asked again soon: the first request loads the model
    Given a window test server that answers nothing it knows
    When the window is resolved for provider "ollama" at the test server with model "qwen3:4b"
    Then the window is 8192 tokens from "default:ollama"
    Given a window test server answering GET "/api/ps" with
      """
      {"models": [{"name": "qwen3:4b", "model": "qwen3:4b", "context_length": 8192}]}
      """
    When the window clock advances 3.5 seconds
    And the window is resolved for provider "ollama" at the test server with model "qwen3:4b"
    Then the window resolution asked the server again
    And the window is 8192 tokens from "server:ollama-ps"

  Scenario: num_ctx in kwargs is the configured window, and no server is asked
    Given a window test server that answers nothing it knows
    When the window of an Ollama model with kwargs num_ctx 12288 is resolved at the test server
    Then the resolved model window is 12288 tokens from "config"
    And the window test server received no requests

  Scenario Outline: The run's Ollama model asks for the run's window: <configured>
    Given an Ollama chat model built with <configured>
    When the model is sized for a window of <window> tokens
    Then the sized model's request options carry num_ctx <window>
    And the built model still asks for num_ctx <built>
    And the sized model shares the built model's HTTP client

    Examples:
      | configured           | window | built |
      | no context_window    | 16384  | none  |
      | no context_window    | 8192   | none  |
      | context_window 6000  | 6000   | 6000  |

  Scenario: Other providers' models are sent as they are
    Given an openai-compatible chat model
    When the model is sized for a window of 16384 tokens
    Then the sized model is the built model

  Scenario: context_window and kwargs.num_ctx together are one setting given twice
    When an Ollama chat model is built with context_window 6000 and kwargs num_ctx 8192
    Then building the model fails with "kwargs.num_ctx sets what 'context_window' sets; give it once"

  Scenario: Every request of a run asks Ollama for the window in the run report
    Given a window test server answering POST "/api/chat" with
      """
      {"model": "qwen3:4b", "message": {"role": "assistant", "content": "Hello."}, "done": true, "done_reason": "stop", "prompt_eval_count": 20, "eval_count": 2}
      """
    When an agent on Ollama model "qwen3:4b" at the test server answers "Hi"
    Then the run report's window is 8192 tokens from "default:ollama"
    And every chat request the test server saw asked for num_ctx 8192
