package hostfns

import (
	"errors"
	"slices"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestExtismFunctions: a group's host functions exist only when it is
// asked for; log, config, progress and ask (which checks ask_person at
// each question) are always there.
func TestExtismFunctions(t *testing.T) {
	always := []string{
		LogNamespace + ".log_trace", LogNamespace + ".log_debug", LogNamespace + ".log_info",
		LogNamespace + ".log_warn", LogNamespace + ".log_error", LogNamespace + ".get_log_level",
		ConfigNamespace + ".config_get", ProgressNamespace + ".progress", AskNamespace + ".ask",
	}
	for _, k := range []string{"alloc", "free", "load_u8", "input_load_u8", "store_u8", "input_set", "output_set", "input_length",
		"input_offset", "output_length", "output_offset", "length", "length_unsafe", "reset", "error_set", "error_get", "memory_bytes"} {
		always = append(always, KernelNamespace+"."+k)
	}
	network := []string{NetworkNamespace + ".http_request", NetworkNamespace + ".http_status_code", NetworkNamespace + ".http_headers", NetworkNamespace + ".http_truncated"}
	exec := []string{ExecNamespace + ".exec"}
	cases := []struct {
		groups []capability.Name
		want   []string
	}{
		{nil, always},
		{[]capability.Name{capability.FilesystemRead, capability.EnvRead}, always},
		{[]capability.Name{capability.Network}, slices.Concat(always, network)},
		{[]capability.Name{capability.TerminalExec, capability.Network, capability.Network}, slices.Concat(always, exec, network)},
	}
	for _, tc := range cases {
		var got []string
		for _, f := range ExtismFunctions(tc.groups) {
			got = append(got, f.Namespace+"."+f.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ExtismFunctions(%v) =\n%q\nwant\n%q", tc.groups, got, tc.want)
		}
	}
}

func TestRequire(t *testing.T) {
	c, rec := newCall(t, capability.Request{Network: []string{"localhost"}})
	if err := Require(c, []capability.Name{capability.Network}); err != nil {
		t.Fatalf("Require(network) with network granted: %v", err)
	}
	if len(rec.all()) != 0 {
		t.Fatalf("a held group was recorded: %s", dump(rec.all()))
	}
	err := Require(c, []capability.Name{capability.Network, capability.TerminalExec})
	var de *capability.DeniedError
	if !errors.As(err, &de) || de.Capability != capability.TerminalExec {
		t.Fatalf("Require(terminal_exec) without it: %v, want a terminal_exec denial", err)
	}
	requireRecorded(t, rec, capability.TerminalExec, ExecNamespace, false)
	if err := Require(c, []capability.Name{capability.EnvRead}); err == nil || errors.Is(err, capability.ErrDenied) {
		t.Fatalf("Require(env_read) = %v, want an error saying no host functions exist for it", err)
	}
	// secret_get exists, and serves only a grant that reveals a secret.
	if err := Require(c, []capability.Name{capability.SecretsAccess}); !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("Require(secrets_access) without a reveal grant = %v, want a denial", err)
	}
	c.Recorder = nil
	if err := Require(c, nil); !errors.Is(err, ErrNoRecorder) {
		t.Fatalf("Require without a recorder: %v, want ErrNoRecorder", err)
	}
}
