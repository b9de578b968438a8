Feature: Tools isolated from the process and from each other
  Three low-severity defects of issue 28, where a tool reaches past its own call. An
  `async def` tool that makes a blocking call holds the event loop, so no timer can stop
  it at its tool_timeout: the result says how long it really ran and that it blocked the
  loop, instead of "timed out after 3 s". A built-in tool that has the name of an MCP
  tool is refused by `validate --check-models` as `run` refuses it, with the same located
  line. And the modules beside an agents file (tools, a model class, an output_schema)
  are imported without changing `sys.path`, each folder's modules its own: a host that
  loads the files of several tenants never hands one tenant's `mytools.py` to another.

  # ---- an async tool that blocks the event loop -----------------------------------------

  Scenario: An async tool that blocks the loop past tool_timeout is reported with its real duration
    Given an agent whose async tool "block_loop" blocks the event loop for 0.5 s, with tool_timeout 0.05, and the script:
      | reply                           |
      | call block_loop {"label": "x"}  |
      | Gave up waiting.                |
    When the agent is asked "Wait for it." within 10 s
    Then the answer is "Gave up waiting."
    And the tool result of request 2 says "block_loop" timed out after at least 0.5 s against its 0.05 s limit, blocking the event loop
    And report call 1 failed as timed out, with a note that it blocked the event loop and ran at least 0.5 s, stuck in "block_loop"

  # ---- validate --check-models refuses what run refuses -----------------------------------

  Scenario: A built-in tool named like an MCP tool fails --check-models with run's own located line
    Given a CLI file "proj/files_server.py" with:
      """
      from mcp.server.fastmcp import FastMCP

      app = FastMCP("files", log_level="WARNING")


      @app.tool()
      def read_file(path: str) -> str:
          "Read a file of the server's own."
          return f"server copy of {path}"


      app.run("stdio")
      """
    And an agents file "proj/agents.yaml" whose MCP server "files" runs "files_server.py" with this Python, and whose agent "a" has the tools "read_file, mcp:files"
    When the CLI runs "run proj/agents.yaml hello"
    Then the CLI exits with 2
    And the CLI stderr mentions "proj/agents.yaml:5:3: agents.a.tools: two tools are named "read_file" ('read_file' and 'mcp:files')"
    When the CLI runs "validate --check-models proj/agents.yaml"
    Then the CLI exits with 2
    And the CLI stderr mentions "proj/agents.yaml:5:3: agents.a.tools: two tools are named "read_file" ('read_file' and 'mcp:files') (agent a)"
    And the CLI stdout is "failed: a (1 problem)"

  # ---- modules beside the file, one folder's never another's -------------------------------

  Scenario: Two tenants' files with a mytools.py each: each agent gets its own, sys.path stays as it was
    Given the tenant folder "tenant_a" whose mytools.py says "tenant A"
    And the tenant folder "tenant_b" whose mytools.py says "tenant B"
    When this process builds the agents of "tenant_a/agents.yaml" and then of "tenant_b/agents.yaml"
    Then the agents of "tenant_a" have the tool, model class and answer schema of "tenant_a/mytools.py"
    And the agents of "tenant_b" have the tool, model class and answer schema of "tenant_b/mytools.py"
    And sys.path is as it was before, and no module of either folder is in sys.modules
    When the agent "a" of each tenant is asked "What is X1?"
    Then the agent "a" of "tenant_a" got the tool result "tenant A: code X1"
    And the agent "a" of "tenant_b" got the tool result "tenant B: code X1"
