// Package examples holds the example packs. Each subfolder is a pack and its
// own Go or Rust module, built to WebAssembly by the Makefile here; this
// package only carries the end-to-end tests that load every pack with
// packs.Load and call each tool through the real runtime.
package examples
