Feature: Budget context plan
  A context window is shared out: a reserve for the reply, a ceiling for the request, a
  target trimming stops at, a warning line, and a cap for any one tool result.

  Scenario Outline: The plan of common windows at the default budget share
    Given a context plan for a window of <window> tokens
    Then the plan reserves <reserve> tokens for the reply
    And the plan ceiling is <ceiling> tokens
    And the plan trim target is <target> tokens
    And the plan warns at <warn> tokens
    And the plan caps one result at <cap> characters at 3.3 characters a token

    Examples: windows at 85%
      | window | reserve | ceiling | target | warn  | cap   |
      | 2048   | 409     | 1331    | 865    | 998   | 2000  |
      | 8192   | 1638    | 5325    | 3461   | 3993  | 5406  |
      | 32768  | 2048    | 25804   | 16772  | 19353 | 21626 |
      | 128000 | 2048    | 106752  | 69388  | 80064 | 30000 |

  Scenario: The reply limit is the plan's reply reserve when set
    Given a context plan for a window of 8192 tokens with a reply limit of 512 tokens
    Then the plan reserves 512 tokens for the reply
    And the plan ceiling is 6451 tokens

  Scenario: A smaller budget share lowers the plan ceiling
    Given a context plan for a window of 32768 tokens at a budget share of 0.5
    Then the plan ceiling is 14336 tokens
    And the plan trim target is 9318 tokens

  Scenario: The whole window may be budgeted in the plan
    Given a context plan for a window of 1000 tokens at a budget share of 1.0
    Then the plan reserves 200 tokens for the reply
    And the plan ceiling is 800 tokens

  Scenario: The plan ceiling never drops under 512 tokens
    Given a context plan for a window of 600 tokens
    Then the plan ceiling is 512 tokens
    And the plan trim target is 332 tokens

  Scenario: The plan ceiling never exceeds a tiny window
    Given a context plan for a window of 300 tokens
    Then the plan ceiling is 300 tokens

  Scenario: A reply limit as big as the window leaves the plan its floor
    Given a context plan for a window of 4096 tokens with a reply limit of 4096 tokens
    Then the plan ceiling is 512 tokens

  Scenario Outline: The plan's result cap follows the learned ratio, within 2,000–30,000
    Given a context plan for a window of <window> tokens
    Then the plan caps one result at <cap> characters at <ratio> characters a token

    Examples: ratios
      | window | ratio | cap   |
      | 32768  | 2.0   | 13107 |
      | 32768  | 6.0   | 30000 |
      | 4096   | 2.0   | 2000  |
      | 16384  | 4.5   | 14745 |

  Scenario Outline: A plan with bad figures is a clear error
    Then a context plan for a window of <window> tokens at a budget share of <share> fails with "<text>"

    Examples: bad figures
      | window | share | text                                                   |
      | 0      | 0.85  | the context window must be a positive number of tokens |
      | -5     | 0.85  | the context window must be a positive number of tokens |
      | 8192   | 0.0   | token_budget_percent must be in (0, 1], got 0.0        |
      | 8192   | 1.5   | token_budget_percent must be in (0, 1], got 1.5        |
      | 8192   | -0.2  | token_budget_percent must be in (0, 1]                 |

  Scenario: A plan with a zero reply limit is a clear error
    Then a context plan for a window of 8192 tokens with a reply limit of 0 tokens fails with "max_tokens must be a positive number of tokens"

  Scenario: A plan built by hand is validated too
    Then a hand-built context plan with a ceiling under its trim target fails with "inconsistent plan"
    And a hand-built context plan for a window of 0 tokens fails with "the context window must be a positive number"
    And a hand-built context plan at a budget share of 2.0 fails with "token_budget_percent must be in (0, 1]"
