package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolVersions: a client of the newest protocol the SDK speaks
// (2026-07-28), a 2025-11-25 and a 2025-06-18 client all get a working
// session, over stdio-like in-memory pipes and over Streamable HTTP, and
// their calls are approved by the person. With multiRoundTrip off the
// server offers versions up to syncProtocol and the newer client falls back
// to it (its server/discover is refused, then it initializes); with it on,
// the newer client keeps 2026-07-28 in memory and is asked through an
// input-required result; over HTTP the SDK's stateful handler serves only
// versions up to syncProtocol, so it falls back there too.
func TestProtocolVersions(t *testing.T) {
	ctx := context.Background()
	if newest := mcp.SupportedProtocolVersions()[0]; newest <= syncProtocol {
		t.Fatalf("the SDK's newest version %s is not newer than %s: revisit syncProtocol", newest, syncProtocol)
	}
	if got := protocolVersions(false); got[0] != syncProtocol || !slices.Contains(got, "2025-06-18") {
		t.Fatalf("protocolVersions(false) = %v, want %s first and the older ones", got, syncProtocol)
	}
	if got := protocolVersions(true); got[0] != newestProtocol || !slices.Contains(got, syncProtocol) {
		t.Fatalf("protocolVersions(true) = %v, want %s first and %s", got, newestProtocol, syncProtocol)
	}
	for _, on := range []bool{false, true} {
		e := newEnvPacks(t, autoApproveReads, "testdata/decl-pack")
		e.srv.multiRoundTrip = on
		e.srv.cfg.ApprovalTimeout = time.Minute
		h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", Token: testToken})
		for _, c := range []struct{ ask, wantMem, wantHTTP string }{
			{newestProtocol, map[bool]string{false: syncProtocol, true: newestProtocol}[on], syncProtocol},
			{"2025-11-25", "2025-11-25", "2025-11-25"},
			{"2025-06-18", "2025-06-18", "2025-06-18"},
		} {
			for _, transport := range []string{"in-memory", "http"} {
				t.Run(fmt.Sprintf("multiRoundTrip=%v/%s/%s", on, c.ask, transport), func(t *testing.T) {
					var asked atomic.Int32
					client := mcp.NewClient(&mcp.Implementation{Name: "v" + c.ask, Version: "1"}, elicitingClient(choiceRunOnce, "accept", &asked, nil))
					var cs *mcp.ClientSession
					var err error
					want := c.wantMem
					if transport == "http" {
						want = c.wantHTTP
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
					if got := cs.InitializeResult().ProtocolVersion; got != want {
						t.Errorf("negotiated %s, want %s", got, want)
					}
					if names := toolNames(t, cs); !slices.Contains(names, "read_file") {
						t.Errorf("tools/list = %v", names)
					}
					res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://decl-pack/guide"})
					if err != nil || !strings.Contains(res.Contents[0].Text, "MARKER-GUIDE") {
						t.Errorf("resources/read = %+v, %v", res, err)
					}
					// open_docs is not auto-approved: the person is asked,
					// by elicitation/create or an input-required result.
					text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "decl-pack"})
					if isErr || asked.Load() != 1 {
						t.Errorf("open_docs = %q (error %v), forms shown %d; want the entry doc after one approval", text, isErr, asked.Load())
					}
				})
			}
		}
	}
}
