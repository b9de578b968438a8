Feature: A model's kwargs are checked against its chat model class
  A `kwargs` key the class takes no keyword for is one located line with a did-you-mean
  (issue 29, item 6), at `validate --check-models` and at a run, never a pydantic warning
  or a key sent in every request. A field's alias and the class's own field for
  undeclared extras (`model_kwargs`, `extra_body`) pass.

  Scenario: an unknown kwarg on ChatOllama is a located error at --check-models
    Given a CLI agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model:
            provider: ollama
            model: m-1
            kwargs: {top_kk: 5}
      """
    When the CLI runs "validate --check-models agents.yaml"
    Then the CLI exits with 2
    And the CLI stderr has 1 located errors in "agents.yaml"
    And the CLI stderr has the line "error: agents.yaml:7:16: agents.reader.model.kwargs.top_kk: ChatOllama has no option 'top_kk' (did you mean 'top_k'?); remove it, or use one of the class's own fields (agent reader)"
    And the CLI stdout is "failed: reader (1 problem)"

  Scenario: only the unknown kwarg on ChatOpenAI is refused, naming the escape hatch, with no warning
    Given a CLI agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model:
            provider: openai
            model: m-1
            api_key: sk-test
            kwargs:
              stop_sequences: [END]
              model_kwargs: {frobnicate: 1}
              extra_body: {top_k: 20}
              frobnicate: 1
      """
    When the CLI runs "validate --check-models agents.yaml"
    Then the CLI exits with 2
    And the CLI stderr has 1 located errors in "agents.yaml"
    And the CLI stderr has the line "error: agents.yaml:12:9: agents.reader.model.kwargs.frobnicate: ChatOpenAI has no option 'frobnicate'; a setting the class does not declare goes under kwargs.model_kwargs or kwargs.extra_body (agent reader)"
    And the CLI stderr shows no warning
    And the CLI stdout is "failed: reader (1 problem)"
