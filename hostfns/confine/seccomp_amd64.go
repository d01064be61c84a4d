//go:build linux

package confine

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const auditArch = unix.AUDIT_ARCH_X86_64

// archDenied: the port and LDT-free I/O privileges, the old sysctl and
// shared-library loader.
var archDenied = []uintptr{unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS__SYSCTL, unix.SYS_USELIB}

// archPrologue refuses the x32 system calls (numbers with bit 30 set),
// which would otherwise pass every check below under other numbers.
var archPrologue = []bpf.Instruction{
	bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: 0x40000000, SkipFalse: 1},
	bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
}
