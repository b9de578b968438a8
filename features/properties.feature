Feature: Properties that hold for every input (hypothesis)
  The parts that read what a model, a tool or a user wrote are checked against 700
  generated inputs each (4,200 in all): arbitrary text (lone surrogates, NUL
  and control characters included), soups of the tokens each reader cares about, and
  mutations of valid inputs. Generation is derandomized, so every run checks the same
  inputs and a failure replays; hypothesis shrinks a failing input to a small one
  before reporting it. The whole feature takes well under a minute on 2 cores.

  Scenario: The text-protocol parser reads any reply without raising or falling back
    When the property "the tool-call parser returns a well-formed result" is checked against 700 generated inputs
    Then no generated input broke the property
    And at least 700 generated inputs were tried

  Scenario: Escaped tool output round-trips and never holds a live pruning marker
    When the property "escaping round-trips and leaves no live marker" is checked against 700 generated inputs
    Then no generated input broke the property
    And at least 700 generated inputs were tried

  Scenario: Reading a pruning answer raises nothing but PruneFormatError
    When the property "the pruning answer reader fails only with PruneFormatError" is checked against 700 generated inputs
    Then no generated input broke the property
    And at least 700 generated inputs were tried

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
