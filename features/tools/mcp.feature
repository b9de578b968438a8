Feature: MCP servers in the agents file
  mcp_servers declares servers (a program over stdio, or a URL); an agent lists
  "mcp:server" (every tool) or "mcp:server/tool" (one). MCP tools go through the same
  registry as every tool: their content blocks reach the model as plain text, and they
  take part in pruning (pruning_tools), caps and guards. A server that cannot start is
  one error line naming it. The server here is a small FastMCP program over stdio.

  Scenario: A 50 KB MCP tool result is pruned like read_file's
    Given an MCP server "logs" whose tool fetch_log returns 50 KB with 3 lines mentioning "deadlock"
    And an agent with the tools "mcp:logs/fetch_log", pruning_tools "fetch_log" and a pruning model that keeps the lines mentioning "deadlock"
    And its main model calls fetch_log {"name": "nightly"} and then answers "Three deadlocks."
    When the MCP agent is asked "Why did the nightly job stop?"
    Then the MCP agent answered "Three deadlocks."
    And report call 1 of the MCP agent was pruned from at least 50,000 characters to at most 2,000
    And the MCP tool result the model received holds the 3 lines mentioning "deadlock"

  Scenario: Text content blocks reach the model as plain text
    Given an MCP server "logs" whose tool fetch_log returns 50 KB with 3 lines mentioning "deadlock"
    And an agent with the tools "mcp:logs" and no pruning
    And its main model calls stock {"item": "A-1"} and then answers "Seven."
    When the MCP agent is asked "How many A-1?"
    Then the MCP agent has the tools "fetch_log, stock"
    And the MCP tool result the model received is exactly "A-1: 7 units"

  Scenario: A server whose command does not exist is one error line naming it
    Given an MCP server "ghost" started by the command "leanloop-no-such-command"
    And an agent with the tools "mcp:ghost" and no pruning
    When the MCP agent is built
    Then building the MCP agent fails with one line naming "ghost" and "leanloop-no-such-command"

  Scenario: Content blocks become text; an image or a file is one summary line
    Given a tool that returns a text block "A-1: 7 units", a 3-byte PNG image block and a PDF file link
    When the registry runs that tool
    Then the registry's result text is:
      """
      A-1: 7 units
      [image: image/png, 3 bytes]
      [file: application/pdf, https://example.com/stock.pdf]
      """
