//go:build !linux

// Package supervisor is the confined side of package confine, on Linux
// only: elsewhere native commands are not confined (and not run).
package supervisor
