package blueprint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// stageLines is how many lines generated writes per stage.
const stageLines = 13

// generated is a blueprint of n stages in a ring, the shape of a long generated pipeline: each
// stage lists three tools, sets a stage permission and has two transitions, done to the next
// stage and error to the one before. Stage i's [[stages]] header is on line 7+stageLines*i.
func generated(n int) []byte {
	var b strings.Builder
	b.WriteString("name = \"ring\"\nmax_messages = 16\n\n[tool_permissions]\nread_file = \"allow\"\n")
	for i := range n {
		fmt.Fprintf(&b, "\n[[stages]]\nname = \"s%d\"\navailable_tools = [\"read_file\", \"write_file\", \"shell\"]\nmax_iterations = 3\n", i)
		b.WriteString("  [stages.tool_permissions]\n  write_file = \"ask\"\n")
		fmt.Fprintf(&b, "  [[stages.transitions]]\n  on = \"done\"\n  to = \"s%d\"\n", (i+1)%n)
		fmt.Fprintf(&b, "  [[stages.transitions]]\n  on = \"error\"\n  to = \"s%d\"\n", (i+n-1)%n)
	}
	return []byte(b.String())
}

// writeGenerated writes generated(n) to a file of a fresh folder and returns its path.
func writeGenerated(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ring.toml")
	if err := os.WriteFile(path, generated(n), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGeneratedStagesCompile loads a generated blueprint of MaxStages stages the way the
// scenario loader does (DeclaredServers, then Load) and checks that the compiled graph is the
// one written: every stage, its tools, permission and both transitions.
func TestGeneratedStagesCompile(t *testing.T) {
	path := writeGenerated(t, MaxStages)
	servers, err := DeclaredServers(path)
	if err != nil || len(servers) != 0 {
		t.Fatalf("DeclaredServers: %v, %v", servers, err)
	}
	bp, err := Load(path, testTools)
	if err != nil {
		t.Fatal(err)
	}
	if len(bp.Stages) != MaxStages || bp.Entry != 0 || bp.MaxMessages != 16 {
		t.Fatalf("%d stages, entry %d, max_messages %d", len(bp.Stages), bp.Entry, bp.MaxMessages)
	}
	for i := range bp.Stages {
		st := &bp.Stages[i]
		next, _ := st.Next(OutcomeDone)
		back, _ := st.Next(OutcomeError)
		if st.Name != fmt.Sprintf("s%d", i) || st.Index != i || next != (i+1)%MaxStages || back != (i+MaxStages-1)%MaxStages ||
			!st.Advertises("shell") || st.Advertises("edit_file") || st.MaxIterations != 3 || len(st.ToolPermissions) != 1 {
			t.Fatalf("stage %d: %+v", i, st)
		}
	}
	if got, ok := bp.Stage(fmt.Sprintf("s%d", MaxStages-1)); !ok || got.Index != MaxStages-1 {
		t.Errorf("the last stage by name: %+v, %v", got, ok)
	}
}

// TestTooManyStages: one stage past MaxStages is a load error at that stage's header, naming
// the cap; DeclaredServers leaves it to Load.
func TestTooManyStages(t *testing.T) {
	path := writeGenerated(t, MaxStages+1)
	if _, err := DeclaredServers(path); err != nil {
		t.Errorf("DeclaredServers: %v", err)
	}
	_, err := Load(path, testTools)
	want := fmt.Sprintf("%s:%d:3: stages[%d]: too many stages: %d; a blueprint has at most %d stages",
		path, 7+stageLines*MaxStages, MaxStages, MaxStages+1, MaxStages)
	if !errors.Is(err, ErrTooMany) || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

// TestFileTooLarge: a file over MaxFileBytes is refused before it is decoded, by Load and by
// DeclaredServers, at its first line.
func TestFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.toml")
	data := []byte("name = \"huge\"\n" + strings.Repeat("# padding\n", MaxFileBytes/10))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s:1:1: too many: the file is %d bytes; a blueprint is at most %d bytes (16 MiB)", path, len(data), MaxFileBytes)
	for name, load := range map[string]func() error{
		"Load":            func() error { _, err := Load(path, testTools); return err },
		"DeclaredServers": func() error { _, err := DeclaredServers(path); return err },
	} {
		if err := load(); !errors.Is(err, ErrTooMany) || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", name, err, want)
		}
	}
}

// BenchmarkCompileStages loads generated blueprints of 1,000, 5,000 and 20,000 stages as the
// scenario loader does (DeclaredServers, then Load, from the file): ns/stage and B/stage stay
// flat when compilation is linear in the stage count.
//
//	go test ./blueprint/ -run '^$' -bench CompileStages -benchtime 3x
func BenchmarkCompileStages(b *testing.B) {
	for _, n := range []int{1000, 5000, 20000} {
		path := writeGenerated(b, n)
		b.Run(fmt.Sprintf("stages=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				if _, err := DeclaredServers(path); err != nil {
					b.Fatal(err)
				}
				if _, err := Load(path, testTools); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			per := float64(b.N) * float64(n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/stage")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/per, "B/stage")
		})
	}
}
