package runtime

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/packs-run/packs/capability"
)

// The stages of a call, each a span under the call's span when the
// pipeline traces (PipelineConfig.Tracer), in the order a call passes them.
const (
	SpanCall      = "packs.call"
	SpanValidate  = "validate"
	SpanGate      = "gate"
	SpanGrant     = "grant"
	SpanIntegrity = "integrity"
	SpanInvoke    = "invoke"
	SpanAudit     = "audit"
)

// The attributes of a call's span. They name the call and how it ended;
// never its arguments, its output or a secret (a test holds every span to
// that), and an error's text only as its Ending's name: an error may quote
// what the call was given.
const (
	AttrPack       = attribute.Key("packs.pack")
	AttrTool       = attribute.Key("packs.tool")
	AttrInvocation = attribute.Key("packs.invocation")
	AttrClient     = attribute.Key("packs.client")
	AttrDecision   = attribute.Key("packs.decision")
	AttrApprover   = attribute.Key("packs.approver")
	AttrStatus     = attribute.Key("packs.status")
	AttrDeniedBy   = attribute.Key("packs.denied_by")
)

// CallObserver is told how each call of a Pipeline ended, once its audit
// record is written: for metrics (PipelineConfig.Observer).
type CallObserver interface {
	CallEnded(pack, tool string, o Outcome)
}

// DeniedBy is who refused a call that ended denied: the layer of its
// capability.DeniedError (policy, user, request, gate), "integrity" for a
// pack whose files changed, "" for a call that was not denied.
func DeniedBy(err error) string {
	var de *capability.DeniedError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &de):
		return string(de.Layer)
	case EndingOf(err).Status == capability.StatusDenied:
		return "integrity"
	}
	return ""
}

// stage starts the span of one stage of a call, a child of the call's span
// in ctx, and returns the function that ends it with the stage's error.
// When nothing records the call (no tracer, or a trace not sampled), it
// starts nothing and allocates nothing.
func stage(ctx context.Context, name string) func(error) {
	t, ok := ctx.Value(tracerKey{}).(trace.Tracer)
	if !ok || !trace.SpanFromContext(ctx).IsRecording() {
		return noEnd
	}
	_, sp := t.Start(ctx, name)
	return func(err error) { endSpan(sp, err) }
}

func noEnd(error) {}

// tracerKey holds, in a traced call's context, the tracer its stages'
// spans are started with (the pipeline's).
type tracerKey struct{}

// endSpan ends sp, marking it failed with the error's Ending name (never
// its text).
func endSpan(sp trace.Span, err error) {
	if err != nil {
		e := EndingOf(err)
		sp.SetStatus(codes.Error, e.Name)
		sp.SetAttributes(AttrStatus.String(string(e.Status)))
	}
	sp.End()
}

// startCall starts the span of one call with the pipeline's tracer; with
// none, ctx is returned as it is.
func (p *Pipeline) startCall(ctx context.Context, req Request, id string) (context.Context, trace.Span) {
	if p.cfg.Tracer == nil {
		return ctx, nil
	}
	tool := req.Tool
	if req.Builtin != nil {
		tool = req.Builtin.Name
	}
	ctx = context.WithValue(ctx, tracerKey{}, p.cfg.Tracer)
	return p.cfg.Tracer.Start(ctx, SpanCall, trace.WithAttributes(
		AttrPack.String(req.Ref.Name), AttrTool.String(tool), AttrInvocation.String(id), AttrClient.String(req.Client)))
}

// endCall ends the call's span (nil when not traced) with how it ended.
func endCall(sp trace.Span, o Outcome, rec capability.CallRecord) {
	if sp == nil {
		return
	}
	sp.SetAttributes(AttrStatus.String(string(o.Status)), AttrDecision.String(rec.Verdict.String()), AttrApprover.String(rec.Approver))
	if by := DeniedBy(o.Err); by != "" {
		sp.SetAttributes(AttrDeniedBy.String(by))
	}
	if o.Err != nil {
		sp.SetStatus(codes.Error, EndingOf(o.Err).Name)
	}
	sp.End()
}
