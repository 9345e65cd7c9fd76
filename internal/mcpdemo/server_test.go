package mcpdemo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/moby/sys/reexec"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// serverBinary is the server the tests start: this test binary, run under mcpconfig.DemoReexecName (as
// command = "@demo" starts the host binary), where it runs Main as cmd/mcpserver's main does.
// Building cmd/mcpserver instead cost a go build (about two seconds) per test run.
var serverBinary string

func TestMain(m *testing.M) {
	reexec.Init() // the server, when started under mcpconfig.DemoReexecName: it exits there
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "finding the test binary:", err)
		os.Exit(1)
	}
	serverBinary = self
	os.Exit(m.Run())
}

// lockedBuffer collects a process's output safely across goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serverProcess is one running mcpserver and the client connected to it.
type serverProcess struct {
	cmd    *exec.Cmd
	client *client.Client
	stdout *lockedBuffer // stdio mode: every byte the server wrote, for garbage checks
	stderr *lockedBuffer
	waited chan error
}

// wait returns the process's exit error once it ends, or fails the test after timeout.
func (p *serverProcess) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-p.waited:
		p.waited <- err
		return err
	case <-time.After(timeout):
		t.Fatalf("server did not exit within %v; stderr:\n%s", timeout, p.stderr.String())
		return nil
	}
}

func startProcess(t *testing.T, args ...string) (*serverProcess, io.WriteCloser, io.Reader) {
	t.Helper()
	cmd := exec.Command(serverBinary, args...)
	cmd.Args[0] = mcpconfig.DemoReexecName
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, waited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.client != nil {
			_ = p.client.Close()
		}
		_ = stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM) // ends http mode; stdio mode already saw EOF
		select {
		case <-p.waited:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-p.waited
		}
	})
	return p, stdin, stdout
}

// startStdio runs the server in stdio mode and connects an initialised mcp-go client to it.
func startStdio(t *testing.T, args ...string) *serverProcess {
	t.Helper()
	p, stdin, stdout := startProcess(t, append([]string{"--transport", "stdio", "--log-level", "debug"}, args...)...)
	go func() { p.waited <- p.cmd.Wait() }()
	tr := transport.NewIO(io.TeeReader(stdout, p.stdout), stdin, nil)
	p.client = client.NewClient(tr)
	initialise(t, p.client)
	return p
}

// startHTTP runs the server in http mode on port 0 and returns it with the URL it announced.
func startHTTP(t *testing.T, args ...string) (*serverProcess, string) {
	t.Helper()
	p, _, stdout := startProcess(t, append([]string{"--transport", "http", "--listen", "127.0.0.1:0", "--log-level", "debug"}, args...)...)
	lines := bufio.NewReader(stdout)
	url, err := ReadAnnouncement(lines)
	if err != nil {
		t.Fatalf("read announced URL: %v; stderr:\n%s", err, p.stderr.String())
	}
	go func() {
		_, _ = io.Copy(p.stdout, lines)
		p.waited <- p.cmd.Wait()
	}()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("announced URL = %q, want http://127.0.0.1:PORT/mcp", url)
	}
	p.client = newHTTPClient(t, url)
	return p, url
}

func newHTTPClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	initialise(t, c)
	return c
}

func initialise(t *testing.T, c *client.Client) *mcp.InitializeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start client: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "warren-test-client", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

// call invokes a tool with a deadline and returns its result.
func call(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

// text returns the single text content of a result.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d content items, want 1", len(res.Content))
	}
	tc, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// transports starts a fresh server per transport and returns its client.
var transports = []struct {
	name  string
	start func(t *testing.T, args ...string) *serverProcess
}{
	{"stdio", startStdio},
	{"http", func(t *testing.T, args ...string) *serverProcess { p, _ := startHTTP(t, args...); return p }},
}

func TestInitializeAndListTools(t *testing.T) {
	wantRequired := map[string][]string{
		"big":     {"bytes"},
		"crash":   nil,
		"echo":    {"text"},
		"garbage": nil,
		"kv_get":  {"key"},
		"kv_list": nil,
		"kv_set":  {"key", "value"},
		"slow":    {"ms"},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			p := tr.start(t, "--name", "custom-"+tr.name)
			res := initialise(t, p.client) // a second initialize must also succeed
			if res.ServerInfo.Name != "custom-"+tr.name {
				t.Errorf("server name = %q, want %q", res.ServerInfo.Name, "custom-"+tr.name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			list, err := p.client.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				want, known := wantRequired[tool.Name]
				if !known {
					t.Errorf("unexpected tool %q", tool.Name)
					continue
				}
				if tool.Description == "" {
					t.Errorf("%s has no description", tool.Name)
				}
				if tool.InputSchema.Type != "object" {
					t.Errorf("%s schema type = %q, want object", tool.Name, tool.InputSchema.Type)
				}
				got := append([]string(nil), tool.InputSchema.Required...)
				sort.Strings(got)
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%s required = %v, want %v", tool.Name, got, want)
				}
				for _, prop := range want {
					if _, ok := tool.InputSchema.Properties[prop]; !ok {
						t.Errorf("%s schema lacks property %q", tool.Name, prop)
					}
				}
			}
			sort.Strings(names)
			if len(names) != len(wantRequired) {
				t.Errorf("tools = %v, want %d tools", names, len(wantRequired))
			}
			slow := findTool(list.Tools, "slow")
			ms, _ := slow.InputSchema.Properties["ms"].(map[string]any)
			if ms["type"] != "integer" || ms["minimum"] != 0.0 || ms["maximum"] != float64(maxSlowMillis) {
				t.Errorf("slow.ms schema = %v, want integer 0..%d", ms, maxSlowMillis)
			}
		})
	}
}

func findTool(tools []mcp.Tool, name string) mcp.Tool {
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	return mcp.Tool{}
}

func TestToolCalls(t *testing.T) {
	type step struct {
		tool    string
		args    map[string]any
		want    string // exact text, unless wantLen >= 0
		wantLen int
		wantErr bool // an isError result
	}
	exact := func(tool string, args map[string]any, want string) step {
		return step{tool: tool, args: args, want: want, wantLen: -1}
	}
	failing := func(tool string, args map[string]any) step {
		return step{tool: tool, args: args, wantLen: -1, wantErr: true}
	}
	sized := func(n int) step {
		return step{tool: "big", args: map[string]any{"bytes": n}, wantLen: n}
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"echo", []step{exact("echo", map[string]any{"text": "héllo\nworld"}, "héllo\nworld")}},
		{"echo empty", []step{exact("echo", map[string]any{"text": ""}, "")}},
		{"kv set get list", []step{
			exact("kv_list", nil, "[]"),
			exact("kv_set", map[string]any{"key": "b", "value": "2"}, "ok"),
			exact("kv_set", map[string]any{"key": "a", "value": "1"}, "ok"),
			exact("kv_set", map[string]any{"key": "b", "value": "3"}, "ok"),
			exact("kv_get", map[string]any{"key": "b"}, "3"),
			exact("kv_list", map[string]any{}, `[{"key":"a","value":"1"},{"key":"b","value":"3"}]`),
		}},
		{"slow", []step{exact("slow", map[string]any{"ms": 20}, "slept 20 ms"), exact("slow", map[string]any{"ms": 0}, "slept 0 ms")}},
		{"big sizes", []step{sized(0), sized(1), sized(1 << 20), sized(maxBigBytes)}},
		{"bad inputs", []step{
			failing("kv_get", map[string]any{"key": "never-set"}),
			failing("kv_set", map[string]any{"key": "k"}),
			failing("echo", map[string]any{}),
			failing("echo", map[string]any{"text": 5}),
			failing("echo", map[string]any{"text": "x", "unknown": true}),
			failing("slow", map[string]any{"ms": -1}),
			failing("slow", map[string]any{"ms": maxSlowMillis + 1}),
			failing("slow", map[string]any{"ms": 1.5}),
			failing("big", map[string]any{"bytes": maxBigBytes + 1}),
			failing("big", map[string]any{"bytes": "10"}),
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			p := tr.start(t)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					for i, s := range tc.steps {
						// A guard against a hang, not a speed limit: a 16 MiB reply under -race on
						// a loaded 2-core machine has taken over 30 s.
						ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
						res, err := call(ctx, p.client, s.tool, s.args)
						cancel()
						if err != nil {
							t.Fatalf("step %d %s(%v): %v", i, s.tool, s.args, err)
						}
						if res.IsError != s.wantErr {
							t.Fatalf("step %d %s(%v): isError = %v, want %v (%v)", i, s.tool, s.args, res.IsError, s.wantErr, res.Content)
						}
						if s.wantErr {
							continue
						}
						got := text(t, res)
						if s.wantLen >= 0 {
							if len(got) != s.wantLen {
								t.Errorf("step %d big(%d): got %d bytes", i, s.wantLen, len(got))
							}
							continue
						}
						if got != s.want {
							t.Errorf("step %d %s(%v) = %q, want %q", i, s.tool, s.args, got, s.want)
						}
					}
				})
			}
		})
	}
}

func TestKVSharedAcrossHTTPClients(t *testing.T) {
	t.Parallel()
	p, url := startHTTP(t)
	other := newHTTPClient(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := call(ctx, p.client, "kv_set", map[string]any{"key": "shared", "value": "from-first"}); err != nil {
		t.Fatal(err)
	}
	res, err := call(ctx, other, "kv_get", map[string]any{"key": "shared"})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || text(t, res) != "from-first" {
		t.Fatalf("second client read %v, want from-first", res.Content)
	}
	if _, err := call(ctx, other, "kv_set", map[string]any{"key": "also", "value": "from-second"}); err != nil {
		t.Fatal(err)
	}
	res, err = call(ctx, p.client, "kv_list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var entries []kvEntry
	if err := json.Unmarshal([]byte(text(t, res)), &entries); err != nil {
		t.Fatal(err)
	}
	want := []kvEntry{{"also", "from-second"}, {"shared", "from-first"}}
	if fmt.Sprint(entries) != fmt.Sprint(want) {
		t.Errorf("kv_list = %v, want %v", entries, want)
	}
}

func TestSlowCancelledByClient(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			p := tr.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			began := time.Now()
			_, err := call(ctx, p.client, "slow", map[string]any{"ms": maxSlowMillis})
			if err == nil {
				t.Fatal("slow with a cancelled context returned no error")
			}
			if elapsed := time.Since(began); elapsed > 5*time.Second {
				t.Fatalf("cancelled slow took %v", elapsed)
			}
			// The server must still answer, and must have stopped the sleep.
			ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel2()
			res, err := call(ctx2, p.client, "echo", map[string]any{"text": "alive"})
			if err != nil || text(t, res) != "alive" {
				t.Fatalf("echo after cancel: %v, %v", res, err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(p.stderr.String(), "slow cancelled") {
				if time.Now().After(deadline) {
					t.Fatalf("server never logged the cancellation; stderr:\n%s", p.stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestCrashExitsWithCode3(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			p := tr.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := call(ctx, p.client, "crash", nil); err == nil {
				t.Fatal("crash returned a result, want an error")
			}
			if ctx.Err() != nil {
				t.Fatal("client waited for its deadline instead of seeing the crash")
			}
			var exitErr *exec.ExitError
			if err := p.wait(t, 5*time.Second); !errors.As(err, &exitErr) || exitErr.ExitCode() != ExitCrash {
				t.Fatalf("exit = %v, want exit code %d", err, ExitCrash)
			}
		})
	}
}

func TestGarbage(t *testing.T) {
	t.Run("stdio writes a non-JSON line", func(t *testing.T) {
		t.Parallel()
		p := startStdio(t)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := call(ctx, p.client, "garbage", nil)
		if err != nil {
			t.Fatal(err)
		}
		if text(t, res) != "garbage emitted" {
			t.Errorf("garbage result = %q", text(t, res))
		}
		var bad []string
		for _, line := range strings.Split(p.stdout.String(), "\n") {
			if line != "" && !json.Valid([]byte(line)) {
				bad = append(bad, line)
			}
		}
		if len(bad) != 1 || bad[0]+"\n" != GarbageLine {
			t.Errorf("non-JSON lines on stdout = %q, want exactly %q", bad, GarbageLine)
		}
	})
	t.Run("http answers a non-JSON body", func(t *testing.T) {
		t.Parallel()
		p, _ := startHTTP(t)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if res, err := call(ctx, p.client, "garbage", nil); err == nil {
			t.Fatalf("garbage over HTTP returned %v, want a client error", res.Content)
		}
		res, err := call(ctx, p.client, "echo", map[string]any{"text": "still fine"})
		if err != nil || text(t, res) != "still fine" {
			t.Fatalf("echo after garbage: %v, %v", res, err)
		}
	})
}

func TestBadUsageExits2(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"unknown transport", []string{"--transport", "carrier-pigeon"}},
		{"unknown flag", []string{"--nope"}},
		{"bad log level", []string{"--log-level", "loud"}},
		{"unexpected argument", []string{"extra"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := Main(tc.args, strings.NewReader(""), io.Discard, &stderr)
			if code != exitUsage {
				t.Errorf("exit code = %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), "mcpserver:") {
				t.Errorf("stderr = %q, want an explanation", stderr.String())
			}
		})
	}
}

func TestBadListenAddressFails(t *testing.T) {
	var stderr bytes.Buffer
	code := Main([]string{"--transport", "http", "--listen", "256.0.0.1:bad"}, strings.NewReader(""), io.Discard, &stderr)
	if code != exitFailure {
		t.Errorf("exit code = %d, want %d; stderr: %s", code, exitFailure, stderr.String())
	}
}

func TestStdioEndsCleanlyOnEOF(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main(nil, strings.NewReader(""), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit code = %d, want 0; stderr: %s", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing (logs belong on stderr)", stdout.String())
	}
}

func TestHTTPShutsDownCleanlyOnSIGTERM(t *testing.T) {
	t.Parallel()
	p, _ := startHTTP(t)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, 5*time.Second); err != nil {
		t.Fatalf("exit after SIGTERM = %v, want clean exit; stderr:\n%s", err, p.stderr.String())
	}
}
