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

// What test_tool_with_logging logs and returns.
var logLines = []string{"Tool execution started", "Tool processing data", "Tool execution completed"}

const loggingDone = "Tool with logging executed successfully"

// The reports test_tool_with_progress makes, out of 100, and what it returns.
var progressSteps = []int{0, 50, 100}

const progressDone = "Tool with progress executed successfully"

func progressMessage(p int) string {
	switch p {
	case 0:
		return "Starting"
	case 100:
		return "Done"
	}
	return "Halfway"
}
