Feature: Properties that hold for every input (hypothesis)
  The agents-file loader and the workspace path jail are checked against 700 generated
  inputs each: arbitrary text (lone surrogates, NUL and control characters included),
  soups of the tokens each reader cares about, and mutations of valid inputs. Generation
  is derandomized, so every run checks the same inputs and a failure replays; hypothesis
  shrinks a failing input to a small one before reporting it. The properties of the
  text-protocol parser and of the pruning markers are pytest tests now
  (tests/protocol/test_properties.py, tests/pruning/test_marker_properties.py).

  Scenario: The YAML loader refuses arbitrary text only with a SpecError
    When the property "the agents-file loader fails only with SpecError on any text" is checked against 700 generated inputs
    Then no generated input broke the property
    And at least 700 generated inputs were tried

  Scenario: The YAML loader refuses YAML-ish agents documents only with a SpecError
    When the property "the agents-file loader fails only with SpecError on YAML-ish documents" is checked against 700 generated inputs
    Then no generated input broke the property
    And at least 700 generated inputs were tried

  Scenario: The workspace jail never resolves a path outside the workspace
    Given a workspace with a folder, a link inside, links leading outside and a link loop
    When the property "the path jail resolves inside the workspace or refuses" is checked against 700 generated inputs
    Then no generated input broke the property
    And at least 700 generated inputs were tried
