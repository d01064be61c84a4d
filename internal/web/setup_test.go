package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoModelCommands: without a model, the status gives the exact
// commands that restart this server with one: its own executable and its
// own home, never "<home>" or a bare "packs serve" (issue 12, defect 8).
func TestNoModelCommands(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	var st struct {
		Model struct {
			HowToConfigure string   `json:"how_to_configure"`
			Commands       []string `json:"commands"`
		} `json:"model"`
	}
	e.must(http.StatusOK, "GET", "/v1/status", nil, &st)
	home := e.app.Home.Dir()
	if strings.Contains(st.Model.HowToConfigure, "<home>") {
		t.Errorf("how_to_configure names <home>: %q", st.Model.HowToConfigure)
	}
	if len(st.Model.Commands) == 0 {
		t.Fatal("no commands")
	}
	exe, _ := os.Executable()
	for _, c := range st.Model.Commands {
		if !strings.Contains(c, "PACKS_HOME="+home+" ") || !strings.Contains(c, " serve --provider ") || !strings.Contains(c, filepath.Base(exe)) {
			t.Errorf("command %q does not run this executable with this home", c)
		}
	}
	// Without the token, the page learns nothing of the home.
	var anon map[string]any
	if got := e.doAuth("", "GET", "/v1/status", nil, &anon); got != http.StatusOK || strings.Contains(toJSON(t, anon), home) {
		t.Errorf("the public status names the home: %v", anon)
	}
}

// TestDemoPrintsNoBareURL: make run's script points at the address packs
// serve prints (it carries the token); a bare http://ADDR/ would open a page
// that cannot get in.
func TestDemoPrintsNoBareURL(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	bare := regexp.MustCompile(`https?://\$\{?addr\}?/?(["'\s]|$)`)
	for i, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") && bare.MatchString(line) {
			t.Errorf("demo.sh:%d prints a token-less address: %s", i+1, line)
		}
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
