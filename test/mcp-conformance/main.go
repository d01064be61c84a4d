// Command mcp-conformance is the guest of the mcp-conformance pack: the
// fixture tools of the MCP conformance suite (@modelcontextprotocol/
// conformance), as an Extism plugin. Each //go:wasmexport function is one
// tool of tools.json.
package main

func main() {}

// simpleText is the text test_simple_text returns.
const simpleText = "This is a simple text response for testing."

// errorText is the error test_error_handling fails with.
const errorText = "This tool intentionally returns an error for testing"
