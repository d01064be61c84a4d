package capability

import (
	"context"
	"encoding/json"
	"time"
)

// Status is how a call ended, as the audit log and every front end name it.
type Status string

const (
	StatusOK           Status = "ok"            // the tool ran and succeeded
	StatusToolError    Status = "tool_error"    // the tool ran and failed
	StatusDenied       Status = "denied"        // the gate or a capability said no
	StatusInvalidInput Status = "invalid_input" // the arguments failed the schema
	StatusLimit        Status = "limit"         // time, memory or output limit
	StatusError        Status = "error"         // the runtime failed
)

// Artifact is a file a call left in its workspace.
type Artifact struct {
	Path string `json:"path"` // relative to the workspace
	MIME string `json:"mime,omitempty"`
	Size int64  `json:"size"`
}

// CallRecord is the audit record of one call, written once, when it ends,
// whatever the outcome.
type CallRecord struct {
	Invocation, Chat, Pack, Tool string
	Client                       string // the MCP client or web session that made the call
	Person, Issuer               string // the OIDC subject and issuer who made it; empty for the token holder
	Arguments                    json.RawMessage
	Output                       []byte
	Approver                     string
	Verdict                      Verdict
	Remembered                   bool   // approved by the chat's "allow for this chat"
	ByAttach                     bool   // approved by the person's attaching the pack (Consent)
	Status                       Status // how it ended
	Reason                       string // why it was denied or failed
	Started, Finished            time.Time
	Waited, Ran                  time.Duration // the gate's wait for a decision; the approved call's run
	ExitCode                     int
	Artifacts                    []Artifact
}

// Auditor is the audit log: it records every capability exercise and the
// outcome of every call. A call whose record cannot be written fails.
type Auditor interface {
	Recorder
	RecordCall(ctx context.Context, r CallRecord) error
}

// GrantSource returns what the person granted a pack, as seen from a chat
// (grants scoped to another chat are not included; chat is empty outside
// one).
type GrantSource interface {
	// PeekGrants returns the grants without spending "once" grants, to show
	// the person what a call may touch before it is approved.
	PeekGrants(ctx context.Context, ref PackRef, chat string) ([]UserGrant, error)
	// TakeGrants returns the grants for one approved call, spending the
	// "once" grants among them.
	TakeGrants(ctx context.Context, ref PackRef, chat string) ([]UserGrant, error)
}
