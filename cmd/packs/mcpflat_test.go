package main

import (
	"strings"
	"testing"
)

func TestMCPToolsNamesServedPacks(t *testing.T) {
	home := installedNotes(t)
	line := withHome(t, home, "mcp", "--tools", "notes,nope").mustCode(t, exitUsage).oneLineError(t)
	if !strings.Contains(line, "--tools nope") {
		t.Errorf("packs mcp --tools with a pack that is not served: %q", line)
	}
	line = withHome(t, home, "mcp", "--approval-timeout", "-1s").mustCode(t, exitUsage).oneLineError(t)
	if !strings.Contains(line, "--approval-timeout") {
		t.Errorf("a negative --approval-timeout: %q", line)
	}
}
