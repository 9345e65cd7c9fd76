//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The escape suite's helper processes: the terminal host (a host process owning a terminal that
// runs one command) and the payload (what runs inside the sandbox for what a shell cannot do).

// escapeTerminalReport is what the terminal host prints.
type escapeTerminalReport struct {
	Exit   int    `json:"exit"`
	Output []byte `json:"output"`
	Error  string `json:"error,omitempty"`
}

// runEscapeTerminal is the terminal host: argv is the boundary (JSON), the workdir and the line.
// It is a session leader whose controlling terminal is the test's pty, as a Warren host started
// from a terminal is.
func runEscapeTerminal() {
	var b Boundary
	if len(os.Args) != 4 || json.Unmarshal([]byte(os.Args[1]), &b) != nil {
		fmt.Fprintln(os.Stderr, "usage: warren-escape-terminal boundary-json workdir line")
		os.Exit(2)
	}
	mgr := NewManager(os.Args[2], Probe(), b)
	o, err := mgr.Run(context.Background(), os.Args[3])
	_ = mgr.Close()
	report := escapeTerminalReport{Exit: o.ExitCode, Output: o.Output}
	if err != nil {
		report.Error = err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(report)
	os.Exit(0)
}

// runFromTerminal runs line through the terminal host and collects what reached the terminal.
func (r *escapeRun) runFromTerminal(b Boundary, line string) Outcome {
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		r.t.Fatalf("opening a pty: %v", err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		r.t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(master, unix.TIOCGPTN)
	if err != nil {
		r.t.Fatalf("naming the pty: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		r.t.Fatalf("opening the pty's terminal: %v", err)
	}
	defer slave.Close()
	boundary, err := json.Marshal(b)
	if err != nil {
		r.t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := &exec.Cmd{
		Path: r.suite.binary, Args: []string{escapeTerminalName, string(boundary), r.workdir, line},
		Stdin: slave, Stdout: &stdout, Stderr: &stderr,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0},
	}
	start := time.Now()
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("the terminal host: %v: %s", err, stderr.Bytes())
	}
	r.elapsed = time.Since(start)
	var report escapeTerminalReport
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		r.t.Fatalf("the terminal host's report %q: %v (%s)", stdout.Bytes(), err, stderr.Bytes())
	}
	o := Outcome{ExitCode: report.Exit, Output: report.Output, Boundary: b}
	if report.Error != "" {
		o.Err = errors.New(report.Error)
	}
	r.terminalOut = escapeReadReady(master)
	r.terminalIn = escapeReadReady(int(slave.Fd()))
	return o
}

// escapeReadReady reads what a terminal descriptor has ready, without waiting.
func escapeReadReady(fd int) []byte {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil
	}
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// escapePayloadActions are the payload's attempts, by name; each returns nil when it did what
// it tried (a gain it holds for escapeHold so that the host can see it).
var escapePayloadActions = map[string]func(args []string) error{
	"connect":      payloadConnect,
	"ptrace":       payloadPtrace,
	"readmem":      payloadReadMem,
	"mmap":         payloadMmap,
	"remount":      payloadRemount,
	"chroot":       payloadChroot,
	"setuid":       payloadSetuid,
	"keyctl":       payloadKeyctl,
	"bpf":          payloadBPF,
	"perf":         payloadPerf,
	"handle":       payloadHandle,
	"shm":          payloadShm,
	"tiocsti":      payloadTIOCSTI,
	"int80-keyctl": payloadInt80Keyctl,
	"io_uring":     payloadIOUring,
	"vsock":        payloadVsock,
}

// runEscapePayload is the payload's entry point: ./warren-escape-payload <action> <args...>.
func runEscapePayload() {
	if len(os.Args) < 2 || escapePayloadActions[os.Args[1]] == nil {
		fmt.Fprintf(os.Stderr, "usage: %s action args...\n", escapePayloadName)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "%s%s\n", escapePayloadBanner, os.Args[1])
	if err := escapePayloadActions[os.Args[1]](os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	os.Exit(0)
}

// payloadArgs checks an action's argument count.
func payloadArgs(args []string, n int) error {
	if len(args) < n {
		return fmt.Errorf("want %d arguments, have %d", n, len(args))
	}
	return nil
}

// payloadConnect: connect to a unix socket (a leading @ is abstract) and send the token.
func payloadConnect(args []string) error {
	if err := payloadArgs(args, 2); err != nil {
		return err
	}
	c, err := net.Dial("unix", args[0])
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = io.WriteString(c, args[1])
	return err
}

// payloadPtrace: attach to a pid and stay its tracer.
func payloadPtrace(args []string) error {
	if err := payloadArgs(args, 1); err != nil {
		return err
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	runtime.LockOSThread() // the tracer is this thread
	if err := unix.PtraceAttach(pid); err != nil {
		return fmt.Errorf("PTRACE_ATTACH %d: %w", pid, err)
	}
	time.Sleep(escapeHold)
	return unix.PtraceDetach(pid)
}

// payloadReadMem: print the printable strings of a pid's stack, read through /proc/<pid>/mem.
func payloadReadMem(args []string) error {
	if err := payloadArgs(args, 1); err != nil {
		return err
	}
	maps, err := os.ReadFile("/proc/" + args[0] + "/maps")
	if err != nil {
		return err
	}
	var start, end uint64
	for line := range strings.Lines(string(maps)) {
		if strings.HasSuffix(strings.TrimSpace(line), "[stack]") {
			_, err = fmt.Sscanf(line, "%x-%x", &start, &end)
		}
	}
	if err != nil || end <= start {
		return fmt.Errorf("no stack in the maps: %v", err)
	}
	mem, err := os.Open("/proc/" + args[0] + "/mem")
	if err != nil {
		return err
	}
	defer mem.Close()
	buf := make([]byte, end-start)
	n, err := mem.ReadAt(buf, int64(start))
	for _, s := range bytes.FieldsFunc(buf[:n], func(r rune) bool { return r < ' ' || r > '~' }) {
		if len(s) >= 6 {
			fmt.Printf("%s\n", s)
		}
	}
	if n == 0 {
		return err
	}
	return nil
}

// payloadMmap: map (without touching) more address space than RLIMIT_AS allows.
func payloadMmap(args []string) error {
	if err := payloadArgs(args, 1); err != nil {
		return err
	}
	size, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	if _, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE); err != nil {
		return fmt.Errorf("mmap %d bytes: %w", size, err)
	}
	time.Sleep(escapeHold)
	return nil
}

// payloadAppend appends the token to a file.
func payloadAppend(path, token string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(token + "\n")
	return errors.Join(err, f.Close())
}

// payloadRemount: clear the read-only flag of the mount at / (nothing else: in none mode this is
// the host's own root, already read-write), then write through it.
func payloadRemount(args []string) error {
	if err := payloadArgs(args, 2); err != nil {
		return err
	}
	remount := unix.MountSetattr(unix.AT_FDCWD, "/", 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
	return errors.Join(remount, payloadAppend(args[0], args[1]))
}

// payloadChroot: the classic chroot escape (chroot into a subdirectory, climb out of it, chroot
// to where the climb ended), then write a file.
func payloadChroot(args []string) error {
	if err := payloadArgs(args, 2); err != nil {
		return err
	}
	if err := os.MkdirAll("jail", 0o755); err != nil {
		return err
	}
	if err := unix.Chroot("jail"); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	for range 64 {
		_ = unix.Chdir("..")
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("chroot out: %w", err)
	}
	return payloadAppend(args[0], args[1])
}

// payloadSetuid: become uid 0 and hold it.
func payloadSetuid([]string) error {
	if err := syscall.Setresuid(0, 0, 0); err != nil {
		return fmt.Errorf("setresuid(0): %w", err)
	}
	time.Sleep(escapeHold)
	return nil
}

// payloadKeyctl: join a new session keyring named args[0] and hold it.
func payloadKeyctl(args []string) error {
	if err := payloadArgs(args, 1); err != nil {
		return err
	}
	if _, err := unix.KeyctlJoinSessionKeyring(args[0]); err != nil {
		return fmt.Errorf("keyctl: %w", err)
	}
	time.Sleep(escapeHold)
	return nil
}

// payloadBPF: create a BPF array map and hold its descriptor.
func payloadBPF([]string) error {
	attr := struct{ mapType, keySize, valueSize, maxEntries uint32 }{2, 4, 4, 1} // BPF_MAP_TYPE_ARRAY
	fd, _, errno := unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return fmt.Errorf("bpf: %w", errno)
	}
	time.Sleep(escapeHold)
	return unix.Close(int(fd))
}

// payloadPerf: open a perf event on itself and hold it.
func payloadPerf([]string) error {
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
		Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("perf_event_open: %w", err)
	}
	time.Sleep(escapeHold)
	return unix.Close(fd)
}

// payloadHandle: open a file by the handle the host computed (type, hex bytes), relative to the
// mount at /, and print it.
func payloadHandle(args []string) error {
	if err := payloadArgs(args, 2); err != nil {
		return err
	}
	typ, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	raw, err := hex.DecodeString(args[1])
	if err != nil {
		return err
	}
	root, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	fd, err := unix.OpenByHandleAt(root, unix.NewFileHandle(int32(typ), raw), unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_by_handle_at: %w", err)
	}
	f := os.NewFile(uintptr(fd), "handle")
	defer f.Close()
	_, err = io.Copy(os.Stdout, f)
	return err
}

// payloadShm: attach the SysV shared memory segment with a key and print it.
func payloadShm(args []string) error {
	if err := payloadArgs(args, 1); err != nil {
		return err
	}
	key, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	id, err := unix.SysvShmGet(key, 0, 0)
	if err != nil {
		return fmt.Errorf("shmget: %w", err)
	}
	mem, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
	if err != nil {
		return fmt.Errorf("shmat: %w", err)
	}
	fmt.Printf("%s\n", bytes.TrimRight(mem, "\x00"))
	return unix.SysvShmDetach(mem)
}

// payloadTIOCSTI: write to the controlling terminal and push the token into its input, as if
// typed at the host's prompt.
func payloadTIOCSTI(args []string) error {
	if err := payloadArgs(args, 1); err != nil {
		return err
	}
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the controlling terminal: %w", err)
	}
	defer unix.Close(fd)
	_, werr := unix.Write(fd, []byte("wrote-"+args[0]+"\n"))
	var ierr error
	for _, c := range []byte(args[0] + "\n") {
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))); errno != 0 {
			ierr = fmt.Errorf("TIOCSTI: %w", errno)
			break
		}
	}
	return errors.Join(werr, ierr)
}

// payloadInt80Keyctl: keyctl(KEYCTL_JOIN_SESSION_KEYRING, name) through the 32-bit system call
// ABI (int 0x80), which a filter checking only the 64-bit architecture does not see; then hold.
// A kernel without 32-bit emulation kills the payload with SIGSEGV.
func payloadInt80Keyctl(args []string) error {
	if err := payloadArgs(args, 1); err != nil {
		return err
	}
	page, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_32BIT)
	if err != nil {
		return err
	}
	const nameAt = 256
	copy(page[nameAt:], args[0]+"\x00")
	base := uint32(uintptr(unsafe.Pointer(&page[0])))
	// mov eax, 288 (i386 keyctl); mov ebx, 1 (JOIN_SESSION_KEYRING); mov ecx, name; int 0x80; ret
	code := binary.LittleEndian.AppendUint32([]byte{0xb8}, 288)
	code = binary.LittleEndian.AppendUint32(append(code, 0xbb), 1)
	code = binary.LittleEndian.AppendUint32(append(code, 0xb9), base+nameAt)
	copy(page, append(code, 0xcd, 0x80, 0xc3))
	entry := uintptr(unsafe.Pointer(&page[0]))
	closure := &entry
	call := *(*func() uintptr)(unsafe.Pointer(&closure))
	if ret := int32(call()); ret < 0 {
		return fmt.Errorf("int 0x80 keyctl: %w", syscall.Errno(-ret))
	}
	time.Sleep(escapeHold)
	return nil
}

// payloadIOUring: set up an io_uring instance and hold its descriptor.
func payloadIOUring([]string) error {
	var params [120]byte // struct io_uring_params, zeroed: the kernel's defaults
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
	if errno != 0 {
		return fmt.Errorf("io_uring_setup: %w", errno)
	}
	time.Sleep(escapeHold)
	return unix.Close(int(fd))
}

// payloadVsock: open an AF_VSOCK stream socket and hold it.
func payloadVsock([]string) error {
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket(AF_VSOCK): %w", err)
	}
	time.Sleep(escapeHold)
	return unix.Close(fd)
}
