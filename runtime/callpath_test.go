package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

// TestInitializationHoldsNoCapability: a pool builds instances before any
// call is approved, and building one runs guest code (a start section, an
// Extism reactor's _initialize, a Go guest's init()). That code must hold no
// capability: one approved call writes to the workspace exactly once, every
// write is recorded under that call's invocation, and the pool keeps no
// instance whose initializer needs a capability.
func TestInitializationHoldsNoCapability(t *testing.T) {
	for _, tt := range []struct {
		name, module, fn, log string
	}{
		{"wasi start section", "testdata/wasi_startwrite.wasm", "", "start.log"},
		{"extism _initialize", "testdata/plugin_initwrite.wasm", "run", "init.log"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{PoolSize: 2})
			p := modulePack(t, "initwrite", "", tt.module, map[string]string{"go": tt.fn})
			g := h.grant(p, nil)
			// A first call starts the pool; wait until its refiller is idle,
			// then make the call that counts.
			first := h.invocation(p, "go", `{}`, g)
			if _, err := h.rt.invoke(context.Background(), first); err != nil {
				t.Fatal(err)
			}
			h.waitPoolsIdle()
			lines := func() int {
				b, err := os.ReadFile(filepath.Join(h.ws, tt.log))
				if err != nil {
					t.Fatal(err)
				}
				return strings.Count(string(b), "\n")
			}
			if got := lines(); got != 1 {
				t.Fatalf("after one approved call the initializer wrote %d times, want 1", got)
			}
			inv := h.invocation(p, "go", `{}`, g)
			if _, err := h.rt.invoke(context.Background(), inv); err != nil {
				t.Fatal(err)
			}
			h.waitPoolsIdle()
			if got := lines(); got != 2 {
				t.Fatalf("after two approved calls the initializer wrote %d times, want 2", got)
			}
			var allowed int
			for _, e := range h.rec.Exercises() {
				if e.Capability != capability.FilesystemWrite || !e.Allowed {
					continue
				}
				allowed++
				if e.Invocation != first.ID && e.Invocation != inv.ID {
					t.Errorf("a write was allowed outside an approved call: %+v", e)
				}
			}
			if allowed != 2 {
				t.Fatalf("%d writes were recorded as allowed, want 2 (one per approved call)", allowed)
			}
		})
	}
}

// waitPoolsIdle waits until every pool's refiller has nothing left to do:
// it is full, or it stopped building.
func (h *harness) waitPoolsIdle() {
	h.tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		busy := false
		h.rt.mu.Lock()
		for _, p := range h.rt.pools {
			if p.building.Load() || len(p.kick) > 0 {
				busy = true
			}
		}
		h.rt.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			h.tb.Fatal("the pools are still building after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestApprovalBindsTheCall: an approval covers exactly the call the gate
// was shown: its invocation, pack, tool, arguments and grant. Anything else
// is refused before guest code runs.
func TestApprovalBindsTheCall(t *testing.T) {
	h := newHarness(t, Config{})
	p := modulePack(t, "bind", "[capabilities]\nnetwork = [\"example.com\"]\n", wasiFiles, map[string]string{"a": "", "b": ""})
	g := h.grant(p, nil)
	narrower := h.grant(p, []capability.Name{})
	approved := h.invocation(p, "a", `{}`, g)
	b, _ := p.Tool("b")

	for name, mutate := range map[string]func(*Invocation){
		"another tool":      func(inv *Invocation) { inv.Tool = b },
		"other arguments":   func(inv *Invocation) { inv.Input = []byte(`{"x": 1}`) },
		"another grant":     func(inv *Invocation) { inv.Grant = narrower },
		"another integrity": func(inv *Invocation) { inv.Integrity = "sha256:00" },
	} {
		t.Run(name, func(t *testing.T) {
			inv := approved
			mutate(&inv)
			_, err := h.rt.invoke(context.Background(), inv)
			if !errors.Is(err, capability.ErrApprovalMismatch) || !errors.Is(err, capability.ErrDenied) {
				t.Fatalf("got %v, want capability.ErrApprovalMismatch wrapping capability.ErrDenied", err)
			}
			if _, err := os.Stat(filepath.Join(h.ws, "out.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the guest ran on an approval for another call: out.txt: %v", err)
			}
		})
	}
	if _, err := h.rt.invoke(context.Background(), approved); err != nil {
		t.Fatalf("the approved call itself: %v", err)
	}
}

// TestPipelineKeepsToolsOffPacksOwnServers: an address the pipeline is told
// is packs' own (the web app, the MCP HTTP server) is refused to a tool
// whose grant names it exactly; the same grant reaches any other server.
func TestPipelineKeepsToolsOffPacksOwnServers(t *testing.T) {
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a tool reached packs' own server: %s %s", r.Method, r.URL)
	}))
	defer own.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"pong":true}`)
	}))
	defer other.Close()
	h := newHarness(t, Config{})
	p := modulePack(t, "net", "[capabilities]\nnetwork = [\"127.0.0.1:*\"]\n", "testdata/plugin_http.wasm", map[string]string{"get": "get"})
	ownAddr := netip.MustParseAddrPort(own.Listener.Addr().String())
	pl, err := NewPipeline(h.rt, PipelineConfig{
		Grants: userGrants{{Capability: capability.Network, Scope: capability.ScopePersistent}}, Audit: h.rec,
		Reserved: func() []netip.AddrPort { return []netip.AddrPort{ownAddr} },
	})
	if err != nil {
		t.Fatal(err)
	}
	get := func(url string) Outcome {
		o, err := pl.Call(context.Background(), Request{Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: "get",
			Arguments: json.RawMessage(fmt.Sprintf(`{"url": %q, "method": "POST"}`, url)), Workspace: h.ws, Approvers: []capability.Approver{yes{}}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := get(own.URL + "/v1/packs/net/grants"); !errors.Is(o.Err, capability.ErrReservedAddress) || o.Status != capability.StatusDenied {
		t.Fatalf("a call to packs' own server: %v (%s), want ErrReservedAddress", o.Err, o.Status)
	}
	if o := get(other.URL + "/"); o.Err != nil || string(o.Output) != `{"pong":true}` {
		t.Fatalf("a call to another granted server: %v, %s", o.Err, o.Output)
	}
}
