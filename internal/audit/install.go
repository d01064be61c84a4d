package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Install is one pack committed into the state directory: by packs add,
// update, bundle import, the web app or a built-in's first use (the
// installer in internal/app, the one place that commits).
type Install struct {
	Pack, Version, Source, Integrity string
	Resolved, Signer                 string
	Previous                         string   // the integrity it replaced; "" for a new install
	Granted                          []string // the person's grants, as packs grant writes them
	PreApproved                      []string // capabilities the enterprise policy grants it
	By                               string   // the front end: "packs add", "web", "builtin", ...; the row's client
	Person, Issuer                   string   // who installed (an OIDC subject and issuer); empty for the token holder
	Time                             time.Time
}

// installBody is the stored form of an install.
type installBody struct {
	Version     string   `json:"version,omitempty"`
	Source      string   `json:"source"`
	Integrity   string   `json:"integrity"`
	Resolved    string   `json:"resolved,omitempty"`
	Signer      string   `json:"signer,omitempty"`
	Previous    string   `json:"previous,omitempty"`
	Granted     []string `json:"granted"`
	PreApproved []string `json:"pre_approved,omitempty"`
	By          string   `json:"by"`
}

// RecordInstall appends one install and returns once it is durable.
func (l *Log) RecordInstall(ctx context.Context, in Install) error {
	b := installBody{Version: in.Version, Source: l.redact.Text(in.Source), Integrity: in.Integrity, Resolved: in.Resolved,
		Signer: in.Signer, Previous: in.Previous, Granted: in.Granted, PreApproved: in.PreApproved, By: in.By}
	if b.Granted == nil {
		b.Granted = []string{}
	}
	body, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("audit: install %s: %w", in.Pack, err)
	}
	_, err = l.append(ctx, row{kind: KindInstall, at: stamp(in.Time), pack: in.Pack, body: body, person: in.Person, issuer: in.Issuer, client: in.By})
	return err
}

// InstallSummary is the one-line summary of an install row's body, as
// packs audit prints it.
func InstallSummary(body json.RawMessage) string {
	var b installBody
	if json.Unmarshal(body, &b) != nil {
		return "(unreadable body)"
	}
	return installSummary(b)
}

func installSummary(b installBody) string {
	verb := "installed"
	if b.Previous != "" {
		verb = "updated"
	}
	s := fmt.Sprintf("%s %s from %s by %s (%s)", verb, orDash(b.Version), b.Source, b.By, b.Integrity)
	if b.Signer != "" {
		s += ", signed by " + b.Signer
	}
	s += ", granted: " + orNone(strings.Join(b.Granted, ", "))
	if len(b.PreApproved) > 0 {
		s += ", pre-approved: " + strings.Join(b.PreApproved, ", ")
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
