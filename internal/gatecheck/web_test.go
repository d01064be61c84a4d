package gatecheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/web"
)

// TestWebTurn: in packs serve the model calls notes__note and
// exec_best_effort, and each call waits on a tool card. Nobody approving
// takes two forms: the person clicks Deny, or stops the turn while the
// card waits. Clicking Run is the positive control.
func TestWebTurn(t *testing.T) {
	for _, c := range []struct {
		answer string // what the person does with each card: approve, deny or stop
		ran    bool
	}{{"deny", false}, {"stop", false}, {"approve", true}} {
		t.Run(c.answer, func(t *testing.T) {
			e := newEnv(t)
			exec, _ := json.Marshal(execArgs)
			model := llmtest.NewServer(
				llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: chat.ToolEnableTools, Arguments: `{"pack_id":"notes"}`}}},
				llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__note", Arguments: `{}`}, {Name: chat.ToolExec, Arguments: string(exec)}}},
				llmtest.Turn{Text: "done"},
			)
			defer model.Close()
			p, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: model.OpenAIURL(), Model: "fake", APIKey: "sk-test", MaxTokens: 1000, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := web.New(web.Config{App: e.app, Chat: e.deps, Model: web.Model{Provider: p, Describe: "fake"}, Addr: "127.0.0.1:0", Version: "test", Token: webToken})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := srv.Listen()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx, ln) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Serve: %v", err)
				}
			}()
			base := "http://" + ln.Addr().String()

			var created struct{ ID string }
			do(t, base, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, http.StatusCreated, &created)
			do(t, base, "POST", "/v1/chats/"+created.ID+"/messages", map[string]any{"text": "write a note"}, http.StatusAccepted, nil)
			answered := 0
			for deadline := time.Now().Add(30 * time.Second); ; {
				if time.Now().After(deadline) {
					t.Fatalf("the turn did not end; %d cards answered", answered)
				}
				var pending struct{ Items []struct{ Invocation string } }
				do(t, base, "GET", "/v1/invocations?chat="+created.ID, nil, http.StatusOK, &pending)
				for _, it := range pending.Items {
					if c.answer == "stop" {
						do(t, base, "POST", "/v1/chats/"+created.ID+"/stop", nil, http.StatusOK, nil)
					} else {
						do(t, base, "POST", "/v1/invocations/"+it.Invocation+"/"+c.answer, nil, http.StatusOK, nil)
					}
					answered++
				}
				var state struct{ Running bool }
				do(t, base, "GET", "/v1/chats/"+created.ID, nil, http.StatusOK, &state)
				if !state.Running && answered > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			ws := e.workspaces(t)
			if len(ws) != 1 {
				t.Fatalf("workspaces %v: want the one of the web chat", ws)
			}
			e.assertOutcome(t, ws[0], noteFile, "note", c.ran)
			if c.answer == "stop" {
				// The stopped turn never reaches the second call.
				if _, err := os.Stat(filepath.Join(ws[0], execMarker)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("exec_best_effort ran in a stopped turn: %v", err)
				}
				return
			}
			e.assertOutcome(t, ws[0], execMarker, chat.ToolExec, c.ran)
		})
	}
}

// do sends one request to the web server and decodes its JSON answer into
// out (when not nil), failing unless the status is want.
// webToken is the web API's token in these tests: every /v1 request needs
// one, on loopback too.
const webToken = "gatecheck-test-token-0123456789abcdef"

func do(t *testing.T, base, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+webToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, data, err)
		}
	}
}
