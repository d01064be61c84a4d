package hostfns

import "path/filepath"

// ProbeWasm gives the external tests (e2e_test.go) the probe variant built
// by TestMain, or why there is none.
func ProbeWasm(variant string) ([]byte, error) { return probes[variant], probeErr }

// E2ECacheDir is a compilation cache directory that lives as long as the
// test binary.
func E2ECacheDir() string { return filepath.Join(testDir, "e2e-cache") }
