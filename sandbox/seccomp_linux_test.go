package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func TestSeccompProgram(t *testing.T) {
	for _, network := range []bool{false, true} {
		prog, err := seccompProgram(network)
		if err != nil {
			t.Fatalf("seccompProgram(%v): %v", network, err)
		}
		if len(prog) == 0 || len(prog)%8 != 0 || len(prog) > 4096 {
			t.Errorf("network %v: program of %d bytes, want whole sock_filter entries under a page", network, len(prog))
		}
	}
	policy, err := seccompPolicy()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"unshare", "mount", "ptrace", "io_uring_setup", "io_uring_enter", "io_uring_register"} {
		if names := policy.Syscalls[0].Names; !slices.Contains(names, name) {
			t.Errorf("denied calls %v lack %s", names, name)
		}
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

// TestSeccompFilterVerdicts runs the programs both contained modes load, with the network off and
// on (decoded from the bytes bwrap reads), in x/net/bpf's VM: the policy's verdicts on this
// machine's system calls, the AF_VSOCK check's, and the architecture check's on every other ABI,
// which go-seccomp-bpf alone lets through.
func TestSeccompFilterVerdicts(t *testing.T) {
	for _, network := range []bool{false, true} {
		t.Run("network="+onOff(network), func(t *testing.T) { testSeccompVerdicts(t, network) })
	}
}

func testSeccompVerdicts(t *testing.T, network bool) {
	raw, err := seccompFilter(network)
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := seccompProgram(network)
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
	vsock := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	if network {
		vsock = unix.SECCOMP_RET_ALLOW
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
		{"io_uring_setup is denied", seccompData(call(native, "io_uring_setup"), native.ID, 8, 0), eperm},
		{"io_uring_enter is denied", seccompData(call(native, "io_uring_enter"), native.ID, 3, 1, 0, 0), eperm},
		{"io_uring_register is denied", seccompData(call(native, "io_uring_register"), native.ID, 3, 0, 0, 0), eperm},
		{"an IPv4 socket is allowed", seccompData(call(native, "socket"), native.ID, unix.AF_INET, unix.SOCK_STREAM), allow},
		{"a unix socket is allowed", seccompData(call(native, "socket"), native.ID, unix.AF_UNIX, unix.SOCK_STREAM), allow},
		{"a vsock socket", seccompData(call(native, "socket"), native.ID, unix.AF_VSOCK, unix.SOCK_STREAM), vsock},
		// The kernel reads the domain, an int, from the low 32 bits: high bits change nothing.
		{"a vsock socket with high bits set", seccompData(call(native, "socket"), native.ID, 0xdead_beef<<32|unix.AF_VSOCK, unix.SOCK_STREAM), vsock},
		{"getpid with AF_VSOCK as its first argument is allowed", seccompData(call(native, "getpid"), native.ID, unix.AF_VSOCK), allow},
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

// TestSeccompRealAttempts runs the escape suite's payload under both contained modes, with the
// network off and on: io_uring is refused whatever the network, an AF_VSOCK socket only with the
// network off (a network namespace does not contain vsock; with the network on the command may
// reach the network anyway).
func TestSeccompRealAttempts(t *testing.T) {
	t.Parallel()
	binary, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	// One copy, written before any command starts (a file open for writing while another
	// goroutine forks can be "text file busy" when run), linked into each workdir.
	payload := filepath.Join(t.TempDir(), escapePayloadName)
	if err := os.WriteFile(payload, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range containedModes {
		for _, network := range []bool{false, true} {
			t.Run(m.String()+"/network="+onOff(network), func(t *testing.T) {
				t.Parallel()
				mgr := newTestManager(t, m, func(b *Boundary) { b.Network = network })
				if err := os.Link(payload, filepath.Join(mgr.workdir, escapePayloadName)); err != nil {
					t.Fatal(err)
				}
				for _, tc := range []struct {
					action  string
					refused bool
				}{{"io_uring", true}, {"vsock", !network}} {
					o, err := mgr.Run(context.Background(), `env PATH="$PWD:$PATH" `+escapePayloadName+" "+tc.action+" "+marker())
					if err != nil {
						t.Fatalf("%s: %v", tc.action, err)
					}
					got := strings.Contains(string(o.Output), "operation not permitted")
					if !bytes.Contains(o.Output, []byte(escapePayloadBanner)) || got != tc.refused || (o.ExitCode == 0) == tc.refused {
						t.Errorf("%s: exit %d, output %q; want refused=%v", tc.action, o.ExitCode, o.Output, tc.refused)
					}
				}
			})
		}
	}
}
