Feature: Environment variables in agents files
  ${VAR} and ${VAR:-default} are replaced in every string value before validation.
  A variable that is not set and has no default is a located error naming it;
  $${ writes a literal ${. Values that came from the environment, and API keys,
  never appear in error messages: they show as ***.

  Scenario: a variable that is set is used
    Given the spec environment variable "LOCAL_API_KEY" is "s3cret-key"
    And the spec environment variable "MODEL_HOST" is "127.0.0.1:8080"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model:
            provider: openai-compatible
            model: local-test
            base_url: http://${MODEL_HOST}/v1
            api_key: ${LOCAL_API_KEY}
      """
    When the agents file "agents.yaml" is loaded
    Then the spec of agent "reader" has:
      | field          | value                      |
      | model.api_key  | 's3cret-key'               |
      | model.base_url | 'http://127.0.0.1:8080/v1' |

  Scenario: a default is used when the variable is unset or empty, and the variable wins when set
    Given the spec environment variable "EMPTY" is empty
    And the spec environment variable "GREETING" is "hello"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai, api_key: "${UNSET_KEY:-none}"}
          description: ${EMPTY:-empty means default}
          system_prompt: ${GREETING:-hi} and ${EMPTY}!
      """
    When the agents file "agents.yaml" is loaded
    Then the spec of agent "reader" has:
      | field         | value                  |
      | model.api_key | 'none'                 |
      | description   | 'empty means default'  |
      | system_prompt | 'hello and !'          |

  Scenario: a default may itself be a reference, as in the shell
    Given the spec environment variable "FALLBACK_PROMPT" is "from the fallback"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai, api_key: k}
          system_prompt: ${PROMPT:-${FALLBACK_PROMPT}}
          description: ${DESCRIPTION:-${NO_SUCH_ONE:-last resort}} (${MODE:-plain})
      """
    When the agents file "agents.yaml" is loaded
    Then the spec of agent "reader" has:
      | field         | value                       |
      | system_prompt | 'from the fallback'         |
      | description   | 'last resort (plain)'       |

  Scenario: $${ writes a literal ${ and $VAR without braces is left alone
    Given the spec environment variable "NAME" is "world"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          system_prompt: Write $${NAME} literally; ${NAME} is replaced; $NAME is not.
      """
    When the agents file "agents.yaml" is loaded
    Then the spec of agent "reader" has:
      | field         | value                                                        |
      | system_prompt | 'Write ${NAME} literally; world is replaced; $NAME is not.' |

  Scenario: a missing variable without a default is a located error naming it
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model:
            provider: openai
            api_key: ${OPENAI_KEY}
          system_prompt: Hello ${USER_NAME}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:6:16: agents.reader.model.api_key: environment variable 'OPENAI_KEY' is not set (write ${OPENAI_KEY:-default} to give a default)
      agents.yaml:7:20: agents.reader.system_prompt: environment variable 'USER_NAME' is not set (write ${USER_NAME:-default} to give a default)
      """

  Scenario: malformed references are located errors
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          description: costs ${1DOLLAR}
          system_prompt: "unclosed ${NAME"
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:5:18: agents.reader.description: '${1DOLLAR}' is not a valid reference; write ${NAME} or ${NAME:-default}, or $${ for a literal '${'
      agents.yaml:6:20: agents.reader.system_prompt: '${' is not closed; write ${NAME} or ${NAME:-default}, or $${ for a literal '${'
      """

  Scenario: a whole ${...} value takes the type the schema asks for
    Given the spec environment variable "ROUNDS" is "12"
    And the spec environment variable "VERIFY" is "no"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai, api_key: k, timeout: "${MODEL_SECONDS:-7.5}"}
          max_rounds: ${ROUNDS}
          pruning_timeout: ${PRUNE_SECONDS:-30}
          pruning_verify: ${VERIFY}
          trim_keep_steps: ${KEEP:-5}
      """
    When the agents file "agents.yaml" is loaded
    Then the spec of agent "reader" has:
      | field           | value |
      | max_rounds      | 12    |
      | pruning_timeout | 30.0  |
      | pruning_verify  | False |
      | trim_keep_steps | 5     |
      | model.timeout   | 7.5   |

  Scenario: a ${...} value that is not of the schema's type is shown, unless it looks secret
    Given the spec environment variable "ROUNDS" is "many"
    And the spec environment variable "MODE" is "fast"
    And the spec environment variable "MY_TOKEN" is "12abc"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          max_rounds: ${ROUNDS}
          tool_mode: ${MODE}
          max_parallel_tools: ${MY_TOKEN}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:5:17: agents.reader.max_rounds: expected an integer, got 'many' (the value of a ${...} reference)
      agents.yaml:6:16: agents.reader.tool_mode: 'fast' is not one of 'auto', 'native', 'text'
      agents.yaml:7:25: agents.reader.max_parallel_tools: expected an integer, got *** (the value of a ${...} reference)
      """
    And the error of the agents file does not contain "12abc"

  Scenario: secrets in wrong places never reach an error message; a path from a variable does
    Given the spec environment variable "DATA_DIR" is "/srv/secret-project-name"
    And the spec environment variable "TOKEN" is "tok-123456"
    And an agents file "agents.yaml" with:
      """
      version: 1
      models:
        main: {provider: openai, api_key: 123456789}
      agents:
        reader:
          model: ${TOKEN}
          tools: [read_file]
          workspace: ${DATA_DIR}
        writer:
          model: {provider: openai, api_key: [hunter2]}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:3:37: models.main.api_key: expected a string, got ***
      agents.yaml:6:12: agents.reader.model: unknown model *** (the declared models are 'main')
      agents.yaml:8:16: agents.reader.workspace: '/srv/secret-project-name' does not exist
      agents.yaml:10:40: agents.writer.model.api_key: expected a string, got ***
      """
    And the error of the agents file does not contain "123456789"
    And the error of the agents file does not contain "tok-123456"
    And the error of the agents file does not contain "hunter2"

  Scenario: a valid file with secrets logs nothing secret
    Given the spec logs are captured
    And the spec environment variable "KEY" is "sk-very-secret"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai, api_key: "${KEY}"}
      """
    When the agents file "agents.yaml" is loaded
    Then the agents file gives the agents "reader"
    And the spec logs do not contain "sk-very-secret"

  Scenario: an interpolated model name and workspace are resolved like written ones
    Given a spec workspace folder "data"
    And the spec environment variable "MODEL" is "local"
    And the spec environment variable "WS" is "data"
    And an agents file "agents.yaml" with:
      """
      version: 1
      models:
        local: {provider: ollama, model: "${OLLAMA_MODEL:-qwen3:4b}"}
      agents:
        reader:
          model: ${MODEL}
          tools: [list_files]
          workspace: ${WS}
      """
    When the agents file "agents.yaml" is loaded
    Then the spec of agent "reader" has its workspace at "data"
    And the spec of agent "reader" has:
      | field       | value      |
      | model.name  | 'local'    |
      | model.model | 'qwen3:4b' |

  Scenario: keys are never interpolated
    Given the spec environment variable "KEY_NAME" is "description"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          ${KEY_NAME}: Reads.
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:5:5: agents.reader.${KEY_NAME}: unknown key '${KEY_NAME}'"

  Scenario: the process environment is used when no mapping is given
    Given the process environment variable "LEANLOOP_SPEC_TEST_PROMPT" is "from the process" for this spec
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          system_prompt: ${LEANLOOP_SPEC_TEST_PROMPT}
      """
    When the agents file "agents.yaml" is loaded with the process environment
    Then the spec of agent "reader" has:
      | field         | value              |
      | system_prompt | 'from the process' |

  Scenario: Python data is interpolated too
    Given the spec environment variable "PROMPT" is "Be brief."
    When the agents file data is loaded from a Python dict:
      """
      {"version": 1, "agents": {"reader": {"model": {"provider": "openai"}, "system_prompt": "${PROMPT}"}}}
      """
    Then the spec of agent "reader" has:
      | field         | value       |
      | system_prompt | 'Be brief.' |
