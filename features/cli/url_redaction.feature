Feature: A model URL's password and query key are never shown
  A model's base_url may carry credentials: http://user:PASSWORD@host/v1?api_key=KEY.
  Every place leanloop shows or logs the URL (the run's error, the --json report and the
  page, window, validate, chat's banner and errors, the -v log) shows it as
  http://user:***@host/v1?api_key=***: the user and the host stay, to tell which server
  it was; the password and every query value are hidden (issue 38, N2).

  Background:
    Given a model server behind a URL with a password and a query key

  Scenario: a failed run's error line names the server without its secrets
    When the CLI runs "run agents.yaml 'Hello?'"
    Then the CLI exits with 1
    And the CLI output shows the model URL without its password and query key

  Scenario: the --json report of a failed run, its error and window note redacted
    When the CLI runs "run agents.yaml 'Hello?' --json"
    Then the CLI exits with 1
    And the CLI output shows the model URL without its password and query key

  Scenario: the HTML page of a failed run
    When the CLI runs "run agents.yaml 'Hello?' --html page.html -q"
    Then the CLI exits with 1
    And the page "page.html" has neither the password nor the query key of the model URL

  Scenario: the verbose log of a run
    When the CLI runs "run agents.yaml 'Hello?' -v"
    Then the CLI exits with 1
    And the CLI output shows the model URL without its password and query key

  Scenario: window names the server that did not say its window
    When the CLI runs "window agents.yaml"
    Then the CLI exits with 0
    And the CLI output shows the model URL without its password and query key

  Scenario: validate, and validate --check-models with a model that cannot be built
    When the CLI runs "validate agents.yaml"
    Then the CLI exits with 0
    And the CLI output has neither the password nor the query key of the model URL
    When the CLI runs "validate --check-models broken.yaml"
    Then the CLI exits with 2
    And the CLI output shows the model URL without its password and query key

  Scenario: a run whose model cannot be built says so without the secrets
    When the CLI runs "run broken.yaml 'Hello?' --json"
    Then the CLI exits with 2
    And the CLI output shows the model URL without its password and query key

  Scenario: chat's banner and a failed turn
    When leanloop chat "chat agents.yaml" reads the lines "Hello?|/exit" in this process
    Then the CLI output shows the model URL without its password and query key
