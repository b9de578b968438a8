Feature: Loading agents files into validated specs
  An agents file is YAML checked against the JSON Schema and then for what a schema
  cannot say (model references, tools, workspaces). Every mistake in the file is
  reported at once, each as "file:line:column: key.path: message", never as a traceback.

  # ---- one mistake in an agent's settings -------------------------------------------

  Scenario Outline: a wrong agent setting is reported at its value: <setting>
    Given a spec workspace folder "data"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          <setting>
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "<message>"

    Examples:
      | setting                            | message                                                                                                                                                 |
      | max_rounds: 0                      | agents.yaml:5:17: agents.reader.max_rounds: 0 is less than the minimum of 1                                                                             |
      | max_rounds: 501                    | agents.yaml:5:17: agents.reader.max_rounds: 501 is greater than the maximum of 500                                                                      |
      | max_rounds: many                   | agents.yaml:5:17: agents.reader.max_rounds: expected an integer, got 'many'                                                                             |
      | max_rounds: 2.5                    | agents.yaml:5:17: agents.reader.max_rounds: expected an integer, got 2.5                                                                                |
      | token_budget_percent: 1.5          | agents.yaml:5:27: agents.reader.token_budget_percent: 1.5 is greater than the maximum of 1                                                              |
      | token_budget_percent: 0            | agents.yaml:5:27: agents.reader.token_budget_percent: 0 must be greater than 0                                                                          |
      | max_parallel_tools: 65             | agents.yaml:5:25: agents.reader.max_parallel_tools: 65 is greater than the maximum of 64                                                                |
      | tool_result_max_chars: 999         | agents.yaml:5:28: agents.reader.tool_result_max_chars: 999 is less than the minimum of 1000                                                             |
      | trim_tool_results: maybe           | agents.yaml:5:24: agents.reader.trim_tool_results: expected true or false, got 'maybe'                                                                  |
      | trim_keep_steps: -1                | agents.yaml:5:22: agents.reader.trim_keep_steps: -1 is less than the minimum of 0                                                                       |
      | allow_tool_output_pruning: 1       | agents.yaml:5:32: agents.reader.allow_tool_output_pruning: expected true or false, got 1                                                                |
      | pruning_min_chars: -5              | agents.yaml:5:24: agents.reader.pruning_min_chars: -5 is less than the minimum of 0                                                                     |
      | pruning_timeout: 0                 | agents.yaml:5:22: agents.reader.pruning_timeout: 0 must be greater than 0                                                                               |
      | pruning_concurrency: 33            | agents.yaml:5:26: agents.reader.pruning_concurrency: 33 is greater than the maximum of 32                                                               |
      | pruning_verify: null               | agents.yaml:5:21: agents.reader.pruning_verify: expected true or false, got nothing                                                                     |
      | tool_mode: nativ                   | agents.yaml:5:16: agents.reader.tool_mode: 'nativ' is not one of 'auto', 'native', 'text' (did you mean 'native'?)                                      |
      | max_round: 5                       | agents.yaml:5:5: agents.reader.max_round: unknown key 'max_round' (did you mean 'max_rounds'?)                                                          |
      | descripton: Reads things.          | agents.yaml:5:5: agents.reader.descripton: unknown key 'descripton' (did you mean 'description'?)                                                       |
      | colour: blue                       | agents.yaml:5:5: agents.reader.colour: unknown key 'colour'                                                                                             |
      | description:                       | agents.yaml:5:17: agents.reader.description: expected a string, got nothing                                                                             |
      | system_prompt: [be, brief]         | agents.yaml:5:20: agents.reader.system_prompt: expected a string, got a list                                                                            |
      | tools: read_file                   | agents.yaml:5:12: agents.reader.tools: expected a list, got 'read_file'                                                                                 |
      | tools: [read_fil]                  | agents.yaml:5:13: agents.reader.tools[0]: unknown tool 'read_fil' (did you mean 'read_file'?); the built-in tools are read_file, search, list_files, write_file, replace_lines, insert_at_line, str_replace, apply_patch, undo_edit, run_command, other tools are import paths 'package.module:name' |
      | tools: [""]                        | agents.yaml:5:13: agents.reader.tools[0]: must not be empty                                                                                             |
      | tools: ["math:pi"]                 | agents.yaml:5:13: agents.reader.tools[0]: 'math:pi' is a standard-library callable (module 'math'), not a tool; a tool is a LangChain tool or a function of your own module |
      | tools: ["fixtures.spec_fixtures:NotAChatModel"] | agents.yaml:5:13: agents.reader.tools[0]: 'fixtures.spec_fixtures:NotAChatModel' is a class, not a tool (a LangChain BaseTool or a function) |
      | tools: ["nowhere.at_all:thing"]    | agents.yaml:5:13: agents.reader.tools[0]: cannot import module 'nowhere.at_all' (No module named 'nowhere'); looked in {tmp} and the Python path                                              |
      | tools: ["fixtures.spec_fixtures:nothing_here"] | agents.yaml:5:13: agents.reader.tools[0]: module 'fixtures.spec_fixtures' has no attribute 'nothing_here'                                  |
      | tools: ["fixtures.spec_fixtures:word_count", "fixtures.spec_fixtures:word_count"] | agents.yaml:5:50: agents.reader.tools[1]: 'fixtures.spec_fixtures:word_count' is listed more than once |
      | workspace: ./missing               | agents.yaml:5:16: agents.reader.workspace: './missing' ({tmp}/missing) does not exist                                                                   |
      | workspace: ""                      | agents.yaml:5:16: agents.reader.workspace: must not be empty                                                                                            |
      | pruning_model: tiny                | agents.yaml:5:20: agents.reader.pruning_model: unknown model 'tiny' (this file declares no models: add it under 'models', or write it inline)          |
      | pruning_tools: [search]            | agents.yaml:5:21: agents.reader.pruning_tools[0]: 'search' is not one of this agent's tools (it has none)                                               |
      | tool_mode:                         | agents.yaml:5:15: agents.reader.tool_mode: expected one of 'auto', 'native', 'text', got nothing                                                        |
      | pruning_tools: read_file           | agents.yaml:5:20: agents.reader.pruning_tools: expected a list, got 'read_file'                                                                         |

  Scenario: a workspace that is a plain file is refused
    Given a spec plain file "notes.txt"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          tools: [read_file]
          workspace: /
        writer:
          model: {provider: openai}
          workspace: notes.txt
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:9:16: agents.writer.workspace: 'notes.txt' ({tmp}/notes.txt) is not a folder"

  Scenario: pruning tools must be tools the agent has, by tool name
    Given a spec workspace folder "data"
    And an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          workspace: data
          tools: [read_file, "fixtures.spec_fixtures:notes_tool", "fixtures.spec_fixtures:word_count"]
          pruning_tools: [read_file, lookup_notes, word_count, notes_tool, lookup_note]
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:7:58: agents.reader.pruning_tools[3]: 'notes_tool' is not one of this agent's tools
      agents.yaml:7:70: agents.reader.pruning_tools[4]: 'lookup_note' is not one of this agent's tools (did you mean 'lookup_notes'?)
      """

  # ---- one mistake in a model ---------------------------------------------------------

  Scenario Outline: a wrong model is reported where it is written: <model>
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: <model>
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "<message>"

    Examples:
      | model                                                         | message                                                                                                                                          |
      | {provider: claude}                                            | agents.yaml:4:23: agents.reader.model.provider: 'claude' is not one of 'openai', 'anthropic', 'ollama', 'openai-compatible'                                   |
      | {provider: olama, model: m}                                   | agents.yaml:4:23: agents.reader.model.provider: 'olama' is not one of 'openai', 'anthropic', 'ollama', 'openai-compatible' (did you mean 'ollama'?)            |
      | {provider: ollama}                                            | agents.yaml:4:5: agents.reader.model: an 'ollama' model needs 'model' (the name the server knows)                                                 |
      | {provider: openai-compatible, model: m}                       | agents.yaml:4:5: agents.reader.model: an 'openai-compatible' model needs 'base_url'                                                               |
      | {temperature: 0.5}                                            | agents.yaml:4:5: agents.reader.model: a model needs 'provider' (openai, anthropic, ollama, openai-compatible) or 'class'                                  |
      | {provider: openai, class: "leanloop.testing:ScriptedChatModel"} | agents.yaml:4:31: agents.reader.model.class: set 'provider' or 'class', not both                                                               |
      | {provider: openai, base_url: "http://a", kwargs: {openai_api_base: "http://b"}} | agents.yaml:4:62: agents.reader.model.kwargs.openai_api_base: kwargs.openai_api_base sets what 'base_url' sets; give it once |
      | {class: "collections:OrderedDict"}                            | agents.yaml:4:20: agents.reader.model.class: 'collections:OrderedDict' is not a chat model class (a subclass of BaseChatModel)                    |
      | {class: "fixtures.spec_fixtures:NotAChatModel"}               | agents.yaml:4:20: agents.reader.model.class: 'fixtures.spec_fixtures:NotAChatModel' is not a chat model class (a subclass of BaseChatModel)      |
      | {class: leanloop.testing}                                     | agents.yaml:4:20: agents.reader.model.class: 'leanloop.testing' is not an import path of the form 'package.module:name'                           |
      | {class: "leanloop.testing:Missing"}                           | agents.yaml:4:20: agents.reader.model.class: module 'leanloop.testing' has no attribute 'Missing'                                                 |
      | {class: "leanloop.testing:ScriptedChatModel", kwargs: [1]}    | agents.yaml:4:66: agents.reader.model.kwargs: expected a mapping, got a list                                                                      |
      | {provider: openai, temperature: 2.5}                          | agents.yaml:4:44: agents.reader.model.temperature: 2.5 is greater than the maximum of 2                                                          |
      | {provider: openai, max_tokens: 0}                             | agents.yaml:4:43: agents.reader.model.max_tokens: 0 is less than the minimum of 1                                                                 |
      | {provider: openai, timeout: 0}                                | agents.yaml:4:40: agents.reader.model.timeout: 0 must be greater than 0                                                                           |
      | {provider: openai, context_window: many}                      | agents.yaml:4:47: agents.reader.model.context_window: expected an integer, got 'many'                                                            |
      | {provider: openai, modle: gpt-4o}                             | agents.yaml:4:31: agents.reader.model.modle: unknown key 'modle' (did you mean 'model'?)                                                          |
      | {provider: openai, model: ""}                                 | agents.yaml:4:38: agents.reader.model.model: must not be empty                                                                                    |
      | local                                                         | agents.yaml:4:12: agents.reader.model: unknown model 'local' (this file declares no models: add it under 'models', or write it inline)            |
      | 42                                                            | agents.yaml:4:12: agents.reader.model: expected a string or a mapping, got 42                                                                     |

  Scenario: a model name that is not declared gets a suggestion from the declared ones
    Given an agents file "agents.yaml" with:
      """
      version: 1
      models:
        local:
          provider: openai-compatible
          model: local-test
          base_url: http://127.0.0.1:8080/v1
      agents:
        reader:
          model: locl
          pruning_model: remote
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:9:12: agents.reader.model: unknown model 'locl' (did you mean 'local'?)
      agents.yaml:10:20: agents.reader.pruning_model: unknown model 'remote' (the declared models are 'local')
      """

  # ---- the document as a whole --------------------------------------------------------

  Scenario: a YAML syntax error is located from the parser's mark
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: openai
         tools: []
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:5:4: invalid YAML: expected <block end>, but found '<block mapping start>' (while parsing a block mapping)"

  Scenario: a duplicate key is an error at its second occurrence
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          max_rounds: 5
          max_rounds: 50
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:6:5: agents.reader.max_rounds: duplicate key 'max_rounds' (it is already set above)"
    And the first spec issue is at line 6, column 5, path "agents.reader.max_rounds"

  Scenario: the top level needs a version and at least one agent
    Given an agents file "agents.yaml" with:
      """
      version: 2
      agent:
        reader:
          model: {provider: openai}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:1:1: missing required key 'agents'
      agents.yaml:1:10: version: must be 1, got 2
      agents.yaml:2:1: agent: unknown key 'agent' (did you mean 'agents'?)
      """

  Scenario: an empty agents mapping is refused
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents: {}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:2:9: agents: needs at least one agent"

  Scenario: agent and model names must be plain names
    Given an agents file "agents.yaml" with:
      """
      version: 1
      models:
        my model: {provider: openai}
      agents:
        2nd-reader:
          model: {provider: openai}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:3:3: models.my model: 'my model' is not a valid name: use letters, digits, '_' and '-', starting with a letter or '_'
      agents.yaml:5:3: agents.2nd-reader: '2nd-reader' is not a valid name: use letters, digits, '_' and '-', starting with a letter or '_'
      """

  Scenario: an agent without a model names the key it lacks
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          description: Reads.
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:3:3: agents.reader: missing required key 'model'"

  Scenario: an empty file is one located error
    Given an agents file "agents.yaml" with:
      """
      # nothing here yet
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:1:1: the file is empty; expected a mapping with 'version' and 'agents'"

  Scenario: a document that is not a mapping is one located error
    Given an agents file "agents.yaml" with:
      """
      - reader
      - writer
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:1:1: expected a mapping with 'version' and 'agents', got a list"

  Scenario: a document that is a single value is one located error
    Given an agents file "agents.yaml" with:
      """
      just some words
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:1:1: expected a mapping with 'version' and 'agents', got a single str value"

  Scenario: a file that is not UTF-8 is located at its first bad byte
    Given an agents file "agents.yaml" in Latin-1 with:
      """
      version: 1
      agents:
        reader:
          description: Café reader
          model: {provider: openai}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:4:21: is not UTF-8 text (byte 0xe9)"

  Scenario: a raw control character is a located YAML error
    Given an agents file "agents.yaml" with "^G" standing for a bell character:
      """
      version: 1
      agents:
        reader:
          description: ring ^G
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:4:23: invalid YAML: character #x0007 is not allowed in YAML"

  Scenario: an alias that contains itself is refused
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader: &loop
          model: {provider: openai}
          again: *loop
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:5:5: agents.reader.again: an alias refers to a value that contains it"

  Scenario: a key that is not plain text is refused, and the rest still checked
    Given an agents file "agents.yaml" with:
      """
      version: 1
      models:
        broken: 5
      agents:
        ? [reader, writer]
        : {model: {provider: openai}}
        reader:
          model: broken
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:3:11: models.broken: expected a mapping, got 5
      agents.yaml:5:5: agents: a key must be plain text
      """

  Scenario: a merge key must merge mappings
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          <<: [a, b]
          model: {provider: openai}
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:4:9: agents.reader: '<<' must merge a mapping or a list of mappings"

  Scenario: YAML nested too deeply is one error, not a crash
    Given an agents file "agents.yaml" nested 600 lists deep
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:1:109: version[0][0][0]: nested too deeply (more than 100 levels)"

  Scenario: a name the system cannot open is a SpecError
    When an agents file with a name of 300 characters is loaded
    Then the only spec issue says "cannot read the file (File name too long)"

  Scenario: a missing file is a SpecError, not a traceback
    When the agents file "nowhere.yaml" is loaded
    Then loading the agents file fails with "nowhere.yaml: no such file"

  Scenario: a folder is not an agents file
    Given a spec workspace folder "conf"
    When the agents file "conf" is loaded
    Then loading the agents file fails with "conf: is a folder, not an agents file"

  Scenario: Python-specific YAML tags are refused (safe loading only)
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader: !!python/object/apply:os.system ["echo hacked"]
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:3:11: agents.reader: unsupported YAML tag '!!python/object/apply:os.system'"

  Scenario: an alias bomb is refused instead of expanded
    Given an agents file "agents.yaml" with:
      """
      a: &a [x, x, x, x, x, x, x, x, x, x]
      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
      f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with "agents.yaml:5:4: e: too large (more than 100,000 values after expanding aliases)"

  Scenario: a file with five different mistakes gives five located issues
    Given an agents file "agents.yaml" with:
      """
      version: 1
      models:
        local:
          provider: openai-compatible
          model: local-test
          base_url: http://127.0.0.1:8080/v1
      agents:
        reader:
          model: locl
          tools: [read_file, "nowhere.at_all:lookup"]
          workspace: ./data
          token_budget_percent: 1.5
          max_round: 3
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with 5 located issues
    And loading the agents file fails with:
      """
      agents.yaml:9:12: agents.reader.model: unknown model 'locl' (did you mean 'local'?)
      agents.yaml:10:24: agents.reader.tools[1]: cannot import module 'nowhere.at_all' (No module named 'nowhere'); looked in {tmp} and the Python path
      agents.yaml:11:16: agents.reader.workspace: './data' ({tmp}/data) does not exist
      agents.yaml:12:27: agents.reader.token_budget_percent: 1.5 is greater than the maximum of 1
      agents.yaml:13:5: agents.reader.max_round: unknown key 'max_round' (did you mean 'max_rounds'?)
      """

  Scenario: Python data is checked by the same rules, without line numbers
    When the agents file data is loaded from a Python dict:
      """
      {"version": 1, "agents": {"reader": {"model": {"provider": "openai"}, "max_rounds": "3"}}}
      """
    Then loading the agents file fails with "<dict>: agents.reader.max_rounds: expected an integer, got '3'"

  Scenario: Python data that is not a mapping is refused
    When the agents file data "[1, 2]" is loaded from Python
    Then loading the agents file fails with "<dict>: expected a mapping with 'version' and 'agents', got list"

  # ---- good files ---------------------------------------------------------------------

  Scenario: defaults come from the schema
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
      """
    When the agents file "agents.yaml" is loaded
    Then the spec of agent "reader" has:
      | field                     | value          |
      | description               | ''             |
      | system_prompt             | None           |
      | tools                     | ()             |
      | workspace                 | None           |
      | max_rounds                | 20             |
      | max_parallel_tools        | 8              |
      | tool_result_max_chars     | 80000          |
      | token_budget_percent      | 0.85           |
      | trim_tool_results         | True           |
      | trim_keep_steps           | 2              |
      | allow_tool_output_pruning | False          |
      | pruning_model             | None           |
      | pruning_tools             | ('read_file',) |
      | pruning_min_chars         | 2000           |
      | pruning_timeout           | 60.0           |
      | pruning_concurrency       | 4              |
      | pruning_verify            | True           |
      | tool_mode                 | 'auto'         |
      | model.provider            | 'openai'       |
      | model.name                | None           |

  Scenario: every default of AgentSpec is the schema's default
    Then every default of AgentSpec equals the spec schema default
    And every agent key of the spec schema has a description
    And the spec schema is a valid draft 2020-12 JSON Schema
    And changing the spec schema a caller got changes nothing

  Scenario: named and inline models, several agents, in file order
    Given a spec workspace folder "data"
    And an agents file "agents.yaml" with:
      """
      version: 1
      models:
        local:
          provider: openai-compatible
          model: local-test
          base_url: http://127.0.0.1:8080/v1
          api_key: none
          temperature: 0
          context_window: 4096
        scripted:
          class: leanloop.testing:ScriptedChatModel
          kwargs: {replies: [hello]}
          context_window: 2048
      agents:
        writer:
          description: Writes.
          model: local
          system_prompt: You write.
        reader:
          model: {provider: ollama, model: qwen3, timeout: 30, max_tokens: 512}
          pruning_model: scripted
          tools: [read_file, search, list_files, "fixtures.spec_fixtures:notes_tool"]
          workspace: data
          allow_tool_output_pruning: true
          pruning_tools: [read_file, lookup_notes]
          tool_mode: text
          max_rounds: 30.0
          token_budget_percent: 1
        checker:
          model: local
      """
    When the agents file "agents.yaml" is loaded
    Then the agents file gives the agents "writer, reader, checker"
    And the spec of agent "writer" shares its model with the spec of agent "checker"
    And the spec of agent "writer" was read from "agents.yaml"
    And the spec of agent "writer" has:
      | field                   | value                                                                     |
      | description             | 'Writes.'                                                                 |
      | system_prompt           | 'You write.'                                                              |
      | model.name              | 'local'                                                                   |
      | model.provider          | 'openai-compatible'                                                       |
      | model.base_url          | 'http://127.0.0.1:8080/v1'                                                |
      | model.api_key           | 'none'                                                                    |
      | model.temperature       | 0.0                                                                       |
      | model.context_window    | 4096                                                                      |
      | model.location          | SourceLocation(source='agents.yaml', line=3, column=3, path='models.local') |
      | location                | SourceLocation(source='agents.yaml', line=15, column=3, path='agents.writer') |
    And the spec of agent "reader" has:
      | field                    | value                                                                                    |
      | model.name               | None                                                                                     |
      | model.provider           | 'ollama'                                                                                 |
      | model.model              | 'qwen3'                                                                                  |
      | model.timeout            | 30.0                                                                                     |
      | model.max_tokens         | 512                                                                                      |
      | model.location           | SourceLocation(source='agents.yaml', line=20, column=5, path='agents.reader.model')      |
      | pruning_model.name       | 'scripted'                                                                               |
      | pruning_model.class_path | 'leanloop.testing:ScriptedChatModel'                                                     |
      | pruning_model.kwargs     | {'replies': ['hello']}                                                                   |
      | pruning_model.context_window | 2048                                                                                 |
      | tools                    | ('read_file', 'search', 'list_files', 'fixtures.spec_fixtures:notes_tool')                |
      | pruning_tools            | ('read_file', 'lookup_notes')                                                            |
      | allow_tool_output_pruning | True                                                                                    |
      | tool_mode                | 'text'                                                                                   |
      | max_rounds               | 30                                                                                       |
      | token_budget_percent     | 1.0                                                                                      |
    And the spec of agent "reader" has its workspace at "data"

  Scenario: a relative workspace resolves against the agents file's folder, not the working folder
    Given a spec workspace folder "project/data"
    And an agents file "project/conf/agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          tools: [read_file]
          workspace: ../data
      """
    When the agents file "project/conf/agents.yaml" is loaded
    Then the spec of agent "reader" has its workspace at "project/data"
    And the spec of agent "reader" was read from "project/conf/agents.yaml"

  Scenario: built-in tools without a workspace use the agents file's folder
    Given an agents file "project/conf/agents.yaml" with:
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          tools: [search, read_file]
        talker:
          model: {provider: openai}
      """
    When the agents file "project/conf/agents.yaml" is loaded
    Then the spec of agent "reader" has its workspace at "project/conf"
    And the spec of agent "talker" has:
      | field     | value |
      | workspace | None  |

  Scenario: anchors under x- keys can be merged into agents
    Given an agents file "agents.yaml" with:
      """
      version: 1
      x-common: &common
        model: {provider: openai, model: gpt-4o-mini}
        max_rounds: 5
      agents:
        quick:
          <<: *common
        slow:
          <<: [*common]
          max_rounds: 50
      """
    When the agents file "agents.yaml" is loaded
    Then the spec of agent "quick" has:
      | field       | value         |
      | max_rounds  | 5             |
      | model.model | 'gpt-4o-mini' |
    And the spec of agent "slow" has:
      | field      | value |
      | max_rounds | 50    |

  Scenario: text is loaded with its own base folder for workspaces
    Given a spec workspace folder "base/data"
    When the agents file text is loaded from a string with base folder "base":
      """
      version: 1
      agents:
        reader:
          model: {provider: openai}
          workspace: data
      """
    Then the spec of agent "reader" has its workspace at "base/data"
    And the spec of agent "reader" has:
      | field    | value                                                                     |
      | source   | None                                                                      |
      | location | SourceLocation(source='<string>', line=3, column=3, path='agents.reader') |

  Scenario: Python data loads like a file
    When the agents file data is loaded from a Python dict:
      """
      {"version": 1, "agents": {"reader": {"model": {"provider": "openai"}, "tools": ["fixtures.spec_fixtures:word_count"]}}}
      """
    Then the spec of agent "reader" has:
      | field    | value                                                               |
      | tools    | ('fixtures.spec_fixtures:word_count',)                              |
      | location | SourceLocation(source='<dict>', line=None, column=None, path='agents.reader') |

  Scenario: values the schema lets by but a run could not use are refused, located
    Given an agents file "agents.yaml" with:
      """
      version: 1
      agents:
        a:
          model: {provider: openai, api_key: k, context_window: 100000000000000000000000000000000000000000}
          token_budget_percent: .nan
          pruning_timeout: .inf
        b:
          model: {provider: openai, api_key: k}
          workspace: "~nosuchuser-leanloop/x"
        c:
          model: {provider: openai, api_key: k}
          workspace: "a\0b"
      """
    When the agents file "agents.yaml" is loaded
    Then loading the agents file fails with:
      """
      agents.yaml:4:59: agents.a.model.context_window: 100000000000000000000000000000000000000000 is greater than the maximum of 100000000
      agents.yaml:5:27: agents.a.token_budget_percent: expected a finite number, got a NaN or infinity
      agents.yaml:6:22: agents.a.pruning_timeout: inf is greater than the maximum of 86400
      agents.yaml:9:16: agents.b.workspace: the workspace path cannot be resolved (Could not determine home directory.)
      agents.yaml:12:16: agents.c.workspace: the workspace path contains a NUL character
      """

  Scenario: an agents "file" that is a pipe or a device is refused at once, not read forever
    Given a named pipe "pipe.yaml" in the spec folder
    When the agents file "pipe.yaml" is loaded
    Then loading the agents file fails with "pipe.yaml: is not a regular file"
    When the agents file "/dev/zero" is loaded
    Then loading the agents file fails with "/dev/zero: is not a regular file"

  Scenario: an agents file larger than 10 MB is refused without reading it all
    Given an agents file "big.yaml" of 11000000 bytes
    When the agents file "big.yaml" is loaded
    Then loading the agents file fails with "big.yaml: is larger than 10 MB; an agents file is much smaller"

  Scenario: Python data that contains itself is a SpecError, not a RecursionError
    When Python data whose agent contains the whole document is loaded
    Then loading the agents file fails with "<dict>: the data refers to itself or is nested too deeply"
