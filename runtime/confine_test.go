package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestApprovalCardSaysConfinement: the card of a call that may start a
// native command says what the command may touch, as the kernel will
// enforce it: the pack and the read mounts, the workspace and the write
// mounts, and the network through the proxy or none.
func TestApprovalCardSaysConfinement(t *testing.T) {
	ro, rw := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		name, caps, want string
	}{
		{"no network", `terminal_exec = { commands = ["sh"] }`, "network none"},
		{"mounts and network", `terminal_exec = { commands = ["sh"] }
filesystem_read = ["` + ro + `"]
filesystem_write = ["` + rw + `"]
network = ["example.org"]`, "network granted hosts only, through packs' proxy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			p := testPack{name: "card", toml: "[capabilities]\n" + tc.caps + "\n",
				tools: `[{"name": "sh", "description": "Runs true.", "input_schema": {"type": "object"}, "run": {"exec": ["sh", "-c", "true"]}}]`}.load(t)
			var card []string
			o, err := h.pipeline(p).Call(context.Background(), Request{Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: "sh",
				Arguments: json.RawMessage(`{}`), Workspace: h.ws, Approvers: []capability.Approver{cardApprover{&card}}})
			if err != nil || o.Err != nil {
				t.Fatalf("%v %v", err, o.Err)
			}
			line := card[len(card)-1]
			if !strings.HasPrefix(line, "runs confined: reads "+p.Dir) || !strings.Contains(line, "writes "+h.ws) || !strings.HasSuffix(line, tc.want) {
				t.Errorf("card %q", card)
			}
			if tc.name == "mounts and network" && (!strings.Contains(line, ro) || !strings.Contains(line, rw)) {
				t.Errorf("card %q does not name the mounts", line)
			}
		})
	}
}
