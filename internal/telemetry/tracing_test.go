package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/packs-run/packs/internal/telemetry"
)

// TestTracingFromEnv: the standard variables choose where spans go, with
// what headers; none, or OTEL_SDK_DISABLED, traces nothing; a bad endpoint
// is an error that does not repeat its credentials.
func TestTracingFromEnv(t *testing.T) {
	var mu sync.Mutex
	var got []string // path and Authorization of each export
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		env     map[string]string
		want    string // the export received, "" for none
		wantErr error
	}{
		{"nothing set", nil, "", nil},
		{"base endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL + "/", "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc"}, "/v1/traces Bearer abc", nil},
		{"traces endpoint wins, as is", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/custom"}, "/custom ", nil},
		{"disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_SDK_DISABLED": "true"}, "", nil},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_TRACES_EXPORTER": "none"}, "", nil},
		{"not http", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "grpc://user:hunter2@collector:4317"}, "", telemetry.ErrBadEndpoint},
		{"bad headers", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, "", errors.New("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			tr, err := telemetry.TracingFromEnv(func(k string) string { return tt.env[k] }, "test")
			if tt.wantErr != nil {
				if err == nil || (errors.Is(tt.wantErr, telemetry.ErrBadEndpoint) && !errors.Is(err, telemetry.ErrBadEndpoint)) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error repeats the endpoint's password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tr == nil) != (tt.want == "") {
				t.Fatalf("tracing = %v, want one: %v", tr, tt.want != "")
			}
			if tr == nil {
				return
			}
			_, sp := tr.Tracer().Start(context.Background(), "x")
			sp.End()
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("exports received: %q, want [%q]", got, tt.want)
			}
		})
	}
}
