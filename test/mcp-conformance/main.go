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

// elicitationSchema is the form test_elicitation asks for.
var elicitationSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"username": map[string]any{"type": "string", "description": "Your username"},
		"email":    map[string]any{"type": "string", "format": "email", "description": "Your email address"},
	},
	"required": []string{"username", "email"},
}

// defaultsSchema is the form test_elicitation_sep1034_defaults asks for: a
// default for every primitive type (SEP-1034).
var defaultsSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
		"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
		"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
	},
}

// elicitationResult is what an elicitation tool returns: the person's
// answer, as the host gave it (action, and the content when accepted).
func elicitationResult(answer []byte) []byte {
	return []byte("User response: " + string(answer))
}
