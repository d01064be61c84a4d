package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/llm/llmtest"
)

func TestServeRefusesBeyondLoopbackWithoutToken(t *testing.T) {
	t.Setenv(serveTokenEnv, "")
	r := withHome(t, t.TempDir(), "serve", "--addr", "0.0.0.0:0").mustCode(t, exitUsage)
	if msg := r.oneLineError(t); !strings.Contains(msg, "token") {
		t.Errorf("got %q, want it to ask for a token", msg)
	}
}

// servedURL matches the address packs serve prints.
var servedURL = regexp.MustCompile(`serving the web app at (http://\S+/)`)

// TestServeProcess starts packs serve as a process with a model set through
// the environment, and runs one turn through its API.
func TestServeProcess(t *testing.T) {
	model := llmtest.NewServer(llmtest.Turn{Text: "Hello from the fake model."})
	defer model.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--home", t.TempDir(), "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "PACKS_CLI_CHILD=1", "PACKS_PROVIDER=openai", "PACKS_BASE_URL="+model.OpenAIURL(), "PACKS_MODEL=fake", "OPENAI_API_KEY=sk-test")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := bufio.NewScanner(stderr)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if m := servedURL.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("packs serve printed no address within 30s")
	}
	if url == "" {
		t.Fatal("packs serve exited without serving")
	}
	post := func(path, body string) map[string]any {
		t.Helper()
		res, err := http.Post(url+strings.TrimPrefix(path, "/"), "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode >= 300 {
			t.Fatalf("POST %s: %d %v %v", path, res.StatusCode, out, err)
		}
		return out
	}
	c := post("/v1/chats", `{}`)
	id := c["id"].(string)
	ev, err := http.Get(url + "v1/chats/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Body.Close()
	post("/v1/chats/"+id+"/messages", `{"text":"hi"}`)
	done := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(ev.Body)
		kind := ""
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, "event: "):
				kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && (kind == "turn_done" || kind == "turn_error"):
				done <- kind + " " + strings.TrimPrefix(line, "data: ")
				return
			}
		}
		io.Copy(io.Discard, ev.Body)
	}()
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "turn_done") || !strings.Contains(got, "Hello from the fake model.") {
			t.Errorf("got %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no turn_done within 30s")
	}
	if reqs := model.Requests(); len(reqs) != 1 || reqs[0].Model != "fake" {
		t.Errorf("the model got %d requests", len(reqs))
	}
}
