package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
)

// The choices offered to the person in the elicitation form.
const (
	choiceRunOnce   = "run_once"
	choiceAllowChat = "allow_chat"
	choiceDeny      = "deny"
)

// maxShownArgs caps how much of a call's arguments the approval form shows.
const maxShownArgs = 2000

// elicitApprover asks the person behind an MCP client to approve one call,
// through elicitation/create. It exists only for clients that declared the
// elicitation capability; for the others the gate has no person to ask.
type elicitApprover struct {
	ss     *mcp.ServerSession
	client string // the client's name from initialize, for the audit
}

// canElicit reports whether the client behind ss declared form elicitation.
func canElicit(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && elicitsForms(ip.Capabilities)
}

// elicitsForms reports whether capabilities declare form elicitation.
func elicitsForms(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil // neither set means form, for backward compatibility
}

// clientName is the name the client gave in initialize, or "unknown".
func clientName(ss *mcp.ServerSession) string {
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
		return ip.ClientInfo.Name
	}
	return "unknown"
}

func (a elicitApprover) Name() string { return "mcp-elicitation:" + a.client }

// Approve shows the pending call and maps the person's answer to a verdict.
// Declining or dismissing the form denies.
func (a elicitApprover) Approve(ctx context.Context, p capability.Pending) (capability.Verdict, error) {
	res, err := a.ss.Elicit(ctx, approvalRequest(p))
	if err != nil {
		return capability.Deny, fmt.Errorf("mcpserver: asking %s for approval: %w", a.client, err)
	}
	return verdictOf(res), nil
}

// approvalRequest is the approval form for p.
func approvalRequest(p capability.Pending) *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: approvalMessage(p), RequestedSchema: approvalSchema}
}

// verdictOf maps the person's answer to the approval form to a verdict:
// anything but an accepted run_once or allow_chat (a decline, a dismissed
// form, no answer at all) denies.
func verdictOf(res *mcp.ElicitResult) capability.Verdict {
	if res == nil || res.Action != "accept" {
		return capability.Deny
	}
	switch res.Content["decision"] {
	case choiceRunOnce:
		return capability.RunOnce
	case choiceAllowChat:
		return capability.AllowChat
	}
	return capability.Deny
}

// Ask puts a guest's question (ask_person) to the person, through the same
// elicitation that approves calls, with the guest's own schema (already
// held to what elicitation allows by hostfns). The message says which tool
// asks, so a person can tell a tool's question from packs' own approval.
// The host checks the answer against the schema before the guest sees it.
func (a elicitApprover) Ask(ctx context.Context, q capability.Question) (capability.Answer, error) {
	res, err := a.ss.Elicit(ctx, questionRequest(q))
	if err != nil {
		return capability.Answer{}, fmt.Errorf("mcpserver: asking %s: %w", a.client, err)
	}
	return capability.Answer{Action: res.Action, Content: res.Content}, nil
}

// questionRequest is the form that puts a guest's question q.
func questionRequest(q capability.Question) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:            "form",
		Message:         fmt.Sprintf("The tool %s__%s (pack %s) asks: %s", q.Pack, q.Tool, q.Pack, q.Message),
		RequestedSchema: q.Schema,
	}
}

// approvalSchema is the one-field form: run once, allow for this chat, deny.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"decision": map[string]any{
			"type":        "string",
			"title":       "Decision",
			"description": "Run this call once, allow calls like it for the rest of this session, or deny it.",
			"enum":        []string{choiceRunOnce, choiceAllowChat, choiceDeny},
			"enumNames":   []string{"Run once", "Allow for this session", "Deny"},
			"default":     choiceDeny,
		},
	},
	"required": []string{"decision"},
}

// approvalMessage tells the person what will run and what it may touch.
func approvalMessage(p capability.Pending) string {
	var b strings.Builder
	fmt.Fprintf(&b, "packs: approve the call %s?", p.Class())
	if len(p.Arguments) > 0 {
		args := string(p.Arguments)
		if len(args) > maxShownArgs {
			cut := maxShownArgs
			for cut > 0 && !utf8.RuneStart(args[cut]) {
				cut--
			}
			args = args[:cut] + "…"
		}
		fmt.Fprintf(&b, "\narguments: %s", args)
	}
	if len(p.Capabilities) > 0 {
		names := make([]string, len(p.Capabilities))
		for i, n := range p.Capabilities {
			names[i] = string(n)
		}
		fmt.Fprintf(&b, "\ncapabilities it may use: %s", strings.Join(names, ", "))
	}
	if len(p.Touches) > 0 {
		fmt.Fprintf(&b, "\ntouches: %s", strings.Join(p.Touches, ", "))
	}
	return b.String()
}

// absentPerson stands in for the person behind a client that cannot ask
// them. It defers every call, so the gate denies it for want of an approver,
// and remembers being asked: then the policy had no answer, and the denial
// can say how to give it one.
type absentPerson struct {
	client string
	asked  bool
}

func (a *absentPerson) Name() string { return "mcp:" + a.client }

func (a *absentPerson) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	a.asked = true
	return capability.Deny, capability.ErrDefer
}
