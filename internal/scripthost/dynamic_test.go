package scripthost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/testenv"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/tools"
)

// scriptStub is the tool the host makes of a dynamic script, reduced to its spec: these tests
// are about which files the host reads, not about running them.
type scriptStub struct{ s *scripting.Script }

func (t scriptStub) Spec() tools.Spec {
	return tools.Spec{Name: t.s.Name, Description: t.s.Description, Parameters: t.s.Parameters}
}
func (scriptStub) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, nil
}

// toolSource is a dynamic tool's valid source defining the tool name.
func toolSource(name string) string {
	return `defineTool({ name: "` + name + `", description: "d", parameters: { type: "object" }, run: function () { return "ok"; } });` + "\n"
}

// secret is what a host file holds that no agent may read; as a script it fails to compile with
// an error quoting it, which is how it would reach the agent and the trace.
const secret = "SECRET_TOKEN_k9F2xQ"

// hostSecrets is a host folder outside every workdir holding a valid tool and a secret.
func hostSecrets(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"host.js": toolSource("host_tool"), "leak.js": secret + "\n", "secret": secret + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scan runs the host's dynamic-tools scan once for an agent working in workdir and returns the
// agent's data (its dynamic tools and what it was told).
func scan(t *testing.T, workdir string) *components.AgentData {
	t.Helper()
	h := NewDynamic(func(s *scripting.Script) tools.Tool { return scriptStub{s} }, nil)
	d := &components.AgentData{Name: "a", Workdir: workdir}
	p := &components.Profile{Tools: tools.NewScoped(tools.NewRegistry())}
	h.Scan(1, 0, &components.Identity{ID: 1}, d, p, 0)
	return d
}

// dynamicNames are the agent's dynamic tools.
func dynamicNames(d *components.AgentData) []string {
	if d.Dynamic == nil {
		return nil
	}
	return d.Dynamic.Names
}

// told is everything the agent was told.
func told(d *components.AgentData) string {
	var sb strings.Builder
	for _, m := range d.Inbox {
		sb.WriteString(m.Content + "\n")
	}
	return sb.String()
}

// TestDynamicToolsReadOnlyTheWorkdir: the dynamic-tools scan, run by the host (as root on a root
// host) on the world goroutine, reads only regular files inside the agent's workdir, and no more
// than maxDynamicToolBytes of one: a link out of the workdir, a FIFO, a huge file or a workdir
// reached through a link give the agent nothing, and no host file's content reaches it.
func TestDynamicToolsReadOnlyTheWorkdir(t *testing.T) {
	newWorkdir := func(t *testing.T) string {
		t.Helper()
		w := filepath.Join(t.TempDir(), "work")
		if err := os.MkdirAll(filepath.Join(w, dynamicDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w, dynamicDir, "own.js"), []byte(toolSource("own")), 0o644); err != nil {
			t.Fatal(err)
		}
		return w
	}
	t.Run("a tool of its own is read", func(t *testing.T) {
		if got := dynamicNames(scan(t, newWorkdir(t))); len(got) != 1 || got[0] != "own" {
			t.Fatalf("dynamic tools %v, want [own]", got)
		}
	})
	t.Run("the tools folder is a link to a host folder", func(t *testing.T) {
		w := filepath.Join(t.TempDir(), "work")
		if err := os.Mkdir(w, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(hostSecrets(t), filepath.Join(w, dynamicDir)); err != nil {
			t.Fatal(err)
		}
		d := scan(t, w)
		if names := dynamicNames(d); len(names) != 0 || strings.Contains(told(d), secret) {
			t.Fatalf("dynamic tools %v, told %q: the host read a host folder for the agent", names, told(d))
		}
	})
	t.Run("a tool file is a link to a host file", func(t *testing.T) {
		w := newWorkdir(t)
		if err := os.Symlink(filepath.Join(hostSecrets(t), "leak.js"), filepath.Join(w, dynamicDir, "leak.js")); err != nil {
			t.Fatal(err)
		}
		d := scan(t, w)
		if names := dynamicNames(d); len(names) != 1 || strings.Contains(told(d), secret) {
			t.Fatalf("dynamic tools %v, told %q", names, told(d))
		}
	})
	t.Run("the workdir is reached through a link", func(t *testing.T) {
		base := t.TempDir()
		host := filepath.Join(base, "host")
		if err := os.MkdirAll(filepath.Join(host, dynamicDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(host, dynamicDir, "leak.js"), []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(host, filepath.Join(base, "child")); err != nil {
			t.Fatal(err)
		}
		d := scan(t, filepath.Join(base, "child"))
		if strings.Contains(told(d), secret) || d.Dynamic != nil {
			t.Fatalf("told %q: the host read through a link on the workdir's path", told(d))
		}
	})
	t.Run("the tools folder is a FIFO", func(t *testing.T) {
		w := filepath.Join(t.TempDir(), "work")
		if err := os.Mkdir(w, 0o755); err != nil {
			t.Fatal(err)
		}
		fifo := filepath.Join(w, dynamicDir)
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		var d *components.AgentData
		if testenv.FIFOOpened(t, fifo, func() { d = scan(t, w) }) {
			t.Fatal("the scan opened the FIFO (without a writer, that blocks the world)")
		}
		if names := dynamicNames(d); len(names) != 0 {
			t.Fatalf("dynamic tools %v", names)
		}
	})
	t.Run("a tool file is a FIFO", func(t *testing.T) {
		w := newWorkdir(t)
		fifo := filepath.Join(w, dynamicDir, "pipe.js")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		var d *components.AgentData
		if testenv.FIFOOpened(t, fifo, func() { d = scan(t, w) }) {
			t.Fatal("the scan opened the FIFO")
		}
		if names := dynamicNames(d); len(names) != 1 {
			t.Fatalf("dynamic tools %v, want the agent's own", names)
		}
	})
	t.Run("a tool file swapped for a FIFO after the listing", func(t *testing.T) {
		// The listing saw a regular file; by the time the scan reads it, the agent's command has
		// put a FIFO in its place. The read must refuse it without opening it.
		w := newWorkdir(t)
		fifo := filepath.Join(w, dynamicDir, "swapped.js")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		root, err := tools.OpenWorkdir(w)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		if testenv.FIFOOpened(t, fifo, func() { _, err = readDynamic(root, dynamicDir+"/swapped.js") }) {
			t.Fatal("the read opened the FIFO (without a writer, that blocks the world)")
		}
		if err == nil || err.Error() != "tools/swapped.js: not a regular file" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a tool file nested 400,000 levels deep", func(t *testing.T) {
		// It used to overflow goja's parser stack: a fatal error that killed the host.
		w := newWorkdir(t)
		src := "defineTool({ name: \"deep\", description: \"d\", parameters: { type: \"object\" },\n  run() { return " +
			strings.Repeat("[", 400_000) + strings.Repeat("]", 400_000) + " } });\n"
		if err := os.WriteFile(filepath.Join(w, dynamicDir, "deep.js"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		d := scan(t, w)
		if names := dynamicNames(d); len(names) != 1 || names[0] != "own" {
			t.Fatalf("dynamic tools %v, want only [own]", names)
		}
		if want := "tools/deep.js:2:"; !strings.Contains(told(d), want) || !strings.Contains(told(d), "nest deeper than 1000 levels") {
			t.Fatalf("told %q, want the nesting refusal at %s", told(d), want)
		}
	})
	t.Run("a huge tool file", func(t *testing.T) {
		w := newWorkdir(t)
		src := toolSource("huge") + "//" + strings.Repeat("x", maxDynamicToolBytes) + "\n"
		if err := os.WriteFile(filepath.Join(w, dynamicDir, "huge.js"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		d := scan(t, w)
		if names := dynamicNames(d); len(names) != 1 || names[0] != "own" {
			t.Fatalf("dynamic tools %v, want only [own]", names)
		}
		if want := "tools/huge.js: larger than the 1048576 bytes a dynamic tool may have"; !strings.Contains(told(d), want) {
			t.Fatalf("told %q, want %q", told(d), want)
		}
	})
}
