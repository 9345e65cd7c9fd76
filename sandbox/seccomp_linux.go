package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside namespace and bwrap sandboxes: the kernel interfaces a
// command has no business with, which widen the kernel's attack surface or would let it rebuild
// its view of the system (mounts, namespaces, tracing, keyrings, modules, BPF, perf, handles by
// inode). io_uring is among them whatever the network: its rings carry operations (open, connect,
// socket, ...) that the kernel performs without a system call this filter could see, so a filter
// that allowed it would judge only part of what a command does. Names this architecture lacks are
// left out.
var deniedSyscalls = []string{
	"acct", "add_key", "bpf", "chroot", "delete_module", "finit_module", "fsconfig", "fsmount",
	"fsopen", "fspick", "init_module", "io_uring_enter", "io_uring_register", "io_uring_setup",
	"ioperm", "iopl", "kexec_file_load", "kexec_load",
	"keyctl", "mount", "mount_setattr", "move_mount", "name_to_handle_at", "open_by_handle_at",
	"open_tree", "perf_event_open", "pivot_root", "process_vm_readv", "process_vm_writev",
	"ptrace", "quotactl", "reboot", "request_key", "setns", "swapoff", "swapon", "syslog",
	"umount2", "unshare", "userfaultfd",
}

// namespaceCloneFlags are the clone(2) flags that create namespaces: clone with any of them
// fails with EPERM. clone3 passes its flags in memory a filter cannot read, so it fails with
// ENOSYS, which makes the C library fall back to clone.
const namespaceCloneFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWCGROUP

// seccompPolicy is the filter: allow everything but the denied calls.
func seccompPolicy() (*seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	names := make([]string, 0, len(deniedSyscalls))
	for _, name := range deniedSyscalls {
		if _, ok := info.SyscallNames[name]; ok {
			names = append(names, name)
		}
	}
	return &seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: names, NamesWithCondtions: []seccomp.NameWithConditions{{
				Name:       "clone",
				Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceCloneFlags}},
			}}},
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}, nil
}

// loadSeccomp loads the filter program of a boundary with or without the network on the calling
// thread (no_new_privs, which it requires, is already set): the same program bwrap mode hands
// bwrap.
func loadSeccomp(network bool) error {
	raw, err := seccompFilter(network)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	err = unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0)
	runtime.KeepAlive(filter)
	return err
}

// seccompFilter is the filter program of both contained modes for a boundary with the network
// on or off, built once each: first an architecture check, then (network off) the AF_VSOCK check,
// then seccompPolicy as go-seccomp-bpf assembles it. The library's own program lets a system
// call of any other architecture through (on x86_64, the 32-bit int 0x80 ABI, whose numbers
// differ: its unshare or mount would pass the deny list), so a call whose seccomp_data arch is
// not this machine's native one kills the process before the policy is consulted.
func seccompFilter(network bool) ([]bpf.RawInstruction, error) {
	if network {
		return seccompFilters[1]()
	}
	return seccompFilters[0]()
}

// seccompFilters are the two programs of seccompFilter, without and with the network.
var seccompFilters = [2]func() ([]bpf.RawInstruction, error){
	sync.OnceValues(func() ([]bpf.RawInstruction, error) { return buildSeccompFilter(false) }),
	sync.OnceValues(func() ([]bpf.RawInstruction, error) { return buildSeccompFilter(true) }),
}

// buildSeccompFilter assembles one program of seccompFilter.
func buildSeccompFilter(network bool) ([]bpf.RawInstruction, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	policy, err := seccompPolicy()
	if err != nil {
		return nil, err
	}
	insts, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("assembling the seccomp policy: %w", err)
	}
	head := []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompDataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	}
	if !network {
		head = append(head, noVsock(info)...)
	}
	raw, err := bpf.Assemble(append(head, insts...))
	if err != nil {
		return nil, fmt.Errorf("assembling the seccomp program: %w", err)
	}
	return raw, nil
}

// noVsock refuses socket(AF_VSOCK, ...) with EPERM. A network namespace does not contain vsock:
// its sockets reach the hypervisor and the other virtual machines of the host whatever namespace
// the command is in, so a boundary without the network must not open one. socket's domain is an
// int, which the kernel takes from the low 32 bits of the register: the check reads only those
// (go-seccomp-bpf's conditions compare all 64, and a caller setting the high bits would pass
// them). It runs after the architecture check, so the number is native; the policy that follows
// loads what it needs itself.
func noVsock(info *arch.Info) []bpf.Instruction {
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompDataNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.SyscallNames["socket"]), SkipFalse: 3},
		bpf.LoadAbsolute{Off: seccompDataArgLow(0), Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_VSOCK, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	}
}

// The offsets in struct seccomp_data of the 32-bit system call number, the 32-bit arch, and the
// arguments (each 64 bits, after the number, the arch and the 64-bit instruction pointer).
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	seccompDataArgs = 16
)

// seccompDataArgLow is the offset of the low 32 bits of argument i in struct seccomp_data, which
// keeps each argument in the machine's byte order.
func seccompDataArgLow(i uint32) uint32 {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return seccompDataArgs + 8*i
	}
	return seccompDataArgs + 8*i + 4
}

// seccompProgram is the filter program of a boundary with or without the network as the struct
// sock_filter array bwrap's --seccomp reads (callers only write it out).
func seccompProgram(network bool) ([]byte, error) {
	raw, err := seccompFilter(network)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 8*len(raw))
	for _, ins := range raw {
		out = binary.NativeEndian.AppendUint16(out, ins.Op)
		out = append(out, ins.Jt, ins.Jf)
		out = binary.NativeEndian.AppendUint32(out, ins.K)
	}
	return out, nil
}

// probeSeccomp says whether the kernel loads seccomp filters.
func probeSeccomp() Support {
	if seccomp.Supported() {
		return Support{Available: true}
	}
	return Support{Reason: "the kernel has no seccomp filter support: it needs CONFIG_SECCOMP_FILTER"}
}
