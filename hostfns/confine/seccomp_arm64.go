//go:build linux

package confine

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const auditArch = unix.AUDIT_ARCH_AARCH64

var archDenied []uintptr

var archPrologue []bpf.Instruction
