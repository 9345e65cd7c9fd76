package sandbox

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func TestSeccompProgram(t *testing.T) {
	prog, err := seccompProgram()
	if err != nil {
		t.Fatalf("seccompProgram: %v", err)
	}
	if len(prog) == 0 || len(prog)%8 != 0 || len(prog) > 4096 {
		t.Errorf("program of %d bytes, want whole sock_filter entries under a page", len(prog))
	}
	policy, err := seccompPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if names := policy.Syscalls[0].Names; !slices.Contains(names, "unshare") || !slices.Contains(names, "mount") || !slices.Contains(names, "ptrace") {
		t.Errorf("denied calls %v", names)
	}
}

// compatArch is the other system call ABI each supported architecture's kernel may accept from
// a process: x86_64's i386 (int 0x80), arm64's 32-bit arm.
var compatArch = map[arch.AuditArch]*arch.Info{arch.X86_64.ID: arch.I386, arch.AARCH64.ID: arch.ARM}

// seccompData is struct seccomp_data as the filter sees it, laid out for x/net/bpf's VM: the VM
// loads 32-bit words big-endian where the kernel loads them in the machine's order, so each word
// is written big-endian at the offset where the kernel keeps it (a 64-bit argument's low word
// first on a little-endian machine).
func seccompData(nr uint32, auditArch arch.AuditArch, args ...uint64) []byte {
	buf := make([]byte, 64)
	binary.BigEndian.PutUint32(buf[0:], nr)
	binary.BigEndian.PutUint32(buf[4:], uint32(auditArch))
	lowFirst := binary.NativeEndian.Uint16([]byte{1, 0}) == 1
	for i, a := range args {
		lo, hi := uint32(a), uint32(a>>32)
		if !lowFirst {
			lo, hi = hi, lo
		}
		binary.BigEndian.PutUint32(buf[16+8*i:], lo)
		binary.BigEndian.PutUint32(buf[16+8*i+4:], hi)
	}
	return buf
}

// TestSeccompFilterVerdicts runs the program both contained modes load (decoded from the bytes
// bwrap reads) in x/net/bpf's VM: the policy's verdicts on this machine's system calls, and the
// architecture check's on every other ABI, which go-seccomp-bpf alone lets through.
func TestSeccompFilterVerdicts(t *testing.T) {
	raw, err := seccompFilter()
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	decoded := make([]bpf.Instruction, len(encoded)/8)
	for i := range decoded {
		ins := encoded[8*i:]
		r := bpf.RawInstruction{Op: binary.NativeEndian.Uint16(ins), Jt: ins[2], Jf: ins[3], K: binary.NativeEndian.Uint32(ins[4:])}
		if r != raw[i] {
			t.Fatalf("instruction %d: bwrap reads %+v, the namespace mode loads %+v", i, r, raw[i])
		}
		decoded[i] = r.Disassemble()
	}
	vm, err := bpf.NewVM(decoded)
	if err != nil {
		t.Fatalf("the VM refuses the program: %v", err)
	}
	native, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	compat := compatArch[native.ID]
	if compat == nil {
		t.Fatalf("no compat ABI known for %s: add it to compatArch", native.Name)
	}
	const (
		allow = unix.SECCOMP_RET_ALLOW
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosy = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill  = unix.SECCOMP_RET_KILL_PROCESS
	)
	call := func(info *arch.Info, name string) uint32 {
		nr, ok := info.SyscallNames[name]
		if !ok {
			t.Fatalf("%s has no %s", info.Name, name)
		}
		return uint32(nr)
	}
	cases := []struct {
		name string
		data []byte
		want uint32
	}{
		{"native getpid is allowed", seccompData(call(native, "getpid"), native.ID), allow},
		{"native unshare is denied", seccompData(call(native, "unshare"), native.ID), eperm},
		{"native mount is denied", seccompData(call(native, "mount"), native.ID), eperm},
		{"native keyctl is denied", seccompData(call(native, "keyctl"), native.ID), eperm},
		{"native clone of a thread is allowed", seccompData(call(native, "clone"), native.ID, unix.CLONE_VM|unix.CLONE_THREAD), allow},
		{"native clone into a user namespace is denied", seccompData(call(native, "clone"), native.ID, unix.CLONE_NEWUSER), eperm},
		{"native clone3 is not there", seccompData(call(native, "clone3"), native.ID), enosy},
		{compat.Name + " unshare kills", seccompData(call(compat, "unshare"), compat.ID), kill},
		{compat.Name + " mount kills", seccompData(call(compat, "mount"), compat.ID), kill},
		{compat.Name + " keyctl kills", seccompData(call(compat, "keyctl"), compat.ID), kill},
		{compat.Name + " getpid kills too: the whole ABI is out", seccompData(call(compat, "getpid"), compat.ID), kill},
		{"an unknown architecture kills", seccompData(call(native, "getpid"), 0), kill},
	}
	if native.ID == arch.X86_64.ID {
		// x32 shares x86_64's arch value; its numbers carry __X32_SYSCALL_BIT.
		cases = append(cases, struct {
			name string
			data []byte
			want uint32
		}{"x32 unshare is not there", seccompData(uint32(arch.X32.SeccompMask)|call(arch.X32, "unshare"), native.ID), enosy})
	}
	for _, tc := range cases {
		got, err := vm.Run(tc.data)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if uint32(got) != tc.want {
			t.Errorf("%s: verdict %#x, want %#x", tc.name, uint32(got), tc.want)
		}
	}
}
