Feature: Text-mode tool protocol under fuzzing
  Whatever a model writes, the parser returns a ParseResult and never raises, and the
  hold-back never raises and only ever shows a prefix of the reply. The inputs are
  generated from fixed seeds, so a failure can be replayed.

  Background:
    Given the parser knows the tools read_file(path, max_lines), search(pattern, path) and list_files(path)
    And the parser's sample replies in every call form

  Scenario: The parser survives every truncation of valid replies
    When the parser reads every prefix of every sample reply, finished and unfinished
    Then the parser returned a well-formed result for all of them
    And the parser read at least 1500 replies
    And the parser found in unfinished prefixes only calls that the whole reply makes
    And the parser never fell back to reading a reply as prose after an error

  Scenario: The parser survives random text, brace soup and mutated replies
    When the parser reads 1500 random replies, 1500 brace-soup replies and 1500 mutated replies made with seed 20240601
    Then the parser returned a well-formed result for all of them
    And the parser read at least 4500 replies
    And the parser never fell back to reading a reply as prose after an error

  Scenario: The hold-back survives random replies cut into random deltas
    Given a hold-back for the tools read_file and list_directory_contents
    When 2000 random replies made with seed 7 stream through the hold-back in random deltas
    Then the hold-back never raised and always showed a prefix of the reply
    And the hold-back showed every reply without a call in full
