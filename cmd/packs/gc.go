package main

import (
	"runtime/debug"
	"strings"
)

// oneShotGCPercent is the garbage collector's target for a command that does
// one thing and exits: the heap may grow to five times what is live (at
// least 20 MB) before a collection. Such a command allocates a few MB; at
// Go's default (100%, 4 MB) a cold packs run collected twice, and on two cores
// the collector's idle workers were a tenth of its CPU time
// (BenchmarkColdRun). Long-lived commands (serve, mcp, chat, ...) keep the
// default.
const oneShotGCPercent = 400

// oneShot lists the commands that run once and exit, and whose memory is
// bounded by what one call or one listing holds.
var oneShot = map[string]bool{"run": true, "list": true, "info": true, "validate": true}

// tuneGC raises the collector's target for a one-shot command, unless the
// person set GOGC. args are the command line without the program name.
func tuneGC(args []string, getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	if oneShotCommand(args) {
		debug.SetGCPercent(oneShotGCPercent)
	}
}

// oneShotCommand reports whether the command args name is one of oneShot: its
// first word that is neither a flag nor the value of --home or --policy.
func oneShotCommand(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--home" || a == "--policy":
			i++ // its value
		case a == "--":
			return false
		case strings.HasPrefix(a, "-"):
			// --home=DIR, --policy=FILE, or a flag of the command: the
			// command comes first, so a flag here is a global one.
		default:
			return oneShot[a]
		}
	}
	return false
}
