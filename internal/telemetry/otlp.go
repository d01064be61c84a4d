package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// exporter sends spans over OTLP/HTTP in its binary protobuf encoding
// (OTLP 1.x, "OTLP/HTTP"): one POST of an ExportTraceServiceRequest per
// batch. It is ours, not otlptracehttp, because that one links the gRPC
// service definitions into the binary (RATIONALE.md, "Why our own OTLP
// exporter?"); the message is one repeated field, written here with
// protowire, and a test decodes it with the official type.
type exporter struct {
	url     string
	headers map[string]string
	client  *http.Client
}

func newExporter(url string, headers map[string]string) *exporter {
	return &exporter{url: url, headers: headers, client: &http.Client{Timeout: 10 * time.Second}}
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := encodeRequest(spans)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telemetry: otlp: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("telemetry: otlp: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("telemetry: otlp: %s answered %s: %s", e.url, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// Shutdown implements sdktrace.SpanExporter.
func (e *exporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// encodeRequest is spans as an ExportTraceServiceRequest: field 1,
// resource_spans, once per resource.
func encodeRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	var out []byte
	for _, rs := range resourceSpans(spans) {
		b, err := proto.Marshal(rs)
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp: %w", err)
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

// resourceSpans groups spans by resource, then by instrumentation scope,
// keeping their order.
func resourceSpans(spans []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	var out []*tracepb.ResourceSpans
	byRes := map[attribute.Distinct]*tracepb.ResourceSpans{}
	byScope := map[attribute.Distinct]map[string]*tracepb.ScopeSpans{}
	for _, s := range spans {
		key := s.Resource().Equivalent()
		rs, ok := byRes[key]
		if !ok {
			rs = &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: keyValues(s.Resource().Attributes())}, SchemaUrl: s.Resource().SchemaURL()}
			byRes[key], byScope[key] = rs, map[string]*tracepb.ScopeSpans{}
			out = append(out, rs)
		}
		is := s.InstrumentationScope()
		ss, ok := byScope[key][is.Name+"\x00"+is.Version]
		if !ok {
			ss = &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: is.Name, Version: is.Version}, SchemaUrl: is.SchemaURL}
			byScope[key][is.Name+"\x00"+is.Version] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, span(s))
	}
	return out
}

func span(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	out := &tracepb.Span{
		TraceId: tid[:], SpanId: sid[:], TraceState: sc.TraceState().String(),
		Name: s.Name(), Kind: tracepb.Span_SpanKind(s.SpanKind()),
		StartTimeUnixNano: uint64(s.StartTime().UnixNano()), EndTimeUnixNano: uint64(s.EndTime().UnixNano()),
		Attributes: keyValues(s.Attributes()), DroppedAttributesCount: uint32(s.DroppedAttributes()),
		Flags: uint32(sc.TraceFlags()),
	}
	if p := s.Parent(); p.HasSpanID() {
		psid := p.SpanID()
		out.ParentSpanId = psid[:]
	}
	for _, ev := range s.Events() {
		out.Events = append(out.Events, &tracepb.Span_Event{TimeUnixNano: uint64(ev.Time.UnixNano()), Name: ev.Name, Attributes: keyValues(ev.Attributes)})
	}
	st := s.Status()
	switch st.Code { // the two enums number their values differently
	case codes.Error:
		out.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: st.Description}
	case codes.Ok:
		out.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	}
	return out
}

func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.BOOLSLICE:
		return array(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return array(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return array(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return array(v.AsStringSlice(), attribute.StringValue)
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
}

func array[T any](xs []T, value func(T) attribute.Value) *commonpb.AnyValue {
	vals := make([]*commonpb.AnyValue, len(xs))
	for i, x := range xs {
		vals[i] = anyValue(value(x))
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}}
}
