Feature: The public API is one import away and cheap to import
  Everything a user needs comes from `leanloop` itself, every error leanloop raises on
  purpose is a LeanloopError, and importing the package does not load LangChain until
  an agent is built.

  Scenario: The public names import from leanloop and __all__ lists exactly them
    Then leanloop's __all__ is exactly:
      | name           |
      | AgentSpec      |
      | EventRecorder  |
      | LLMAgent       |
      | LeanloopError  |
      | LocalModelError |
      | ModelError     |
      | ModelSpec      |
      | RunFailed      |
      | RunReport      |
      | SpecError      |
      | SpecIssue      |
      | ToolError      |
      | __version__    |
      | agent_schema   |
      | load_agents    |
      | load_specs     |
    And every name in leanloop's __all__ can be imported from leanloop

  Scenario: A run failure is a LeanloopError that carries the partial report
    Given a RunFailed for "the request to the model failed at step 2" with a report of 1 steps
    Then the RunFailed is a LeanloopError and a ModelError
    And the RunFailed's report says 1 steps

  Scenario: Importing leanloop does not import LangChain
    When leanloop is imported in a fresh interpreter
    Then the fresh interpreter had not imported "langchain_core"
    And the fresh interpreter had not imported "leanloop.agent"

  Scenario Outline: The CLI's cheap commands do not import LangChain
    When the CLI runs "<command>" in a fresh interpreter
    Then the fresh interpreter had not imported "langchain_core"
    And the fresh interpreter had not imported "httpx"

    Examples:
      | command                           |
      | --help                            |
      | --version                         |
      | validate src/leanloop/examples/agents.yaml |
      | schema                            |
      | local --help                      |

  Scenario: An unknown name is an AttributeError, not a lazy import
    Then getting "NoSuchThing" from leanloop raises AttributeError
