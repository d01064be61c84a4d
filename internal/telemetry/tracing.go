// Package telemetry is what packs tells the systems a team monitors it
// with: traces of each call over OTLP/HTTP (Tracing), and Prometheus
// metrics (Metrics). The spans themselves are made in runtime.Pipeline,
// so every front end has them; this package only exports them.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ErrBadEndpoint is returned for an OTLP endpoint that is not an http or
// https URL.
var ErrBadEndpoint = errors.New("telemetry: bad OTLP endpoint")

// Tracing exports the spans of packs' calls over OTLP/HTTP. A nil
// *Tracing traces nothing.
type Tracing struct {
	tp *sdktrace.TracerProvider
}

// TracingConfig says where spans go.
type TracingConfig struct {
	// Endpoint is the URL spans are POSTed to, whole:
	// http://collector:4318/v1/traces.
	Endpoint string
	Headers  map[string]string // sent with each export (a collector's auth)
	Service  string            // service.name; "packs" when empty
	Version  string            // service.version
}

// TracingFromEnv reads the standard OpenTelemetry variables:
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the URL, whole) or
// OTEL_EXPORTER_OTLP_ENDPOINT (a base, to which /v1/traces is added),
// OTEL_EXPORTER_OTLP_(TRACES_)HEADERS ("k=v,k2=v2") and OTEL_SERVICE_NAME.
// With no endpoint, or OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none,
// it returns nil: nothing is traced, at no cost.
func TracingFromEnv(getenv func(string) string, version string) (*Tracing, error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, nil
	}
	cfg := TracingConfig{Endpoint: getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), Service: getenv("OTEL_SERVICE_NAME"), Version: version}
	if cfg.Endpoint == "" {
		base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		if base == "" {
			return nil, nil
		}
		cfg.Endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
	}
	headers := getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
	if headers == "" {
		headers = getenv("OTEL_EXPORTER_OTLP_HEADERS")
	}
	h, err := parseHeaders(headers)
	if err != nil {
		return nil, err
	}
	cfg.Headers = h
	return NewTracing(cfg)
}

// NewTracing starts exporting to cfg.Endpoint, in batches.
func NewTracing(cfg TracingConfig) (*Tracing, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w %q: want http(s)://HOST:PORT/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT takes the base, http://HOST:4318)", ErrBadEndpoint, redactURL(cfg.Endpoint))
	}
	if cfg.Service == "" {
		cfg.Service = "packs"
	}
	res := resource.NewSchemaless(attribute.String("service.name", cfg.Service), attribute.String("service.version", cfg.Version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(newExporter(cfg.Endpoint, cfg.Headers)), sdktrace.WithResource(res))
	return &Tracing{tp: tp}, nil
}

// Tracer is the tracer for runtime.PipelineConfig.Tracer; nil when t is.
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tp.Tracer("github.com/packs-run/packs")
}

// Shutdown exports the spans not yet sent and stops. It is a no-op on nil.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// parseHeaders reads "k=v,k2=v2", values percent-encoded (the
// OpenTelemetry specification's form).
func parseHeaders(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if !ok || k == "" || err != nil {
			return nil, fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_HEADERS: want key=value pairs separated by commas, found %q", k)
		}
		out[k] = val
	}
	return out, nil
}

// redactURL drops the user information of an endpoint for an error.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = url.User("REDACTED")
	return u.String()
}
