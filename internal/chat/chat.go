// Package chat is the orchestrator: it lets a model use the packs a person
// attached to a chat, one approved step at a time.
//
// A Session is one chat. It holds the Active Pack Set (spec 000 §5), the
// conversation, the chat's workspace and the base tools (open_docs,
// read_file, enable_tools, exec_best_effort). Every tool call, base or pack,
// goes through Session.Call: the arguments are checked, the gate asks an
// approver, the call runs, and the audit log records it. The model loop
// (Session.Send) and the MCP server both drive the same Session.
//
// Progressive disclosure: the model first sees only each pack's metadata;
// it opens docs, reads files and enables tools by calling base tools, and a
// pack's tools are offered from the request after enable_tools on.
package chat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

var (
	// ErrNotFound: no chat, or no pack, of that name.
	ErrNotFound = errors.New("chat: not found")
	// ErrMandated: the policy mandates the pack, so it cannot be detached.
	ErrMandated = errors.New("chat: pack is mandated by the policy")
	// ErrToolBudget: the tools offered to the model exceed what the provider
	// accepts. *BudgetError says which packs to detach.
	ErrToolBudget = errors.New("chat: too many tools for the provider")
	// ErrUnknownTool: the model called a tool that is not offered.
	ErrUnknownTool = errors.New("chat: unknown tool")
	// ErrBadArguments: the arguments do not fit the tool.
	ErrBadArguments = errors.New("chat: bad arguments")
)

// Catalog finds the packs a person may attach.
type Catalog interface {
	// Pack loads the pack called name, checked and ready to use, with the
	// reference (name and digest) that grants and policy are keyed by. It
	// returns an error wrapping ErrNotFound when there is no such pack.
	Pack(ctx context.Context, name string) (*packs.Pack, capability.PackRef, error)
}

// Deps are the components a Session works with. Store, Catalog, Pipeline
// and Workspaces are required; Logger may be nil. The enterprise policy is
// the pipeline's.
type Deps struct {
	Store   *store.DB
	Catalog Catalog
	// Pipeline runs every call, base tools included: gate, grant,
	// integrity, invoke, audit.
	Pipeline *runtime.Pipeline
	// Workspaces is the directory that holds one workspace per chat.
	Workspaces string
	Logger     *slog.Logger
}

func (d Deps) check() error {
	switch {
	case d.Store == nil:
		return errors.New("chat: no store")
	case d.Catalog == nil:
		return errors.New("chat: no pack catalog")
	case d.Pipeline == nil:
		return errors.New("chat: no pipeline: every call runs through one")
	case d.Workspaces == "":
		return errors.New("chat: no workspaces directory")
	}
	return nil
}

// newID returns a random identifier with a prefix: "chat_…", "inv_…".
func newID(prefix string) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
