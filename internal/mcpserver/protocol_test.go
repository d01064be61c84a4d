package mcpserver

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolVersions: a client of the newest protocol the SDK speaks
// (2026-07-28) and a 2025-11-25 client both get a working session, over
// stdio-like in-memory pipes and over Streamable HTTP. The server offers
// versions up to syncProtocol: the newer client falls back to it (its
// server/discover is refused, then it initializes), so approval through
// elicitation keeps working for both.
func TestProtocolVersions(t *testing.T) {
	ctx := context.Background()
	if newest := mcp.SupportedProtocolVersions()[0]; newest <= syncProtocol {
		t.Fatalf("the SDK's newest version %s is not newer than %s: revisit syncProtocol", newest, syncProtocol)
	}
	if got := protocolVersions(); got[0] != syncProtocol || !slices.Contains(got, "2025-06-18") {
		t.Fatalf("protocolVersions() = %v, want %s first and the older ones", got, syncProtocol)
	}
	e := newEnvPacks(t, autoApproveReads, "testdata/decl-pack")
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", Token: testToken})
	for _, c := range []struct{ ask, want string }{
		{"2026-07-28", syncProtocol},
		{"2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
	} {
		for _, transport := range []string{"in-memory", "http"} {
			t.Run(c.ask+"/"+transport, func(t *testing.T) {
				client := mcp.NewClient(&mcp.Implementation{Name: "v" + c.ask, Version: "1"}, nil)
				var cs *mcp.ClientSession
				var err error
				if transport == "http" {
					cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.URL(), HTTPClient: &http.Client{Transport: bearer{testToken}}}, &mcp.ClientSessionOptions{ProtocolVersion: c.ask})
				} else {
					st, ct := mcp.NewInMemoryTransports()
					conn := e.srv.newConn()
					sctx, cancel := context.WithCancel(ctx)
					done := make(chan error, 1)
					go func() { done <- conn.srv.Run(sctx, st) }()
					t.Cleanup(func() { cancel(); <-done })
					cs, err = client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: c.ask})
				}
				if err != nil {
					t.Fatalf("connect asking for %s: %v", c.ask, err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ProtocolVersion; got != c.want {
					t.Errorf("negotiated %s, want %s", got, c.want)
				}
				if names := toolNames(t, cs); !slices.Contains(names, "read_file") {
					t.Errorf("tools/list = %v", names)
				}
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://decl-pack/guide"})
				if err != nil || !strings.Contains(res.Contents[0].Text, "MARKER-GUIDE") {
					t.Errorf("resources/read = %+v, %v", res, err)
				}
			})
		}
	}
}
