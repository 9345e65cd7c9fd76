package policy

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/sandbox"
)

// The dialect test runs every corpus line under the real executor (the sandbox's ShellPath with
// its ShellArgv) inside a bubblewrap environment whose program folders hold stubs: every
// program but a few real shells and wrappers is this test binary, which records the path it was
// executed as and exits. Then it checks that what ran is what the keys said: every program the
// line started (directly or through a real wrapper or shell) has a key, and every file the line
// wrote by redirect has a redirect key. A judge and an executor that read a line differently
// (bash syntax run by dash) fail here.

// dialectRoot is where the test's own files are mounted inside the environment.
const dialectRoot = "/warren-dialect"

// dialectReal are the programs that run for real inside the environment (when the machine has
// them): the shells, and the wrappers the analysis sees through, so that what they start is
// checked too. Their helpers' execs are not the line's (see dialectHelpers).
var dialectReal = []string{"bash", "sh", "dash", "env", "nice", "nohup", "timeout", "setsid",
	"stdbuf", "taskset", "chrt", "prlimit", "setpriv", "unshare", "nsenter", "xargs", "tar", "split",
	"sort", "script", "flock", "strace", "setarch", "linux64", "linux32", "ionice", "zip", "man"}

// dialectRequired are the real programs CI provides (.ci/run installs strace, zip and man-db):
// without them under WARREN_REQUIRE_SANDBOX=1 the test fails rather than checking less.
var dialectRequired = []string{"bash", "dash", "env", "nice", "nohup", "timeout", "setsid",
	"stdbuf", "taskset", "chrt", "prlimit", "setpriv", "unshare", "xargs", "tar", "split", "sort",
	"script", "flock", "strace", "zip"}

// dialectHelpers are real programs that start helpers of their own choosing (tar runs gzip,
// man runs groff and its pager, script and split start a shell): an exec whose parent is one of
// them is the program's, not the line's. What that shell runs is the line's again.
var dialectHelpers = []string{"tar", "man", "script", "split", "sort", "zip"}

// TestMain runs this binary as a stub (dialectStub), or as one of the sandbox's re-exec entry
// points: requireBwrap asks the sandbox's probe, which runs a trial command through it.
func TestMain(m *testing.M) {
	dialectStub()
	sandbox.Init()
	os.Exit(m.Run())
}

// dialectStub runs this binary as a stub when it was executed under a stub name inside the
// environment: it records "<executed path>\t<parent program>" in the log and execs the real
// program when there is one, else exits 0. It returns only when the binary is not a stub.
func dialectStub() {
	if strings.HasSuffix(filepath.Base(os.Args[0]), ".test") {
		return
	}
	if _, err := os.Stat(dialectRoot + "/real"); err != nil {
		return
	}
	name := execFilename()
	parent := ""
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(os.Getppid()) + "/exe"); err == nil {
		parent = filepath.Base(exe)
	}
	if f, err := os.OpenFile(dialectRoot+"/log", os.O_WRONLY|os.O_APPEND, 0); err == nil {
		_, _ = fmt.Fprintf(f, "%s\t%s\n", name, parent)
		_ = f.Close()
	}
	real := dialectRoot + "/real/" + filepath.Base(name)
	if _, err := os.Stat(real); err == nil {
		err = unix.Exec(real, os.Args, os.Environ())
		fmt.Fprintf(os.Stderr, "stub: exec %s: %v\n", real, err)
		os.Exit(127)
	}
	os.Exit(0)
}

// execFilename is the path this process was executed as (AT_EXECFN): the stub's name even when
// argv[0] says otherwise (exec -a ls rm). It reads the string from /proc/self/mem.
func execFilename() string {
	const atExecFn = 31
	auxv, err := unix.Auxv()
	if err != nil {
		return os.Args[0]
	}
	for _, kv := range auxv {
		if kv[0] != atExecFn {
			continue
		}
		mem, err := os.Open("/proc/self/mem")
		if err != nil {
			break
		}
		defer mem.Close()
		buf := make([]byte, 4096)
		n, _ := mem.ReadAt(buf, int64(kv[1]))
		if i := slices.Index(buf[:n], 0); i >= 0 {
			return string(buf[:i])
		}
	}
	return os.Args[0]
}

// dialectEnv is the stub environment, built once per test binary.
type dialectEnv struct {
	dir   string   // host folder holding the farm, the real links and the stub
	binds []string // bwrap arguments that build the root
	bash  string   // the real bash inside the environment
}

// requireBwrap returns the bwrap the sandbox's probe found working, skipping t with the probe's
// reason when there is none (failing it under WARREN_REQUIRE_SANDBOX=1).
func requireBwrap(t *testing.T) string {
	t.Helper()
	caps := sandbox.Probe()
	testenv.MustHave(t, caps.Unavailable(sandbox.ModeBwrap))
	return caps.BwrapPath
}

// programDirs are the folders a bare program name is found in.
var programDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

func newDialectEnv(t *testing.T, names []string) *dialectEnv {
	t.Helper()
	return newDialectEnvWith(t, names, dialectReal)
}

// newDialectEnvWith is newDialectEnv with real as the programs that run for real.
func newDialectEnvWith(t *testing.T, names, real []string) *dialectEnv {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := &dialectEnv{dir: t.TempDir()}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(env.dir, "real"), 0o755))
	var missing []string
	for _, name := range real {
		path, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		resolved, err := filepath.EvalSymlinks(path)
		must(err)
		if slices.Contains(programDirs, filepath.Dir(resolved)) {
			resolved = "/warren-host" + resolved // program folders hold stubs inside
		}
		must(os.Symlink(resolved, filepath.Join(env.dir, "real", name)))
	}
	if testenv.Required() {
		for _, name := range dialectRequired {
			if slices.Contains(missing, name) {
				t.Fatalf("the dialect test needs %s to run for real (%s=1)", name, testenv.RequireVar)
			}
		}
	} else if len(missing) > 0 {
		t.Logf("not on this machine, so run as stubs (what they would start is not checked): %s", strings.Join(missing, " "))
	}
	bash := filepath.Join(env.dir, "real", "bash")
	if _, err := os.Lstat(bash); err != nil {
		t.Fatalf("no bash on this machine: %v", err)
	}
	target, _ := os.Readlink(bash)
	env.bash = target
	// The root: the host's top-level folders read-only, its symlinks as they are, except the
	// program folders, whose every name (and every program the corpus names) is the stub.
	entries, err := os.ReadDir("/")
	must(err)
	skip := []string{"proc", "dev", "sys", "tmp", "run", "home", "root", "mnt", "media", "lost+found", "var", "srv", "boot", "warren-host", "warren-dialect", "work"}
	for _, e := range entries {
		name := e.Name()
		if slices.Contains(skip, name) {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			link, err := os.Readlink("/" + name)
			must(err)
			env.binds = append(env.binds, "--symlink", link, "/"+name)
			continue
		}
		if e.IsDir() {
			env.binds = append(env.binds, "--ro-bind", "/"+name, "/"+name)
		}
	}
	for _, dir := range programDirs {
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() {
			continue // missing, or a symlink to another program folder
		}
		farm := filepath.Join(env.dir, "farm"+strings.ReplaceAll(dir, "/", "-"))
		must(os.Mkdir(farm, 0o755))
		have, err := os.ReadDir(dir)
		must(err)
		stubs := slices.Clone(names)
		for _, h := range have {
			stubs = append(stubs, h.Name())
		}
		slices.Sort(stubs)
		for _, name := range slices.Compact(stubs) {
			if name == "" || strings.Contains(name, "/") {
				continue
			}
			must(os.Symlink(dialectRoot+"/stub", filepath.Join(farm, name)))
		}
		env.binds = append(env.binds, "--ro-bind", dir, "/warren-host"+dir, "--ro-bind", farm, dir)
	}
	env.binds = append(env.binds, "--ro-bind", self, dialectRoot+"/stub",
		"--ro-bind", filepath.Join(env.dir, "real"), dialectRoot+"/real")
	return env
}

// dialectRun is what one line did.
type dialectRun struct {
	execs   []dialectExec
	written []string // files created or changed, as /w/... or /tmp/... paths
	timeout bool
	output  string // bwrap's and the line's output, for failure messages
}

type dialectExec struct{ name, parent string }

// run runs line in a fresh environment and reports what it did.
func (env *dialectEnv) run(bwrap, line string) (dialectRun, error) {
	return env.runIn(bwrap, line, dialectFixture)
}

// dialectFixture makes the files the corpus reads in work, so that commands reading them run.
func dialectFixture(work string) error {
	for _, f := range []string{"f", "x", "list", "urls.txt", "remotes", "payload", "evil.sh", "notes.txt", "v1.txt", "victim2"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("1\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// runIn runs line in a fresh environment whose workdir fixture made, and reports what it did.
func (env *dialectEnv) runIn(bwrap, line string, fixture func(work string) error) (dialectRun, error) {
	dir, err := os.MkdirTemp(env.dir, "line-")
	if err != nil {
		return dialectRun{}, err
	}
	defer os.RemoveAll(dir)
	work, tmp, log := filepath.Join(dir, "w"), filepath.Join(dir, "tmp"), filepath.Join(dir, "log")
	for _, d := range []string{work, tmp, filepath.Join(work, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return dialectRun{}, err
		}
	}
	if err := fixture(work); err != nil {
		return dialectRun{}, err
	}
	if err := os.WriteFile(log, nil, 0o666); err != nil {
		return dialectRun{}, err
	}
	before := snapshot(work, tmp)
	args := append([]string{"--unshare-all", "--die-with-parent", "--new-session", "--dev", "/dev", "--proc", "/proc"}, env.binds...)
	args = append(args, "--bind", work, "/w", "--bind", tmp, "/tmp", "--bind", log, dialectRoot+"/log",
		"--chdir", "/w", "--clearenv", "--setenv", "PATH", strings.Join(programDirs, ":"),
		"--setenv", "HOME", "/w", "--setenv", "LANG", "C", "--", env.bash)
	args = append(args, sandbox.ShellArgv(line)[1:]...)
	// A line that loops (for ((;;))) is stopped; what it ran until then is still checked, and a
	// stop can only hide an exec, never invent one, so load cannot fail the test.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, args...)
	cmd.Stdin = nil
	out, _ := cmd.CombinedOutput()
	var r dialectRun
	r.timeout = ctx.Err() != nil
	data, err := os.ReadFile(log)
	if err != nil {
		return r, err
	}
	for l := range strings.Lines(string(data)) {
		name, parent, _ := strings.Cut(strings.TrimSuffix(l, "\n"), "\t")
		r.execs = append(r.execs, dialectExec{name: name, parent: parent})
	}
	after := snapshot(work, tmp)
	for path, stamp := range after {
		if before[path] != stamp {
			rel := strings.TrimPrefix(path, dir)
			r.written = append(r.written, rel)
		}
	}
	slices.Sort(r.written)
	r.output = string(out)
	return r, nil
}

// snapshot maps every file under the roots to its size and modification time.
func snapshot(roots ...string) map[string]string {
	m := map[string]string{}
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if info, err := d.Info(); err == nil {
				m[path] = fmt.Sprintf("%d %d", info.Size(), info.ModTime().UnixNano())
			}
			return nil
		})
	}
	return m
}

// dialectLines are the corpus lines the test runs: the evasion corpus and the dialect corpus.
func dialectLines(t *testing.T) []evasionCase {
	cases := readEvasionCorpus(t)
	f, err := os.Open(filepath.Join("testdata", "shell", "dialect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "q ") {
			if line, err = strconv.Unquote(line[2:]); err != nil {
				t.Fatalf("dialect.txt:%d: %v", n, err)
			}
		}
		cases = append(cases, evasionCase{file: "dialect.txt", lineNo: n, line: line})
	}
	return cases
}

func TestDialectWhatRunsIsWhatTheKeysSay(t *testing.T) {
	bwrap := requireBwrap(t)
	cases := dialectLines(t)
	var names []string
	for _, c := range cases {
		for _, k := range AnalyzeShell(c.line).Keys {
			if p := KeyProgram(k); p != "" && !strings.Contains(p, "/") {
				names = append(names, p)
			}
		}
	}
	env := newDialectEnv(t, names)
	if out, err := exec.Command(bwrap, append(append([]string{"--unshare-all"}, env.binds...), "--", env.bash, "-c", "true")...).CombinedOutput(); err != nil {
		testenv.MustHave(t, fmt.Sprintf("bwrap cannot run the dialect test's root here (%v: %s); host doctor says why", err, out))
	}
	var (
		mu                        sync.Mutex
		checked, skipped, stopped int
	)
	// The lines that may run into their time limit start first, so that they overlap the others
	// rather than end the test five seconds after the rest.
	slices.SortStableFunc(cases, func(a, b evasionCase) int { return cmp.Compare(dialectCost(b.line), dialectCost(a.line)) })
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, c := range cases {
		a := AnalyzeShell(c.line)
		if a.Why != "" || len(a.Opaque) > 0 {
			skipped++ // unknown keys are never covered; opaque keys say anything may run
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(c evasionCase, a ShellLine) {
			defer func() { <-sem; wg.Done() }()
			r, err := env.run(bwrap, c.line)
			problems := dialectProblems(a, r)
			mu.Lock()
			defer mu.Unlock()
			checked++
			if r.timeout {
				stopped++
			}
			where := fmt.Sprintf("%s:%d", c.file, c.lineNo)
			if err != nil {
				t.Errorf("%s %q: %v", where, c.line, err)
			}
			for _, p := range problems {
				t.Errorf("%s %q (keys %q): %s\n%s", where, c.line, a.Keys, p, r.output)
			}
		}(c, a)
	}
	wg.Wait()
	t.Logf("%d lines run under %s and checked (%d stopped at their time limit), %d not run (keys unknown or opaque)", checked, sandbox.ShellPath, stopped, skipped)
	if checked < 300 {
		t.Errorf("only %d lines were checked; the corpus should give at least 300", checked)
	}
}

// dialectCost is 1 for a line that may run for seconds (a loop, which may never end; man, which
// sleeps five seconds after starting a browser) and 0 for the others: the order lines start in,
// for speed only.
func dialectCost(line string) int {
	if strings.Contains(line, "; done") || strings.HasPrefix(line, "man ") {
		return 1
	}
	return 0
}

// dialectProblems compares what a line did with its keys.
func dialectProblems(a ShellLine, r dialectRun) []string {
	var problems []string
	programs := map[string]bool{}
	for _, k := range a.Keys {
		if p := KeyProgram(k); p != "" {
			programs[p] = true
		}
	}
	realRan := false
	for _, e := range r.execs {
		base := filepath.Base(e.name)
		if slices.Contains(dialectReal, base) && !slices.Contains([]string{"bash", "sh", "dash"}, base) {
			realRan = true
		}
		if slices.Contains(dialectHelpers, e.parent) {
			continue
		}
		if !programs[base] {
			problems = append(problems, fmt.Sprintf("ran %s (started by %s), which no key names", e.name, e.parent))
		}
	}
	if realRan {
		return problems // a real program may have written files of its own
	}
	for _, w := range r.written {
		if !redirectCovers(a.Keys, w) {
			problems = append(problems, fmt.Sprintf("wrote %s, which no redirect key names", w))
		}
	}
	return problems
}

// redirectCovers reports whether a redirect key names the written file (/w/... or /tmp/...) by
// its path: a relative key is relative to the workdir, /w, whatever folder the line changed to.
func redirectCovers(keys []string, written string) bool {
	for _, k := range keys {
		target, ok := strings.CutPrefix(k, RedirectKey(""))
		if !ok {
			continue
		}
		if rest, ok := strings.CutPrefix(target, "~"); ok {
			target = "/w" + rest // HOME is the workdir here
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join("/w", target)
		}
		if target == written {
			return true
		}
	}
	return false
}
