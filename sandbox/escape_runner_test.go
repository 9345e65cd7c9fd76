//go:build linux

package sandbox

// The escape suite (issue 6): real commands try to get out of each mode, and the host, never the
// command, decides whether they did. Every attempt runs in every mode; each says which modes claim
// to stop it on this machine (escapeClaim). A claimed escape fails the test with the attempt, the
// mode, the command and the evidence; an unclaimed one is counted in the report that
// `go test ./sandbox -run TestEscapeSuite -v` prints at the end.
//
// Fixtures live in temporary folders: the test's own (under the host's /tmp, which is private
// inside the contained modes) and one under /var/tmp, which the contained modes show read-only,
// so that an attempt on it is a real attempt. They belong to the uid contained commands run as
// unless an attempt is about the host's own files, so that on a root host the attempts show the
// sandbox, not file permissions, keeping the command out. Attempts that change host-wide state
// when they escape (host name, a sysctl, a file in /etc, /tmp or /dev/shm) use unique names or
// values and undo the change as soon as the host has seen it.
//
// This file runs the suite and prints its report; escape_attempts_test.go lists the attempts,
// escape_evidence_test.go has what the host looks at, escape_payload_test.go the helper processes.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/reexec"
	"golang.org/x/sys/unix"

	"github.com/warrenhq/warren/internal/testenv"
)

// The suite's re-exec entry points: the payload runs inside the sandbox for what a shell cannot
// do; the terminal host is a host process owning a terminal, running one command under a manager.
const (
	escapePayloadName  = "warren-escape-payload"
	escapeTerminalName = "warren-escape-terminal"
)

func init() {
	reexec.Register(escapePayloadName, runEscapePayload)
	reexec.Register(escapeTerminalName, runEscapeTerminal)
	// reexec dispatches on the exact argv[0]. A payload started under another spelling of its
	// name would run the whole test binary (this suite included) inside the sandbox, or on the
	// host in none mode: refuse instead.
	if name := filepath.Base(os.Args[0]); name != os.Args[0] && (name == escapePayloadName || name == escapeTerminalName) {
		fmt.Fprintf(os.Stderr, "%s started as %q: run it with argv[0] exactly %q\n", name, os.Args[0], name)
		os.Exit(3)
	}
}

const (
	// escapeTimeout bounds every attempt that does not test the timeout itself.
	escapeTimeout = 3 * time.Second
	// escapeShortTimeout is the limit of the attempts that try to outlive it.
	escapeShortTimeout = time.Second
	// escapeFloodTimeout bounds the output flood, which ends on its own long before it.
	escapeFloodTimeout = time.Minute
	// escapeHold is how long a payload keeps what it gained so that the host can see it.
	escapeHold = 2500 * time.Millisecond
	// escapeSlack is how late Run may return after the timeout. It tells a kill that worked (Run
	// returns once the tree is gone) from work that ran on (a sleep of 7000 s, an endless yes),
	// so it is far from both: on a loaded 2-core machine killing a fork bomb's 128 processes has
	// taken 7 s (CI, 2026-12-05), which a bound of 4 s called an escape.
	escapeSlack = 30 * time.Second
	// escapeAddressSpace is the memory bomb's RLIMIT_AS (a Go payload needs about 600 MiB to
	// start, over 1 GiB when built with the race detector).
	escapeAddressSpace = 2 << 30
)

// escapeModes are the modes every attempt runs in, indexed by Mode.
var escapeModes = []Mode{ModeNone, ModeNamespace, ModeBwrap}

// escapeTools are the programs the attempts run, with the Debian package of each (capsh is tried
// but optional).
var escapeTools = []struct{ name, pkg string }{{"base64", "coreutils"}, {"bash", "bash"}, {"dmesg", "util-linux"},
	{"hostname", "hostname"}, {"mknod", "coreutils"}, {"mount", "mount"}, {"nohup", "coreutils"}, {"nsenter", "util-linux"},
	{"pkill", "procps"}, {"seq", "coreutils"}, {"setpriv", "util-linux"}, {"setsid", "util-linux"}, {"sleep", "coreutils"},
	{"timeout", "coreutils"}, {"truncate", "coreutils"}, {"unshare", "util-linux"}, {"yes", "coreutils"}}

// escapePayloadBanner is what the payload prints first: an attempt whose output lacks it never
// ran its payload, and would otherwise pass as contained.
const escapePayloadBanner = "warren-escape-payload: "

// escapeClaim says which modes claim to stop an attempt on this machine, and why.
type escapeClaim struct {
	label string
	by    func(m Mode, c *Capabilities) bool
}

var (
	// claimEveryMode: none mode's boundary enforces it too (environment filter, output cap,
	// timeout kill of the process group).
	claimEveryMode = escapeClaim{"every mode", func(Mode, *Capabilities) bool { return true }}
	// claimContained: the namespaces, read-only view, no capabilities, seccomp and rlimits of
	// both contained modes.
	claimContained = escapeClaim{"namespace, bwrap", func(m Mode, _ *Capabilities) bool { return m.contains() }}
	// claimOtherUID: file permissions, which stop a command running as another host uid than
	// the host's (CommandUID on a root host) from reading the host's 0600 files or connecting to
	// its sockets. On an unprivileged host the command is the host's uid: host files are then
	// readable by design, and secrets belong in Boundary.Hidden.
	claimOtherUID = escapeClaim{"namespace, bwrap when commands run as another uid (a root host)", func(m Mode, c *Capabilities) bool {
		return m.contains() && c.CommandUID != c.UID
	}}
)

// claimEither: a or b stops it.
func claimEither(a, b escapeClaim) escapeClaim {
	return escapeClaim{a.label + "; " + b.label, func(m Mode, c *Capabilities) bool { return a.by(m, c) || b.by(m, c) }}
}

// claimLandlock: only Landlock stops it, from ABI abi on; bwrap mode applies no Landlock.
func claimLandlock(abi int) escapeClaim {
	return escapeClaim{fmt.Sprintf("namespace with Landlock ABI %d+", abi), func(m Mode, c *Capabilities) bool {
		return m == ModeNamespace && c.Landlock.Available && c.LandlockABI >= abi
	}}
}

// escapeCase is one way out. line and prelude are shell templates (see escapeRun.expand);
// watch is polled while the command runs and check looks after it ended: each returns the
// evidence of an escape, "" when the host saw none.
type escapeCase struct {
	name  string
	claim escapeClaim
	// exclusive names the host-wide resource an escape would change: runs naming the same one
	// never overlap, so that the host sees which run changed it and can undo it.
	exclusive string
	// payload links the suite's copy of the test binary into the workdir; {P} runs it.
	payload bool
	// terminal runs the command from a host process whose controlling terminal the test holds.
	terminal bool
	// killHost runs the command from a host process the test kills with this signal.
	killHost syscall.Signal
	setup    func(r *escapeRun)
	boundary func(r *escapeRun, b *Boundary)
	// workRoot, when set, gives the work root the run's manager is told (Manager.SetWorkRoot).
	workRoot func(r *escapeRun) string
	// workdir, when set, gives the workdir the run's manager is made with (r.workdir otherwise).
	workdir func(r *escapeRun) string
	// parent and between are commands of a parent agent (escapeRun.asParent), run to their end
	// before the prelude and between the prelude and line.
	parent, between string
	// prelude is a command run to its end before line, by the same manager.
	prelude string
	// refused is the error (an errors.Is target) with which the manager refuses to start the
	// attempt's commands at all: the attempt is then contained in that mode.
	refused error
	line    string
	watch   func(r *escapeRun) string
	check   func(r *escapeRun, o Outcome) string
}

// escapeResult is one attempt in one mode.
type escapeResult struct {
	ran, claimed, escaped bool
	evidence              string
}

// TestEscapeSuite runs every attempt in every mode, fails on any escape a mode claims to stop
// and prints the report.
func TestEscapeSuite(t *testing.T) {
	t.Parallel()
	// A mode this machine cannot run is skipped, in a subtest named after it that says why (it
	// fails under WARREN_REQUIRE_SANDBOX=1); the others run. A missing layer or tool skips the
	// whole suite: a mode run without a layer would fail attempts it claims, and an attempt
	// without its tool would pass as contained.
	caps := Probe()
	var modes []Mode
	for _, m := range escapeModes {
		if reason := caps.Unavailable(m); reason != "" {
			t.Run(m.String(), func(t *testing.T) { testenv.MustHave(t, reason) })
			continue
		}
		modes = append(modes, m)
	}
	if !caps.Landlock.Available {
		testenv.MustHave(t, "the namespace mode claims Landlock, which this kernel lacks: "+caps.Landlock.Reason)
	}
	if !caps.Seccomp.Available {
		testenv.MustHave(t, "the contained modes claim seccomp, which this kernel lacks: "+caps.Seccomp.Reason)
	}
	for _, tool := range escapeTools {
		testenv.MustHaveProgram(t, tool.name, tool.pkg)
	}
	suite, err := newEscapeSuite(caps, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	attempts := escapeAttempts()
	seen := map[string]bool{}
	for _, a := range attempts {
		if seen[a.name] || a.line == "" || a.check == nil && a.watch == nil {
			t.Fatalf("attempt %q: a unique name, a line and a check or a watch are required", a.name)
		}
		seen[a.name] = true
	}
	results := make([][len(modeNames)]escapeResult, len(attempts))
	// Most attempts wait (on a timeout, a held gain, a listener) rather than compute.
	slots := make(chan struct{}, 3*runtime.GOMAXPROCS(0))
	var all sync.WaitGroup
	for i, a := range attempts {
		all.Go(func() {
			t.Run(a.name, func(t *testing.T) {
				var running sync.WaitGroup
				for _, m := range modes {
					running.Go(func() {
						slots <- struct{}{}
						defer func() { <-slots }()
						t.Run(m.String(), func(t *testing.T) { results[i][m] = suite.run(t, a, m) })
					})
				}
				running.Wait()
			})
		})
	}
	all.Wait()
	t.Log("\n" + escapeReport(attempts, results, caps))
}

// escapeSuite is what the runs share.
type escapeSuite struct {
	caps      *Capabilities
	binary    string // the test binary (the terminal host)
	payload   string // a copy of it, linked into workdirs as the payload
	suidShell string // a setuid-root copy of /bin/bash, linked into workdirs
	hostname  string // the host's name before any attempt
	environ   []byte // this process's /proc/self/environ
	logLine   string // a message of the kernel log, "" when the host cannot read it
	mu        sync.Mutex
	locks     map[string]*sync.Mutex
	serial    atomic.Uint64
}

// newEscapeSuite prepares what the runs share; dir holds the binaries the runs link into their
// workdirs (written once, before any run: a file being written while another goroutine forks
// can be "text file busy" when executed).
func newEscapeSuite(caps *Capabilities, dir string) (*escapeSuite, error) {
	s := &escapeSuite{caps: caps, locks: map[string]*sync.Mutex{},
		payload: filepath.Join(dir, escapePayloadName), suidShell: filepath.Join(dir, "suidsh")}
	var err error
	if s.binary, err = os.Executable(); err != nil {
		return nil, fmt.Errorf("finding the test binary: %w", err)
	}
	for _, c := range []struct {
		src, dst string
		perm     os.FileMode
	}{{s.binary, s.payload, 0o755}, {"/bin/bash", s.suidShell, 0o4755}} {
		data, err := os.ReadFile(c.src)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(c.dst, data, c.perm); err != nil {
			return nil, err
		}
		if err := os.Chmod(c.dst, c.perm); err != nil { // WriteFile's perm passes the umask
			return nil, err
		}
	}
	if s.hostname, err = os.Hostname(); err != nil {
		return nil, fmt.Errorf("reading the host name: %w", err)
	}
	if s.environ, err = os.ReadFile("/proc/self/environ"); err != nil || len(s.environ) == 0 {
		return nil, fmt.Errorf("reading this process's initial environment (%d bytes): %w", len(s.environ), err)
	}
	// "" when the host cannot read its own log (kernel.dmesg_restrict for a non-root host):
	// the attempt then looks for the log's line format instead.
	s.logLine, _ = escapeKernelLogLine()
	return s, nil
}

// lock returns the mutex of a host-wide resource.
func (s *escapeSuite) lock(name string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks[name] == nil {
		s.locks[name] = &sync.Mutex{}
	}
	return s.locks[name]
}

// escapeKernelLogLine picks a message from the middle of the kernel log, for the attempts to read it.
func escapeKernelLogLine() (string, error) {
	size, err := unix.Klogctl(unix.SYSLOG_ACTION_SIZE_BUFFER, nil)
	if err != nil {
		return "", fmt.Errorf("sizing the kernel log: %w", err)
	}
	buf := make([]byte, size)
	n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	if err != nil {
		return "", fmt.Errorf("reading the kernel log: %w", err)
	}
	var messages []string
	for line := range strings.Lines(string(buf[:n])) {
		_, text, ok := strings.Cut(line, "] ")
		text = strings.TrimSpace(text)
		if ok && len(text) >= 24 && !strings.ContainsFunc(text, func(r rune) bool { return r < ' ' || r > '~' }) {
			messages = append(messages, text)
		}
	}
	if len(messages) == 0 {
		return "", errors.New("the kernel log has no message to look for")
	}
	return messages[len(messages)/2], nil
}

// escapeRun is one attempt in one mode: its fixtures, most made on first use.
type escapeRun struct {
	t       *testing.T
	suite   *escapeSuite
	workdir string
	parent  string // a parent agent's workdir, for the attempts that need one (asParent)
	hostTmp string // the test's temporary folder under the host's /tmp (private inside)
	token   string // unique: file contents, names, secrets
	marker  string // a unique `sleep` argument of about two hours: a process to find or miss
	brief   string // a unique `sleep` argument of about half a second: a process to look at
	visible string // a folder under /var/tmp (read-only inside the contained modes)
	victim  *escapeVictim
	// listener and packets are the attempt's endpoints on the host.
	listener net.Listener
	packets  net.PacketConn
	extra    string // an attempt's own value, {X} in its templates
	elapsed  time.Duration
	// terminalOut and terminalIn are what a terminal attempt left on the host's terminal: what
	// was written to it, and what waits in its input queue.
	terminalOut, terminalIn []byte
}

// newRun makes a run's workdir, host folder and unique names. The host folder belongs to the
// command's uid and the folder above it is searchable: on a root host, file permissions alone
// would keep a command out of root's 0700 folders, and an attempt must show the mechanism it aims
// at (here, the private /tmp) doing the containing.
func (s *escapeSuite) newRun(t *testing.T) *escapeRun {
	n := s.serial.Add(1)
	r := &escapeRun{
		t: t, suite: s, workdir: t.TempDir(), hostTmp: t.TempDir(), token: rand.Text(),
		marker: fmt.Sprintf("7000.%d%06d", os.Getpid(), n),
		brief:  fmt.Sprintf("0.5%d%06d", os.Getpid(), n),
	}
	if err := os.Chmod(filepath.Dir(r.hostTmp), 0o711); err != nil {
		t.Fatal(err)
	}
	r.own(r.hostTmp)
	// Registered after the workdir, so it runs before the workdir is removed: a none-mode
	// command is root on the host and may leave mounts and processes behind.
	t.Cleanup(func() {
		escapeDetachMounts(r.workdir)
		for _, pid := range escapePIDs(r.marker, r.brief, r.token, "spin-"+r.token) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return r
}

// run runs attempt a in mode m and reports what the host saw.
func (s *escapeSuite) run(t *testing.T, a escapeCase, m Mode) escapeResult {
	r := s.newRun(t)
	res := escapeResult{claimed: a.claim.by(m, s.caps)}
	if a.exclusive != "" {
		l := s.lock(a.exclusive)
		l.Lock()
		defer l.Unlock()
	}
	if a.setup != nil {
		a.setup(r)
	}
	b := Ceiling(Spec{Mode: &m})
	b.Limits = Limits{Timeout: escapeTimeout, CPUSeconds: 30, AddressSpace: 4 << 30, OpenFiles: 256, Processes: 512, OutputBytes: 64 << 10,
		TmpSize: 64 << 20, FileSize: 256 << 20}
	if a.boundary != nil {
		a.boundary(r, &b)
	}
	if a.payload {
		r.link(s.payload, escapePayloadName)
	}
	workdir := r.workdir
	if a.workdir != nil {
		workdir = a.workdir(r)
	}
	mgr := NewManager(workdir, s.caps, b)
	if a.workRoot != nil {
		mgr.SetWorkRoot(a.workRoot(r))
	}
	t.Cleanup(func() {
		if err := mgr.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	// A start the manager refuses, as the attempt expects, contains it, unless the host's check
	// still finds what the attempt aimed at (a refusal that came too late).
	var refusal error
	refuses := func(err error) bool {
		if a.refused != nil && errors.Is(err, a.refused) {
			refusal = err
		}
		return refusal != nil
	}
	r.asParent(b, a.parent)
	if a.prelude != "" {
		if _, err := mgr.Run(context.Background(), r.expand(a.prelude)); err != nil && !refuses(err) {
			t.Fatalf("prelude %q: %v", a.prelude, err)
		}
	}
	line := r.expand(a.line)
	var o Outcome
	var evidence string
	switch {
	case refusal != nil:
	case a.terminal:
		o = r.runFromTerminal(b, line)
	case a.killHost != 0:
		o = r.runKillingHost(b, line, a.killHost)
	default:
		r.asParent(b, a.between)
		var err error
		if o, evidence, err = r.runWatched(mgr, line, a.watch); err != nil && !refuses(err) {
			t.Fatalf("Start(%q): %v", line, err)
		}
	}
	switch {
	case refusal != nil:
		t.Logf("the sandbox refused to start the command: %v", refusal)
	case o.Err != nil:
		t.Fatalf("the sandbox failed to run %q: %v", line, o.Err)
	case a.payload && evidence == "" && !bytes.Contains(o.Output, []byte(escapePayloadBanner)):
		t.Fatalf("the payload never ran (exit %d): %q", o.ExitCode, o.Output)
	}
	if evidence == "" && a.check != nil {
		evidence = a.check(r, o)
	}
	res.ran, res.escaped, res.evidence = true, evidence != "", evidence
	switch {
	case res.escaped && res.claimed:
		if a.prelude != "" {
			line = r.expand(a.prelude) + "\nthen:    " + line
		}
		t.Errorf("ESCAPE in mode %s, which claims to stop %q (claimed by %s)\ncommand: %s\nevidence: %s\noutput: %.600q",
			m, a.name, a.claim.label, line, evidence, o.Output)
	case res.escaped:
		t.Logf("unclaimed escape (claimed by %s only): %s", a.claim.label, evidence)
	default:
		t.Logf("contained (exit %d, %v): %.300q", o.ExitCode, r.elapsed.Round(time.Millisecond), o.Output)
	}
	return res
}

// runWatched runs line, polling watch until the command ends; an escape the watch sees ends the
// command at once.
func (r *escapeRun) runWatched(mgr *Manager, line string, watch func(*escapeRun) string) (Outcome, string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	p, err := mgr.Start(ctx, line)
	if err != nil {
		return Outcome{}, "", err
	}
	done := make(chan Outcome, 1)
	go func() { done <- p.Wait() }()
	var evidence string
	if watch != nil {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
	poll:
		for {
			select {
			case o := <-done:
				done <- o
				break poll
			case <-tick.C:
				if evidence = watch(r); evidence != "" {
					cancel()
					break poll
				}
			}
		}
	}
	o := <-done
	r.elapsed = time.Since(start)
	return o, evidence, nil
}

// escapePlaceholder finds the {NAME}s of a template.
var escapePlaceholder = regexp.MustCompile(`\{[A-Z]+\}`)

// expand fills a template: {T} token, {M} marker, {B} brief marker, {H} the
// host's temporary folder, {V} the folder under /var/tmp, {REL} that folder relative to the
// workdir, {P} the payload, {PID} and {VM} the victim's pid and marker, {TESTPID} this process,
// {PORT} the listener's port, {ADDR} its address, {X} the attempt's own value.
func (r *escapeRun) expand(template string) string {
	return escapePlaceholder.ReplaceAllStringFunc(template, func(name string) string {
		switch name {
		case "{T}":
			return r.token
		case "{M}":
			return r.marker
		case "{B}":
			return r.brief
		case "{H}":
			return r.hostTmp
		case "{V}":
			return r.visibleDir()
		case "{REL}":
			rel, err := filepath.Rel(r.workdir, r.visibleDir())
			if err != nil {
				r.t.Fatal(err)
			}
			return rel
		case "{P}":
			// argv[0] must be the entry point's exact name for reexec to dispatch it.
			return `env PATH="$PWD:$PATH" ` + escapePayloadName
		case "{PID}":
			return strconv.Itoa(r.startVictim().cmd.Process.Pid)
		case "{VM}":
			return r.startVictim().marker
		case "{TESTPID}":
			return strconv.Itoa(os.Getpid())
		case "{PORT}":
			return strconv.Itoa(r.port())
		case "{ADDR}":
			return r.listener.Addr().String()
		case "{X}":
			return r.extra
		}
		r.t.Fatalf("unknown placeholder %s", name)
		return ""
	})
}

// visibleDir is the run's folder under /var/tmp, made on first use: a host temporary folder the
// contained modes show read-only (the test's own folders are under /tmp, which they replace). It
// belongs to the command's uid, so that only the read-only view keeps the command from changing
// it.
func (r *escapeRun) visibleDir() string {
	if r.visible == "" {
		dir, err := os.MkdirTemp("/var/tmp", "warren-escape-")
		if err != nil {
			r.t.Fatalf("making a folder under /var/tmp: %v", err)
		}
		r.visible = resolved(dir)
		r.t.Cleanup(func() {
			escapeDetachMounts(r.visible)
			_ = os.RemoveAll(r.visible)
		})
		if err := os.Chmod(r.visible, 0o755); err != nil {
			r.t.Fatal(err)
		}
		r.own(r.visible)
	}
	return r.visible
}

// own gives path to the uid and gid contained commands run as (a no-op on an unprivileged host,
// whose commands run as its own uid).
func (r *escapeRun) own(path string) {
	if err := os.Lchown(path, r.suite.caps.CommandUID, r.suite.caps.CommandGID); err != nil {
		r.t.Fatal(err)
	}
}

// file writes a fixture file belonging to the command's uid, in folders made for it that belong
// to it too, and returns its path: permissions then never keep a command from it, only the
// sandbox can.
func (r *escapeRun) file(path, content string, perm os.FileMode) string {
	root := r.hostTmp
	if r.visible != "" && within(path, r.visible) {
		root = r.visible
	}
	if !within(path, root) || path == root {
		r.t.Fatalf("fixture %s is not in the run's folders", path)
	}
	r.hostFile(path, content, perm)
	for p := path; p != root; p = filepath.Dir(p) {
		r.own(p)
	}
	return path
}

// hostFile writes a fixture file belonging to the host's uid (folders made for it are world
// searchable) and returns its path.
func (r *escapeRun) hostFile(path, content string, perm os.FileMode) string {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // WriteFile's perm passes the umask
		r.t.Fatal(err)
	}
	return path
}

// link puts one of the suite's binaries in the workdir under name.
func (r *escapeRun) link(src, name string) {
	if err := os.Link(src, filepath.Join(r.workdir, name)); err != nil {
		r.t.Fatalf("linking %s into the workdir: %v", src, err)
	}
}

// escapeVictim is a host process the test started: `sleep` with a secret in its environment and
// a secret file in its working directory.
type escapeVictim struct {
	cmd    *exec.Cmd
	marker string
	exited chan struct{}
}

// startVictim starts the run's victim on first use.
func (r *escapeRun) startVictim() *escapeVictim {
	if r.victim != nil {
		return r.victim
	}
	cwd := filepath.Join(r.hostTmp, "victim-cwd")
	r.file(filepath.Join(cwd, "secret"), r.token, 0o600)
	v := &escapeVictim{marker: fmt.Sprintf("7100.%d%06d", os.Getpid(), r.suite.serial.Add(1)), exited: make(chan struct{})}
	v.cmd = exec.Command("sleep", v.marker)
	v.cmd.Dir, v.cmd.Env = cwd, append(os.Environ(), "WARREN_VICTIM_SECRET="+r.token)
	// The command's own uid: only the sandbox, not the uid, keeps the command from it.
	if caps := r.suite.caps; caps.dropsPrivileges() {
		v.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(caps.CommandUID), Gid: uint32(caps.CommandGID)}}
	}
	if err := v.cmd.Start(); err != nil {
		r.t.Fatalf("starting the victim: %v", err)
	}
	go func() {
		_ = v.cmd.Wait()
		close(v.exited)
	}()
	r.t.Cleanup(func() {
		_ = v.cmd.Process.Kill()
		<-v.exited
	})
	r.victim = v
	return v
}

// port is the port of the run's listener or packet socket.
func (r *escapeRun) port() int {
	if r.listener != nil {
		return r.listener.Addr().(*net.TCPAddr).Port
	}
	return r.packets.LocalAddr().(*net.UDPAddr).Port
}

// listen starts the run's listener.
func (r *escapeRun) listen(network, address string) {
	l, err := net.Listen(network, address)
	if err != nil {
		r.t.Fatalf("listening on %s %s: %v", network, address, err)
	}
	r.t.Cleanup(func() { l.Close() })
	r.listener = l
}

// listenPackets starts the run's UDP socket.
func (r *escapeRun) listenPackets() {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		r.t.Fatalf("listening on UDP: %v", err)
	}
	r.t.Cleanup(func() { c.Close() })
	r.packets = c
}

// escapeReport is the suite's table: per mode the attempts run, claimed, and escapes claimed and
// unclaimed; then each attempt's outcome per mode, and the evidence of every escape.
func escapeReport(attempts []escapeCase, results [][len(modeNames)]escapeResult, caps *Capabilities) string {
	ran := func(i int) bool {
		return slices.ContainsFunc(results[i][:], func(r escapeResult) bool { return r.ran })
	}
	selected := 0
	for i := range attempts {
		if ran(i) {
			selected++
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "escape suite: %d attempts x %d modes (host uid %d, landlock ABI %d, %s)\n",
		selected, len(escapeModes), caps.UID, caps.LandlockABI, caps.BwrapVersion)
	fmt.Fprintf(&sb, "%-10s %6s %8s %10s %16s %18s\n", "mode", "run", "claimed", "contained", "claimed-escapes", "unclaimed-escapes")
	for _, m := range escapeModes {
		var run, claimed, contained, claimedEscapes, unclaimedEscapes int
		for _, res := range results {
			r := res[m]
			if !r.ran {
				continue
			}
			run++
			switch {
			case r.claimed && r.escaped:
				claimed++
				claimedEscapes++
			case r.claimed:
				claimed++
				contained++
			case r.escaped:
				unclaimedEscapes++
			default:
				contained++
			}
		}
		fmt.Fprintf(&sb, "%-10s %6d %8d %10d %16d %18d\n", m, run, claimed, contained, claimedEscapes, unclaimedEscapes)
	}
	sb.WriteString("\n")
	fmt.Fprintf(&sb, "%-30s %-11s %-11s %-11s %s\n", "attempt", "none", "namespace", "bwrap", "claimed by")
	// The evidence, claimed escapes first, then the contained modes' unclaimed ones, then none's.
	var escapes [3][]string
	for i, a := range attempts {
		if !ran(i) {
			continue // not selected by -run, or failed in every mode (the failures say why)
		}
		fmt.Fprintf(&sb, "%-30s", a.name)
		for _, m := range escapeModes {
			r := results[i][m]
			cell := "-"
			switch {
			case !r.ran:
			case r.escaped && r.claimed:
				cell = "ESCAPED"
			case r.escaped:
				cell = "escaped*"
			case r.claimed:
				cell = "contained"
			default:
				cell = "contained*"
			}
			fmt.Fprintf(&sb, " %-11s", cell)
			if r.escaped {
				group := 2
				if r.claimed {
					group = 0
				} else if m.contains() {
					group = 1
				}
				escapes[group] = append(escapes[group], fmt.Sprintf("  %-9s %-10s %s: %s", cell, m, a.name, r.evidence))
			}
		}
		fmt.Fprintf(&sb, " %s\n", a.claim.label)
	}
	sb.WriteString("(* = the mode does not claim to stop it: counted, not a failure; ESCAPED fails the test; - = not run)\n\nescapes:\n")
	sb.WriteString(strings.Join(slices.Concat(escapes[:]...), "\n"))
	return sb.String()
}

func TestEscapeReport(t *testing.T) {
	attempts := []escapeCase{
		{name: "claimed-breach", claim: claimContained},
		{name: "filtered-out", claim: claimContained},
		{name: "all-held", claim: claimEveryMode},
	}
	results := make([][len(modeNames)]escapeResult, len(attempts))
	results[0][ModeNone] = escapeResult{ran: true, escaped: true, evidence: "wrote /etc"}
	results[0][ModeNamespace] = escapeResult{ran: true, claimed: true, escaped: true, evidence: "read the secret"}
	results[0][ModeBwrap] = escapeResult{ran: true, claimed: true}
	results[2][ModeNone] = escapeResult{ran: true, claimed: true}
	results[2][ModeNamespace] = escapeResult{ran: true, claimed: true}
	report := escapeReport(attempts, results, &Capabilities{LandlockABI: 7, BwrapVersion: "bubblewrap 0.8.0"})
	lines := strings.Split(report, "\n")
	fields := func(prefix string) []string {
		for _, line := range lines {
			if f := strings.Fields(line); len(f) > 0 && f[0] == prefix {
				return f
			}
		}
		return nil
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"escape", []string{"escape", "suite:", "2", "attempts"}},
		{"none", []string{"none", "2", "1", "1", "0", "1"}},
		{"namespace", []string{"namespace", "2", "2", "1", "1", "0"}},
		{"bwrap", []string{"bwrap", "1", "1", "1", "0", "0"}},
		{"claimed-breach", []string{"claimed-breach", "escaped*", "ESCAPED", "contained", "namespace,", "bwrap"}},
		{"all-held", []string{"all-held", "contained", "contained", "-", "every", "mode"}},
		{"filtered-out", nil},
	} {
		got := fields(tc.name)
		if tc.want == nil && got != nil || !slices.Equal(got[:min(len(got), len(tc.want))], tc.want) {
			t.Errorf("%s row %q, want it to start with %q\n%s", tc.name, got, tc.want, report)
		}
	}
	claimed, unclaimed := strings.Index(report, "ESCAPED   namespace  claimed-breach: read the secret"), strings.Index(report, "escaped*  none       claimed-breach: wrote /etc")
	if claimed < 0 || unclaimed < claimed {
		t.Errorf("escapes not listed claimed first:\n%s", report)
	}
}
