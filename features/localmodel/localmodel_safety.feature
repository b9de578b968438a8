Feature: leanloop local is safe with concurrent starts, reused PIDs and damaged files
  `leanloop local start` holds a per-port lock and writes its PID file through a unique
  temporary file, so concurrent starts leave one recorded server and no orphan. The PID
  file records the process's start time and executable; `stop` and `status` trust it only
  while both still match, and never signal PID 0, 1, a negative or an impossible PID.
  `--ctx-size` is bounded by the model's trained context length, a binary that cannot
  run and a model file that no longer matches its setup stamp are one error line each.
  Like features/localmodel.feature these scenarios run a fake llama-server.

  # ── concurrent starts ────────────────────────────────────────────────────────────────

  Scenario: Concurrent local starts on one port leave one recorded server and no orphan
    Given a fake llama server executable
    When 5 separate processes run the local command "start" at once, on each of 3 free ports in turn
    Then on each port every fake llama server is the one its PID file names
    And on each port exactly one of the separate local commands exits 0
    And the other separate local commands exit 1 with one error line "already runs on port"
    And no partial PID file is left

  Scenario: Local status does not wait for a start in progress and keeps its PID file
    Given a fake llama server executable
    And the local server is started on a free port with ctx size 4096
    And another process holds the lock of that port
    When the local server status is asked within 2 seconds
    Then the local server status says running with n_ctx 4096
    And the local server PID file names the running process

  # ── the identity of the recorded process ─────────────────────────────────────────────

  Scenario: The PID file records the server's start time and executable
    Given a fake llama server executable
    When the local server is started on a free port with ctx size 2048
    Then the local server PID file records the start time and executable of the server

  Scenario: A reused PID whose command line has the same --port is not signalled
    Given a fake llama server executable
    And the local server is started on a free port with ctx size 4096
    And the server exited and its PID now belongs to another program started with that --port
    When I run the local command "status" on that port
    Then the local command exits 1 and prints "llama-server: not running"
    When I run the local command "stop" on that port
    Then the local command exits 0 and prints "no llama-server running on port"
    And the other program still runs
    And the local server PID file is removed

  Scenario: A PID with the recorded start time but another executable is not signalled
    Given a fake llama server executable
    And a local server PID file on a free port naming another program with the right start time but another executable
    When I run the local command "stop" on that port
    Then the local command exits 0 and prints "no llama-server running on port"
    And the other program still runs

  Scenario Outline: A PID file naming pid <pid> is one error line for "<command>" and nothing is signalled
    Given a fake llama server executable
    And a local server PID file on a free port naming pid <pid>
    When a separate process runs the local command "<command>" on that port
    Then the local command exits 1 with one error line "names pid <pid>, which cannot be a server"
    And the local server PID file is removed

    Examples:
      | pid                   | command |
      | 0                     | stop    |
      | -1                    | stop    |
      | 1                     | stop    |
      | 100000000000000000000 | stop    |
      | 0                     | status  |
      | -1                    | status  |
      | 100000000000000000000 | status  |

  # ── --ctx-size ───────────────────────────────────────────────────────────────────────

  Scenario: --ctx-size is bounded by the model's trained context length
    Given a fake llama server executable
    When I run the local command "start --ctx-size 1000000000" on a free port
    Then the local command exits 2 with one error line "ctx-size must be at most 32768 tokens (qwen2.5-coder-0.5b's trained context length), got 1000000000"
    When I run the local command "start --ctx-size 32769 --model qwen2.5-coder-1.5b" on a free port
    Then the local command exits 2 with one error line "ctx-size must be at most 32768 tokens (qwen2.5-coder-1.5b's trained context length)"
    And no local server PID file is left
    When I run the local command "start --ctx-size 32768" on a free port
    Then the local command exits 0 and prints "n_ctx 32768"

  Scenario: Local server options above the trained context length are refused
    Then local server options with ctx size 32769 are refused with "ctx-size must be at most 32768 tokens"
    And local server options for a model file outside the catalog with ctx size 200000 are refused with "at most 131072 tokens (the limit for a model outside the catalog)"

  # ── a binary that cannot run ─────────────────────────────────────────────────────────

  Scenario: A llama-server binary that is not executable is one error line
    Given a fake llama server executable
    And the llama server binary lost its execute permission
    When I run the local command "start" on a free port
    Then the local command exits 1 with one error line "is not executable: run `leanloop local setup --build` again"
    And no local server PID file is left

  Scenario: A llama-server binary the system cannot run is one error line
    Given a fake llama server executable
    And the llama server binary is an executable file in no known format
    When I run the local command "start" on a free port
    Then the local command exits 1 with one error line "cannot run"
    And no local server PID file is left

  # ── a damaged model file ─────────────────────────────────────────────────────────────

  Scenario: A truncated model file is refused on start and names setup
    Given a fake llama server executable
    And the local model cache holds a verified model
    And the local model file lost its last byte
    When I run the local command "start" on a free port
    Then the local command exits 1 with one error line "has 491,400,063 bytes, setup checked 491,400,064): run `leanloop local setup` again"
    And no local server PID file is left

  Scenario: A model file is hashed only when its time changed, and refused when its bytes did
    Given a fake llama server executable
    And a small local model file "custom.gguf" with a setup stamp
    When the local server is started with that model file
    Then the local server answers GET /health with 200
    And the model file was hashed 0 times
    When the local server is stopped
    And the model file is touched without changing its bytes
    And the local server is started with that model file
    Then the local server answers GET /health with 200
    And the model file was hashed 1 times
    And the model file's stamp records its new time
    When the local server is stopped
    And one byte of the model file is changed in place
    And the local server is started with that model file
    Then the local model error mentions "its sha256 differs): run `leanloop local setup` again"
    And no local server PID file is left
