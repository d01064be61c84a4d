package approve_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/internal/approve"
)

// TestTerminalAsk: the person answers a tool's question at the terminal,
// field by field, or declines it; the end of input cancels; a line of the
// wrong type is asked again.
func TestTerminalAsk(t *testing.T) {
	q, err := hostfns.ParseQuestion([]byte(`{"message": "Deploy where?", "schema": {"type": "object", "properties": {
		"region": {"type": "string", "enum": ["eu", "us"], "title": "Region"}, "count": {"type": "integer"},
		"confirm": {"type": "boolean"}}, "required": ["region"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Pack, q.Tool, q.Invocation = "deployer", "deploy", "inv-1"
	tests := []struct {
		name, input string
		want        capability.Answer
	}{
		{"answers every field (required first, then by name)", "y\neu\nyes\n3\n", capability.Answer{Action: "accept", Content: map[string]any{"region": "eu", "count": 3.0, "confirm": true}}},
		{"leaves optional fields out", "y\nus\n\n\n", capability.Answer{Action: "accept", Content: map[string]any{"region": "us"}}},
		{"a required field is asked again", "y\n\neu\n\n\n", capability.Answer{Action: "accept", Content: map[string]any{"region": "eu"}}},
		{"a bad number is asked again", "y\neu\n\nthree\n3\n", capability.Answer{Action: "accept", Content: map[string]any{"region": "eu", "count": 3.0}}},
		{"declines", "n\n", capability.Answer{Action: "decline"}},
		{"end of input cancels", "", capability.Answer{Action: "cancel"}},
		{"end of input mid-form cancels", "y\neu\n", capability.Answer{Action: "cancel"}},
		{"anything else cancels", "maybe\n", capability.Answer{Action: "cancel"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := approve.NewTerminal(strings.NewReader(tt.input), &out).Ask(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("Ask = %v, want %v\n%s", got, tt.want, out.String())
			}
			if !strings.Contains(out.String(), "question from deployer__deploy") || !strings.Contains(out.String(), "Deploy where?") {
				t.Fatalf("the terminal showed %q, want the tool and its question", out.String())
			}
		})
	}
}
