package audit

import (
	"context"

	"github.com/packs-run/packs/capability"
)

var _ capability.Auditor = (*Log)(nil)

// RecordCall implements capability.Auditor: the pipeline's record of one
// call, stored as an invocation row.
func (l *Log) RecordCall(ctx context.Context, r capability.CallRecord) error {
	inv := Invocation{
		ID: r.Invocation, Chat: r.Chat, Pack: r.Pack, Tool: r.Tool, Client: r.Client, Person: r.Person, Issuer: r.Issuer,
		Arguments: r.Arguments, Output: r.Output, Approver: r.Approver, Verdict: r.Verdict, Remembered: r.Remembered, ByAttach: r.ByAttach,
		Reason: r.Reason, Started: r.Started, Finished: r.Finished, Waited: r.Waited, Ran: r.Ran, ExitCode: r.ExitCode, Status: r.Status,
	}
	for _, a := range r.Artifacts {
		inv.Artifacts = append(inv.Artifacts, Artifact{Path: a.Path, MIME: a.MIME, Size: a.Size})
	}
	_, err := l.RecordInvocation(ctx, inv)
	return err
}
