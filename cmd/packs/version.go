package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// buildVersion is the version set at link time:
//
//	go build -ldflags "-X main.buildVersion=v1.2.3" ./cmd/packs
//
// (make build sets it from VERSION, by default git describe).
var buildVersion string

// version is the one version of packs: the one --version prints and MCP
// clients and the web app are told. It is buildVersion when set, else the
// module version of a binary built with go install module@version, else
// "dev".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// reportedModules are the modules whose versions --version prints: the ones
// that run tools and speak MCP.
var reportedModules = []string{
	"github.com/tetratelabs/wazero",
	"github.com/extism/go-sdk",
	"github.com/modelcontextprotocol/go-sdk",
}

// versionText is what packs --version prints: the version, the Go
// toolchain, then "MODULE VERSION" for each reported module.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "packs %s\n%s %s/%s\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	deps := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil {
				v = d.Replace.Version + " (replaced by " + d.Replace.Path + ")"
			}
			deps[d.Path] = v
		}
	}
	for _, m := range reportedModules {
		v := deps[m]
		if v == "" {
			v = "(unknown)"
		}
		fmt.Fprintf(&b, "%s %s\n", m, v)
	}
	return b.String()
}
