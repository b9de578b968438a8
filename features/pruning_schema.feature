Feature: Pruning meta-arguments in tool schemas
  The tools named in pruning_tools show the model two extra optional arguments,
  output_prune and output_prune_context. They are added to copies of the schemas and
  taken out of every tool call's arguments before any tool runs.

  Background:
    Given the pruning test tools read_file and search as OpenAI schemas

  Scenario: A prunable tool gains both optional meta-arguments
    When the pruning schemas are augmented for the prunable tools "read_file"
    Then the pruning schema of "read_file" offers the meta-argument "output_prune" of type "boolean"
    And the pruning schema of "read_file" offers the meta-argument "output_prune_context" of type "string"
    And the pruning meta-argument "output_prune" defaults to true and says "set false to receive the full output"
    And the pruning meta-argument "output_prune_context" says "focuses the extraction"
    And no pruning meta-argument is required by "read_file"

  Scenario: A tool that is not prunable comes back unchanged
    When the pruning schemas are augmented for the prunable tools "read_file"
    Then the pruning schema of "search" equals its input
    And the pruning input schemas were not mutated

  Scenario: A tool's own property of a meta-argument name is left alone by the pruning augmentation
    Given the pruning test tool "search" already declares "output_prune_context" as an integer
    When the pruning schemas are augmented for the prunable tools "read_file,search"
    Then the pruning schema of "search" offers the meta-argument "output_prune_context" of type "integer"
    And the pruning schema of "search" offers the meta-argument "output_prune" of type "boolean"

  Scenario: A flat prunable tool schema without parameters gains the meta-arguments
    Given a flat pruning test tool schema "ping" without parameters
    When the pruning schemas are augmented for the prunable tools "ping"
    Then the pruning schema of "ping" offers the meta-argument "output_prune" of type "boolean"
    And the pruning schema of "ping" offers the meta-argument "output_prune_context" of type "string"

  Scenario: Augmented pruning schemas bind to a chat model as they are
    When the pruning schemas are augmented for the prunable tools "read_file"
    And a scripted model bound to the augmented pruning schemas is called
    Then the model request carried the pruning meta-argument "output_prune" for "read_file" only

  Scenario Outline: Meta-arguments are stripped from any tool's arguments before it runs
    When the pruning meta-arguments are split from <arguments>
    Then the tool arguments left after the pruning meta-argument split are <left>
    And the prune request asks for prune=<prune> with focus <focus>

    Examples:
      | arguments                                                                     | left                | prune | focus            |
      | {"path": "a.log"}                                                             | {"path": "a.log"}   | true  | none             |
      | {"path": "a.log", "output_prune": false}                                      | {"path": "a.log"}   | false | none             |
      | {"path": "a.log", "output_prune": "false"}                                    | {"path": "a.log"}   | false | none             |
      | {"path": "a.log", "output_prune": "No"}                                       | {"path": "a.log"}   | false | none             |
      | {"path": "a.log", "output_prune": "0"}                                        | {"path": "a.log"}   | false | none             |
      | {"path": "a.log", "output_prune": 0}                                          | {"path": "a.log"}   | false | none             |
      | {"path": "a.log", "output_prune": "true"}                                     | {"path": "a.log"}   | true  | none             |
      | {"path": "a.log", "output_prune": null}                                       | {"path": "a.log"}   | true  | none             |
      | {"path": "a.log", "output_prune_context": "  the deadlock lines "}            | {"path": "a.log"}   | true  | the deadlock lines |
      | {"path": "a.log", "output_prune_context": "   "}                              | {"path": "a.log"}   | true  | none             |
      | {"pattern": "x", "output_prune": "false", "output_prune_context": 42}         | {"pattern": "x"}    | false | 42               |

  Scenario: Splitting pruning meta-arguments never changes the call's own arguments
    Given the pruning tool call arguments {"path": "a.log", "output_prune": false}
    When the pruning meta-argument split runs on the given arguments
    Then the original pruning tool call arguments still hold "output_prune"
