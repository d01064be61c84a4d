package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/testcache"
)

var metricsURL = regexp.MustCompile(`serving metrics at (http://\S+/metrics)`)

// scrape GETs url with authz (unless ""), returning the status and body.
func scrape(t *testing.T, url, authz string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestServeMetrics: packs serve counts its calls for Prometheus. /metrics
// on the app's address needs the token; --metrics-addr serves it alone
// without one; what it serves passes promtool check metrics and a real
// Prometheus scrapes it.
func TestServeMetrics(t *testing.T) {
	s, stderr := startServeArgs(t, t.TempDir(), []string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"}, "PACKS_CACHE="+testcache.Dir())
	m := metricsURL.FindStringSubmatch(stderr())
	if m == nil {
		t.Fatalf("packs serve did not print the metrics address:\n%s", stderr())
	}
	open := m[1]

	// On the app's own address: the token, like the API.
	if code, _ := scrape(t, s.base+"metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", code)
	}
	if code, _ := scrape(t, s.base+"metrics", "Bearer wrong-token-wrong-token-wrong"); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics with a wrong token: %d, want 401", code)
	}
	if code, body := scrape(t, s.base+"metrics", s.bearer()); code != http.StatusOK || !strings.Contains(body, "packs_approval_queue_depth") {
		t.Errorf("GET /metrics with the token: %d\n%.300s", code, body)
	}
	// The address of its own serves /metrics and nothing else.
	if code, _ := scrape(t, strings.TrimSuffix(open, "metrics")+"v1/audit", ""); code != http.StatusNotFound {
		t.Errorf("GET /v1/audit on --metrics-addr: %d, want 404", code)
	}

	// The first call may compile test-math (a cold module cache under a
	// loaded CI run takes more than call's 5 s).
	if code, out := s.callWithin(t, 2*time.Minute, s.bearer(), "POST", "/v1/packs/test-math/calls", `{"tool": "add", "arguments": {"a": 1, "b": 2}}`); code >= 300 {
		t.Fatalf("the first call: %d %v", code, out)
	}
	s.call(t, s.bearer(), "POST", "/v1/packs/test-math/calls", `{"tool": "add", "arguments": {"a": "one", "b": 2}}`)
	code, body := scrape(t, open, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", open, code)
	}
	for _, want := range []string{
		`packs_calls_total{pack="test-math",status="ok",tool="add"} 1`,
		`packs_calls_total{pack="test-math",status="invalid_input",tool="add"} 1`,
		`packs_call_duration_seconds_count{pack="test-math",tool="add"} 2`,
		"packs_approval_queue_depth 0",
		"packs_pools ", "packs_pool_ready_instances ", "packs_pool_bytes ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %q:\n%s", want, grepLines(body, "packs_"))
		}
	}
	if strings.Contains(body, `"one"`) || strings.Contains(body, "one\"") {
		t.Errorf("an argument's value is in the metrics:\n%s", grepLines(body, "packs_"))
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found (Debian's prometheus package; scripts/deps.sh installs it with WITH_TEST_DEPS=1)")
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	if testing.Short() {
		return
	}
	scrapeWithPrometheus(t, strings.TrimPrefix(strings.TrimSuffix(open, "/metrics"), "http://"))
}

// scrapeWithPrometheus runs a real Prometheus server that scrapes target
// (host:port) and waits until its query API returns packs' call count.
func scrapeWithPrometheus(t *testing.T, target string) {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not found (Debian's prometheus package)")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: packs\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	query := "http://" + addr + "/api/v1/query?query=" + `packs_calls_total%7Bstatus%3D%22ok%22,tool%3D%22add%22%7D`
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		res, err := http.Get(query)
		if err != nil {
			continue
		}
		var out struct {
			Data struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  []any             `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err == nil && len(out.Data.Result) == 1 {
			r := out.Data.Result[0]
			if r.Metric["pack"] != "test-math" || r.Metric["tool"] != "add" || r.Value[1] != "1" {
				t.Errorf("Prometheus read %+v, want test-math add = 1", r)
			}
			return
		}
	}
	_, targets := scrape(t, "http://"+addr+"/api/v1/targets", "")
	_, last := scrape(t, query, "")
	targets += "\nquery: " + last
	t.Fatalf("Prometheus never read packs_calls_total from %s; its targets: %s\n%s", target, targets, log.String())
}

func grepLines(s, substr string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, substr) {
			out = append(out, strings.TrimRight(l, "\n"))
		}
	}
	return strings.Join(out, "\n")
}

// TestMetricsAddrUsage: --metrics-addr serves what an HTTP server counts,
// so packs mcp refuses it over stdio; a bad address is a usage error.
func TestMetricsAddrUsage(t *testing.T) {
	home := t.TempDir()
	if r := withHome(t, home, "mcp", "--metrics-addr", "127.0.0.1:0"); r.code != exitUsage || !strings.Contains(r.stderr, "--http") {
		t.Errorf("packs mcp --metrics-addr without --http: exit %d, want %d naming --http\n%s", r.code, exitUsage, r.stderr)
	}
	if r := withHome(t, home, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1"); r.code != exitUsage || !strings.Contains(r.stderr, "--metrics-addr") {
		t.Errorf("packs serve --metrics-addr 127.0.0.1 (no port): exit %d, want %d naming the flag\n%s", r.code, exitUsage, r.stderr)
	}
}
