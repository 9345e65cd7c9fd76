package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/warrenhq/warren/tools"
)

// newTestExec is a real agent context on a fresh workdir, with a write budget of perRun bytes
// (0: none).
func newTestExec(t *testing.T, perRun int64) *tools.ExecContext {
	t.Helper()
	ec := tools.NewExecContext(context.Background(), "call-1", 1, tools.AgentRef{ID: 7, Name: "tester"}, t.TempDir())
	if perRun > 0 {
		ec.Writes = tools.NewWriteBudget(0, perRun)
	}
	return ec
}

func TestFuncsFiles(t *testing.T) {
	ec := newTestExec(t, 0)
	if err := os.MkdirAll(filepath.Join(ec.Workdir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ec.Workdir, "notes.txt"), []byte("one two\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(ec.Workdir), "outside.txt")
	f := NewFuncs(FuncsConfig{Tool: "files", Exec: ec})

	tests := []struct {
		name    string
		call    func() (string, error)
		want    string
		wantErr error
	}{
		{"read an existing file", func() (string, error) { return f.ReadFile("notes.txt") }, "one two\nthree\n", nil},
		{"write a new file in a new directory", func() (string, error) { return f.WriteFile("out/a.txt", "hello") }, `Wrote 5 bytes to "out/a.txt" (new file)`, nil},
		{"read back what was written", func() (string, error) { return f.ReadFile("out/a.txt") }, "hello", nil},
		{"replace a file", func() (string, error) { return f.WriteFile("out/a.txt", "bye") }, `Wrote 3 bytes to "out/a.txt" (replaced the previous content)`, nil},
		{"list the workdir with an empty path", func() (string, error) { return f.ListDir("") }, "notes.txt\nout/\nsub/", nil},
		{"list a subdirectory", func() (string, error) { return f.ListDir("out") }, "a.txt", nil},
		{"list an empty directory", func() (string, error) { return f.ListDir("sub") }, "(empty directory)", nil},
		{"read a missing file", func() (string, error) { return f.ReadFile("missing.txt") }, "", fs.ErrNotExist},
		{"read through ..", func() (string, error) { return f.ReadFile("../outside.txt") }, "", tools.ErrOutsideWorkdir},
		{"write through ..", func() (string, error) { return f.WriteFile("../x", "escape") }, "", tools.ErrOutsideWorkdir},
		{"write to an absolute path outside", func() (string, error) { return f.WriteFile(outside, "escape") }, "", tools.ErrOutsideWorkdir},
		{"list the parent", func() (string, error) { return f.ListDir("..") }, "", tools.ErrOutsideWorkdir},
		{"read an empty path", func() (string, error) { return f.ReadFile("") }, "", tools.ErrInvalidArguments},
		{"list a file", func() (string, error) { return f.ListDir("notes.txt") }, "", tools.ErrNotDirectory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("result = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := os.Stat(outside); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused write created %s (stat error %v)", outside, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ec.Workdir), "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the write through .. created a file outside the workdir (stat error %v)", err)
	}
}

func TestFuncsWriteBudget(t *testing.T) {
	ec := newTestExec(t, 10)
	f := NewFuncs(FuncsConfig{Tool: "budget", Exec: ec})
	if _, err := f.WriteFile("a.txt", "12345678"); err != nil {
		t.Fatalf("a write within the budget failed: %v", err)
	}
	_, err := f.WriteFile("b.txt", "12345")
	var budgetErr *tools.WriteBudgetError
	if !errors.As(err, &budgetErr) || !errors.Is(err, tools.ErrWriteBudget) {
		t.Fatalf("a write over the budget: error = %v, want a *tools.WriteBudgetError", err)
	}
	if budgetErr.Left != 2 {
		t.Fatalf("refusal says %d bytes left, want 2", budgetErr.Left)
	}
	if got := ec.Writes.Spent(); got != 8 {
		t.Fatalf("budget spent = %d, want 8 (the refused write must not be charged)", got)
	}
	if _, err := os.Stat(filepath.Join(ec.Workdir, "b.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused write created b.txt (stat error %v)", err)
	}
}

func TestFuncsNilExecContext(t *testing.T) {
	f := NewFuncs(FuncsConfig{Tool: "bare"})
	if _, err := f.ReadFile("a.txt"); !errors.Is(err, tools.ErrNoWorkdir) {
		t.Fatalf("read_file without a context: error = %v, want tools.ErrNoWorkdir", err)
	}
}

func TestFuncsStringCaps(t *testing.T) {
	const limit = 16
	big := strings.Repeat("x", limit+1)
	ec := newTestExec(t, 0)
	if err := os.WriteFile(filepath.Join(ec.Workdir, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	shellRan, toolRan := false, false
	f := NewFuncs(FuncsConfig{
		Tool:           "caps",
		Exec:           ec,
		MaxStringBytes: limit,
		Env:            map[string]string{"BIG": big},
		Shell:          func(_ context.Context, command string) (string, error) { shellRan = true; return big, nil },
		CallTool: func(_ context.Context, name string, args json.RawMessage) (string, error) {
			toolRan = true
			return big, nil
		},
	})
	tests := []struct {
		name string
		call func() error
		what string
	}{
		{"write_file content", func() error { _, err := f.WriteFile("a.txt", big); return err }, "content too long: 17 bytes"},
		{"write_file path", func() error { _, err := f.WriteFile(big, "x"); return err }, "path too long: 17 bytes"},
		{"read_file result", func() error { _, err := f.ReadFile("big.txt"); return err }, "result too long: 17 bytes"},
		{"shell command", func() error { _, err := f.Shell(context.Background(), big); return err }, "command too long: 17 bytes"},
		{"shell output", func() error { _, err := f.Shell(context.Background(), "echo"); return err }, "output too long: 17 bytes"},
		{"env value", func() error { _, err := f.Env("BIG"); return err }, "value too long: 17 bytes"},
		{"call_tool arguments", func() error {
			_, err := f.CallTool(context.Background(), "t", json.RawMessage(`{"a":"`+big+`"}`))
			return err
		}, "arguments too long: 25 bytes"},
		{"env name", func() error { _, err := f.Env(big); return err }, "name too long: 17 bytes"},
		{"call_tool name", func() error { _, err := f.CallTool(context.Background(), big, json.RawMessage(`{}`)); return err }, "tool name too long: 17 bytes"},
		{"call_tool result", func() error { _, err := f.CallTool(context.Background(), "t", json.RawMessage(`{}`)); return err }, "result too long: 17 bytes"},
		{"http_post body", func() error { _, err := f.HTTPPost(context.Background(), "http://a.t/", "", big, nil); return err }, "body too long: 17 bytes"},
		{"http_get headers", func() error {
			_, err := f.HTTPGet(context.Background(), "http://a.t/", map[string]string{"X-Big": big})
			return err
		}, "headers too long: 22 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, ErrStringTooLarge) {
				t.Fatalf("error = %v, want ErrStringTooLarge", err)
			}
			if !strings.Contains(err.Error(), tt.what) {
				t.Fatalf("error %q does not say %q", err, tt.what)
			}
		})
	}
	if !shellRan || !toolRan {
		t.Fatalf("the result caps must be checked after running: shell ran %v, call_tool ran %v", shellRan, toolRan)
	}
	if _, err := os.Stat(filepath.Join(ec.Workdir, "a.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused write created a.txt (stat error %v)", err)
	}
}

func TestFuncsPermitRefusesEachFunction(t *testing.T) {
	errDenied := errors.New("denied by [tool_script_permissions]")
	tests := []struct {
		fn   string
		call func(f *Funcs) error
	}{
		{HostFnReadFile, func(f *Funcs) error { _, err := f.ReadFile("a.txt"); return err }},
		{HostFnWriteFile, func(f *Funcs) error { _, err := f.WriteFile("new.txt", "x"); return err }},
		{HostFnListDir, func(f *Funcs) error { _, err := f.ListDir(""); return err }},
		{HostFnShell, func(f *Funcs) error { _, err := f.Shell(context.Background(), "ls"); return err }},
		{HostFnHTTPGet, func(f *Funcs) error {
			_, err := f.HTTPGet(context.Background(), "http://example.test/", nil)
			return err
		}},
		{HostFnHTTPPost, func(f *Funcs) error {
			_, err := f.HTTPPost(context.Background(), "http://example.test/", "", "b", nil)
			return err
		}},
		{HostFnEnv, func(f *Funcs) error { _, err := f.Env("HOME"); return err }},
		{HostFnCallTool, func(f *Funcs) error {
			_, err := f.CallTool(context.Background(), "other", json.RawMessage(`{}`))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			ec := newTestExec(t, 0)
			if err := os.WriteFile(filepath.Join(ec.Workdir, "a.txt"), []byte("a"), 0o644); err != nil {
				t.Fatal(err)
			}
			var asked []string
			ran := false
			f := NewFuncs(FuncsConfig{
				Tool: "gated",
				Exec: ec,
				Permit: func(fn string) error {
					asked = append(asked, fn)
					if fn == tt.fn {
						return errDenied
					}
					return nil
				},
				Env:      map[string]string{"HOME": "/home/agent"},
				Shell:    func(context.Context, string) (string, error) { ran = true; return "", nil },
				CallTool: func(context.Context, string, json.RawMessage) (string, error) { ran = true; return "", nil },
				HTTP:     HTTPConfig{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { ran = true; return nil, errors.New("sent") })},
			})
			if err := tt.call(f); err != errDenied {
				t.Fatalf("error = %v, want exactly Permit's error", err)
			}
			if !slices.Equal(asked, []string{tt.fn}) {
				t.Fatalf("Permit asked about %v, want [%s]", asked, tt.fn)
			}
			if ran {
				t.Fatal("the refused function ran anyway")
			}
			if _, err := os.Stat(filepath.Join(ec.Workdir, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused write_file wrote (stat error %v)", err)
			}
			want := []HostCall{{Fn: tt.fn, Arg: f.Calls()[0].Arg, OK: false, Err: errDenied.Error()}}
			if got := f.Calls(); !slices.Equal(got, want) {
				t.Fatalf("Calls() = %+v, want %+v", got, want)
			}
		})
	}
}

func TestFuncsEnv(t *testing.T) {
	f := NewFuncs(FuncsConfig{Tool: "envy", Env: map[string]string{"API_BASE": "https://api.test", "EMPTY": ""}})
	tests := []struct {
		name    string
		want    string
		wantErr error
	}{
		{"API_BASE", "https://api.test", nil},
		{"EMPTY", "", nil},
		{"HOME", "", ErrEnvNotAllowed},
		{"api_base", "", ErrEnvNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.Env(tt.name)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("Env(%q) = %q, %v; want %q, %v", tt.name, got, err, tt.want, tt.wantErr)
			}
			if err != nil {
				for _, part := range []string{strconv.Quote(tt.name), `"envy"`, "allow-list"} {
					if !strings.Contains(err.Error(), part) {
						t.Fatalf("refusal %q does not mention %s", err, part)
					}
				}
			}
		})
	}
}

func TestFuncsCallTool(t *testing.T) {
	errTool := errors.New("other: no such file")
	tests := []struct {
		name     string
		callTool func(context.Context, string, json.RawMessage) (string, error)
		want     string
		wantErr  error
	}{
		{"passes name and arguments through", func(_ context.Context, name string, args json.RawMessage) (string, error) {
			return name + " got " + string(args), nil
		}, `other got {"n":1}`, nil},
		{"passes the tool's error through", func(context.Context, string, json.RawMessage) (string, error) { return "", errTool }, "", errTool},
		{"nil refuses", nil, "", ErrNoCallTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFuncs(FuncsConfig{Tool: "caller", CallTool: tt.callTool})
			got, err := f.CallTool(context.Background(), "other", json.RawMessage(`{"n":1}`))
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("CallTool = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if ErrNoCallTool.Error() != "this host does not let scripts call tools" {
		t.Fatalf("ErrNoCallTool reads %q", ErrNoCallTool)
	}
}

func TestFuncsShell(t *testing.T) {
	tests := []struct {
		name    string
		shell   func(context.Context, string) (string, error)
		want    string
		wantErr error
	}{
		{"refused without a sandbox", nil, "", ErrNoSandbox},
		{"runs through the host's shell", func(_ context.Context, command string) (string, error) { return "ran " + command, nil }, "ran ls -l", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFuncs(FuncsConfig{Tool: "sh", Shell: tt.shell})
			got, err := f.Shell(context.Background(), "ls -l")
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("Shell = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && err.Error() != "shell needs the agent's sandbox, and this call has none (the agent has no workdir, or the tool was called outside an agent)" {
				t.Fatalf("refusal reads %q", err)
			}
		})
	}
}

func TestFuncsCallsAndLogsOrder(t *testing.T) {
	ec := newTestExec(t, 0)
	f := NewFuncs(FuncsConfig{
		Tool:     "order",
		Exec:     ec,
		Env:      map[string]string{"A": "1"},
		Permit:   func(fn string) error { return map[string]error{HostFnShell: errors.New("shell is denied")}[fn] },
		CallTool: func(context.Context, string, json.RawMessage) (string, error) { return "ok", nil },
		HTTP:     HTTPConfig{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("offline") })},
	})
	f.Log("start")
	_, _ = f.WriteFile("a.txt", "x")
	_, _ = f.Env("A")
	f.Log("middle")
	_, _ = f.Env("B")
	_, _ = f.Shell(context.Background(), "rm -rf /")
	_, _ = f.HTTPGet(context.Background(), "https://user:pw@api.test/v1/items?key=secret#frag", nil)
	_, _ = f.CallTool(context.Background(), "todo_list", json.RawMessage(`{}`))
	f.Log("end")

	wantCalls := []HostCall{
		{Fn: HostFnWriteFile, Arg: "a.txt", OK: true},
		{Fn: HostFnEnv, Arg: "A", OK: true},
		{Fn: HostFnEnv, Arg: "B", Err: `env: "B" is not available to script tool "order": environment variable not allowed (the host config's allow-list decides which variables scripts may read)`},
		{Fn: HostFnShell, Arg: "rm -rf /", Err: "shell is denied"},
		{Fn: HostFnHTTPGet, Arg: "https://api.test/v1/items?…", Err: "http_get https://api.test/v1/items?…: offline"},
		{Fn: HostFnCallTool, Arg: "todo_list", OK: true},
	}
	if got := f.Calls(); !slices.Equal(got, wantCalls) {
		t.Fatalf("Calls() =\n%+v\nwant\n%+v", got, wantCalls)
	}
	if got, want := f.Logs(), []string{"start", "middle", "end"}; !slices.Equal(got, want) {
		t.Fatalf("Logs() = %q, want %q", got, want)
	}
	var fns []string
	for _, n := range f.Notes() {
		fns = append(fns, n.Fn)
	}
	wantFns := []string{HostFnLog, HostFnWriteFile, HostFnEnv, HostFnLog, HostFnEnv, HostFnShell, HostFnHTTPGet, HostFnCallTool, HostFnLog}
	if !slices.Equal(fns, wantFns) {
		t.Fatalf("Notes() order = %v, want %v", fns, wantFns)
	}
}

func TestFuncsHostCallCap(t *testing.T) {
	f := NewFuncs(FuncsConfig{Tool: "loop", MaxHostCalls: 3, Env: map[string]string{"A": "1"}})
	for i := range 3 {
		if _, err := f.Env("A"); err != nil {
			t.Fatalf("call %d within the cap failed: %v", i+1, err)
		}
	}
	for i := range 3 {
		if _, err := f.Env("A"); !errors.Is(err, ErrTooManyHostCalls) {
			t.Fatalf("call %d past the cap: error = %v, want ErrTooManyHostCalls", i+1, err)
		}
	}
	calls := f.Calls()
	if len(calls) != 4 {
		t.Fatalf("recorded %d calls, want 3 plus the first refusal", len(calls))
	}
	if last := calls[3]; last.OK || !strings.Contains(last.Err, "at most 3 host function calls") {
		t.Fatalf("the first refusal is recorded as %+v", last)
	}
}

func TestFuncsLogCaps(t *testing.T) {
	tests := []struct {
		name     string
		maxCalls int
		maxBytes int
		lines    []string
		want     []string
	}{
		{"line cap", 2, 0, []string{"a", "b", "c", "d"}, []string{"a", "b", "dropped"}},
		{"byte cap", 0, 5, []string{"abc", "de", "f", "g"}, []string{"abc", "de", "dropped"}},
		{"one oversized line", 0, 4, []string{"toolong", "ok"}, []string{"dropped"}},
		{"within both caps", 3, 10, []string{"a", "b"}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFuncs(FuncsConfig{Tool: "chatty", MaxHostCalls: tt.maxCalls, MaxStringBytes: tt.maxBytes})
			for _, line := range tt.lines {
				f.Log(line)
			}
			got := f.Logs()
			if len(got) != len(tt.want) {
				t.Fatalf("Logs() = %q, want %d lines like %q", got, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if want == "dropped" {
					if !strings.HasPrefix(got[i], "[further log lines dropped") {
						t.Fatalf("line %d = %q, want the dropped note", i, got[i])
					}
					continue
				}
				if got[i] != want {
					t.Fatalf("line %d = %q, want %q", i, got[i], want)
				}
			}
		})
	}
}

func TestFuncsSummaries(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes of two-byte characters
	tests := []struct {
		name string
		call func(f *Funcs)
		want string
	}{
		{"short path kept", func(f *Funcs) { _, _ = f.ReadFile("a/b.txt") }, "a/b.txt"},
		{"long command cut at a character", func(f *Funcs) { _, _ = f.Shell(context.Background(), long) }, strings.Repeat("é", 98) + "…"},
		{"URL without credentials, query or fragment", func(f *Funcs) {
			_, _ = f.HTTPPost(context.Background(), "http://me:secret@api.test/a%20b?token=x", "", "", nil)
		}, "http://api.test/a%20b?…"},
		{"URL without query kept whole", func(f *Funcs) { _, _ = f.HTTPGet(context.Background(), "https://api.test/v1", nil) }, "https://api.test/v1"},
		{"unparseable URL shown as given", func(f *Funcs) { _, _ = f.HTTPGet(context.Background(), "http://[::1", nil) }, "http://[::1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFuncs(FuncsConfig{Tool: "sum", Permit: func(string) error { return errors.New("no") }})
			tt.call(f)
			if got := f.Calls()[0].Arg; got != tt.want {
				t.Fatalf("Arg = %q, want %q", got, tt.want)
			}
			if got := len(f.Calls()[0].Arg); got > summaryBytes {
				t.Fatalf("Arg is %d bytes, over %d", got, summaryBytes)
			}
		})
	}
}

// errorResultTool reports failure as an error Result rather than an error.
type errorResultTool struct{}

func (errorResultTool) Spec() tools.Spec { return tools.Spec{Name: "failing"} }

func (errorResultTool) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{Content: "it went wrong", IsError: true}, nil
}

func TestFuncsBuiltinErrorResult(t *testing.T) {
	f := NewFuncs(FuncsConfig{Tool: "t"})
	got, err := f.runBuiltin(HostFnReadFile, errorResultTool{}, pathArgs{Path: "a"})
	if err == nil || err.Error() != "it went wrong" || got != "" {
		t.Fatalf("runBuiltin = %q, %v; want the error result's text as the error", got, err)
	}
}

func TestFuncsConcurrentUse(t *testing.T) {
	const workers, each = 8, 50
	f := NewFuncs(FuncsConfig{Tool: "parallel", Env: map[string]string{"A": "1"}})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := f.Env("A"); err != nil {
					t.Errorf("Env: %v", err)
				}
				f.Log(fmt.Sprintf("%d-%d", w, i))
			}
		})
	}
	wg.Wait()
	if got := len(f.Calls()); got != workers*each {
		t.Fatalf("recorded %d calls, want %d", got, workers*each)
	}
	if got := len(f.Logs()); got != workers*each {
		t.Fatalf("recorded %d log lines, want %d", got, workers*each)
	}
}

func ExampleNewFuncs() {
	f := NewFuncs(FuncsConfig{
		Tool: "greeter",
		Env:  map[string]string{"GREETING": "hello"},
		Permit: func(fn string) error {
			if fn == HostFnHTTPGet {
				return errors.New("http_get is denied for this agent")
			}
			return nil
		},
	})
	greeting, _ := f.Env("GREETING")
	f.Log(greeting + ", world")
	_, err := f.HTTPGet(context.Background(), "https://example.com/", nil)
	fmt.Println(err)
	_, err = f.Env("HOME")
	fmt.Println(errors.Is(err, ErrEnvNotAllowed))
	for _, c := range f.Calls() {
		fmt.Printf("%s %s ok=%v\n", c.Fn, c.Arg, c.OK)
	}
	fmt.Println(f.Logs())
	// Output:
	// http_get is denied for this agent
	// true
	// env GREETING ok=true
	// http_get https://example.com/ ok=false
	// env HOME ok=false
	// [hello, world]
}

func BenchmarkFuncsEnv(b *testing.B) {
	env := map[string]string{"A": "1"}
	permit := func(string) error { return nil }
	for b.Loop() {
		f := NewFuncs(FuncsConfig{Tool: "bench", Env: env, Permit: permit})
		for range 4 {
			if _, err := f.Env("A"); err != nil {
				b.Fatal(err)
			}
		}
	}
}
