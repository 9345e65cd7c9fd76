package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/sandbox"
)

// TestShellRefusesALinkedPlanFile: while a plan is drafted the gate lets one redirect through,
// to the plan file; a plan file that is a symbolic or a hard link to another workdir file would
// make that write change the other file (issue 31, the read-only floor). The command does not
// start, and the other file keeps its content.
func TestShellRefusesALinkedPlanFile(t *testing.T) {
	tests := []struct {
		name string
		make func(workdir string) error
		want string // "" when the command runs
	}{
		{"a plain plan file", func(w string) error { return os.WriteFile(filepath.Join(w, "PLAN.md"), []byte("x\n"), 0o644) }, ""},
		{"no plan file yet", func(string) error { return nil }, ""},
		{"a symbolic link", func(w string) error { return os.Symlink("main.go", filepath.Join(w, "PLAN.md")) }, "symbolic link"},
		{"a hard link", func(w string) error { return os.Link(filepath.Join(w, "main.go"), filepath.Join(w, "PLAN.md")) }, "hard link"},
		{"a folder", func(w string) error { return os.Mkdir(filepath.Join(w, "PLAN.md"), 0o755) }, "is a d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ec, workdir := shellContext(t, sandbox.ModeNone, nil)
			if err := os.WriteFile(filepath.Join(workdir, "main.go"), []byte("package main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(workdir); err != nil {
				t.Fatal(err)
			}
			ec.PlanFile = "PLAN.md"
			res, err := run(t, Shell{}, ec, `{"command":"echo plan >> PLAN.md"}`)
			if err != nil {
				t.Fatal(err)
			}
			main, _ := os.ReadFile(filepath.Join(workdir, "main.go"))
			switch {
			case tt.want == "" && res.IsError:
				t.Fatalf("result %q, want the command to run", res.Content)
			case tt.want != "" && (!res.IsError || !strings.Contains(res.Content, tt.want) || !strings.Contains(res.Content, ErrPlanFileNotPlain.Error())):
				t.Fatalf("result %q, want a refusal saying %q", res.Content, tt.want)
			case string(main) != "package main\n":
				t.Fatalf("main.go is now %q", main)
			}
		})
	}
	if err := checkPlanFile(&ExecContext{}, nil); err != nil {
		t.Fatalf("no plan drafted: %v, want no check", err)
	}
}
