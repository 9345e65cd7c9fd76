package sandbox

import (
	"encoding/binary"
	"fmt"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside namespace and bwrap sandboxes: the kernel interfaces a
// command has no business with, which widen the kernel's attack surface or would let it rebuild
// its view of the system (mounts, namespaces, tracing, keyrings, modules, BPF, perf, handles by
// inode). Names this architecture lacks are left out.
var deniedSyscalls = []string{
	"acct", "add_key", "bpf", "chroot", "delete_module", "finit_module", "fsconfig", "fsmount",
	"fsopen", "fspick", "init_module", "ioperm", "iopl", "kexec_file_load", "kexec_load",
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

// loadSeccomp loads the filter on the calling thread (with no_new_privs, which it requires).
func loadSeccomp() error {
	policy, err := seccompPolicy()
	if err != nil {
		return err
	}
	return seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Policy: *policy})
}

// seccompProgram is the filter compiled to the struct sock_filter array bwrap's --seccomp reads,
// built once.
var seccompProgram = sync.OnceValues(func() ([]byte, error) {
	policy, err := seccompPolicy()
	if err != nil {
		return nil, err
	}
	insts, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("assembling the seccomp policy: %w", err)
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return nil, fmt.Errorf("assembling the seccomp program: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, ins := range raw {
		out = binary.NativeEndian.AppendUint16(out, ins.Op)
		out = append(out, ins.Jt, ins.Jf)
		out = binary.NativeEndian.AppendUint32(out, ins.K)
	}
	return out, nil
})

// probeSeccomp says whether the kernel loads seccomp filters.
func probeSeccomp() Support {
	if seccomp.Supported() {
		return Support{Available: true}
	}
	return Support{Reason: "the kernel has no seccomp filter support: it needs CONFIG_SECCOMP_FILTER"}
}
