Feature: The report says how much of each prompt the server's cache served
  llama-server keeps each slot's last prompt and reuses its longest common prefix with the
  next request, so a loop whose requests grow by appending pays only for the new tail. It
  reports the cached part as usage.prompt_tokens_details.cached_tokens (and timings.cache_n);
  ChatOpenAI keeps it as usage_metadata.input_token_details.cache_read. The report records,
  per request, the prompt tokens the server evaluated and those its cache served (unknown
  when the reply does not say), adds them up over the run, and says what share of the
  prompt tokens after the first request came from the cache.

  Scenario: Cached prompt tokens show per request, in total and in the text report
    Given a cache workspace file "notes.txt" saying "The colour is blue."
    And a scripted model that reports cached prompt tokens:
      | reply                                | input tokens | cached | output tokens |
      | call read_file {"path": "notes.txt"} | 900          | 0      | 20            |
      | call read_file {"path": "notes.txt"} | 1000         | 880    | 20            |
      | The colour is blue.                  | 1100         | 1000   | 10            |
    When the cache agent is asked "What colour do the notes name?"
    Then the report's requests say these prompt tokens:
      | evaluated | cached |
      | 900       | 0      |
      | 120       | 880    |
      | 100       | 1000   |
    And the report's totals are 1120 prompt tokens evaluated and 1880 cached
    And 90% of the prompt tokens after the first request came from the cache
    And the cache summary line has "3,000 prompt tokens · 1,880 from cache"
    And the cache text report has the line "prompt cache: 1,880 of 3,000 prompt tokens served from the server's cache (63%) · after the first request: 90%"
    And the cache text report's table has a "from cache" column

  Scenario: A model that says nothing about a cache leaves the figures unknown
    Given a cache workspace file "notes.txt" saying "The colour is blue."
    And a scripted model that reports cached prompt tokens:
      | reply                                | input tokens | cached | output tokens |
      | call read_file {"path": "notes.txt"} | 900          | -      | 20            |
      | The colour is blue.                  | 1000         | -      | 10            |
    When the cache agent is asked "What colour do the notes name?"
    Then the report's requests say these prompt tokens:
      | evaluated | cached |
      | -         | -      |
      | -         | -      |
    And the report has no prompt cache totals
    And the cache summary line has "1,900 prompt tokens · "
    And the cache summary line has no "from cache"
    And the cache text report's table has no "from cache" column

  Scenario: The pruning pass's requests are added up apart from the main model's
    Given a pruning tally of these answered requests:
      | input tokens | cached | output tokens | seconds |
      | 1200         | 0      | 80            | 2.5     |
      | 1300         | 1100   | 60            | 1.0     |
      | 400          | -      | 5             | 0.25    |
    When the tally is noted on a run report
    Then the report dict's extraction is:
      | requests | prompt_tokens | prompt_evaluated | prompt_cached | completion_tokens | seconds |
      | 3        | 2900          | 1400             | 1100          | 145               | 3.75    |
    And the report's requests are still only the main model's
    And the cache text report has the line "pruning pass: 3 requests · 2,900 prompt tokens (1,100 from cache) · 145 completion tokens · 3.8 s"
