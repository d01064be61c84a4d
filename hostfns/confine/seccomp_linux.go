//go:build linux && (amd64 || arm64)

package confine

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls are refused (EPERM) to every confined command: no tool
// needs them, and each is a way around the confinement or into the kernel's
// less travelled code: tracing and reading other processes, mounting,
// loading programs or modules into the kernel, its keyrings, new
// namespaces, io_uring (whose operations are not seen by seccomp), and the
// machine's clock, swap and power. archDenied adds each architecture's own.
var deniedSyscalls = append([]uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD, unix.SYS_FANOTIFY_INIT,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_SYSLOG, unix.SYS_ACCT, unix.SYS_QUOTACTL,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_VHANGUP,
}, archDenied...)

// namespaceFlags are the clone flags that make a namespace.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// offsets into struct seccomp_data
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits, little-endian
	offArg1 = 24
)

func seccompSupported() bool {
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil
}

// filter is the seccomp program. noIP refuses IP and packet sockets (no
// network namespace to hold the command); streamOnly then lets TCP
// sockets through for the proxy (Landlock decides their port).
func filter(noIP, streamOnly bool) ([]bpf.RawInstruction, error) {
	deny := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	nr := bpf.LoadAbsolute{Off: offNr, Size: 4}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
		nr,
	}
	prog = append(prog, archPrologue...)
	for _, n := range deniedSyscalls {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(n), SkipFalse: 1}, deny)
	}
	// clone3 takes its flags in memory seccomp cannot read: ENOSYS makes
	// the C libraries fall back to clone, whose flags it can.
	prog = append(prog,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CLONE3, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CLONE, SkipFalse: 3},
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: namespaceFlags, SkipFalse: 1},
		deny,
		nr,
	)
	if noIP {
		// socket(domain, type, ...): packet sockets never; IP sockets never,
		// or (streamOnly) only of type SOCK_STREAM.
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKET, SkipFalse: 9},
			bpf.LoadAbsolute{Off: offArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_PACKET, SkipFalse: 1},
			deny,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET, SkipTrue: 1},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET6, SkipFalse: 4},
		)
		if streamOnly {
			prog = append(prog,
				bpf.LoadAbsolute{Off: offArg1, Size: 4},
				bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xff},
				bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_STREAM, SkipTrue: 1},
				deny,
			)
		} else {
			prog = append(prog, deny, deny, deny, deny)
		}
		prog = append(prog, nr)
	}
	prog = append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	return bpf.Assemble(prog)
}
