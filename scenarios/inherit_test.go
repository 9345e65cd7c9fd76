package scenarios_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren"
)

// TestInheritAttack runs the shipped attack: a child blueprint allows itself write_file, which
// its parent's blueprint denies, and uses edit_file, which the parent holds only through
// --allow. Both lose, and the trace says why.
func TestInheritAttack(t *testing.T) {
	root := t.TempDir()
	sum, tr := runTraced(t, filepath.Join("examples", "inherit_attack.toml"), warren.Options{WorkRoot: root})
	if len(sum.Failures) > 0 {
		t.Fatalf("expectations failed: %v", sum.Failures)
	}
	events := decodeEvents(t, tr)
	wantLog(t, events, "guarded-0/1", []string{
		"enter work 1",
		"call write_file [write_file] deny by parent",
		"call edit_file [edit_file] deny by unattended",
		`result write_file error: permission denied for write_file by parent: agent of group guarded (stage "delegate" when it spawned this agent's line) holds deny for write_file (layer blueprint:agent): blueprint [tool_permissions] sets write_file = deny`,
		"result edit_file error: permission denied for edit_file by unattended: nobody is watching this run, and no grant or --yolo covers the ask (default: no layer sets edit_file; its built-in default is ask)",
	})
	wantNoFile(t, filepath.Join(root, "guarded", "guarded-0", "agents", "1", "secrets.txt"))
}

// TestInheritedModesAndGrants: a read-only parent has read-only children, and a parent's run
// grant does not cover its child, who is asked again.
func TestInheritedModesAndGrants(t *testing.T) {
	root := t.TempDir()
	_, events := runPermission(t, "inherit.toml", warren.Options{WorkRoot: root})
	wantLog(t, events, "readers-0/1", []string{
		"enter write 1",
		"call write_file [write_file] deny by safety:read-only",
		"result write_file error: permission denied for write_file by safety:read-only: read-only mode: write_file writes child.txt",
	})
	wantLog(t, events, "granters-0/1", []string{
		"enter write 1",
		"call write_file [write_file] ask by default",
		`prompt approval [write_file] ""`,
		`answer write_file "once" by script: allow`,
		`result write_file ok: Wrote 6 bytes to "child.txt" (new file)`,
	})
	wantFile(t, filepath.Join(root, "granters", "granters-0", "agents", "1", "child.txt"), "theirs")
	wantNoFile(t, filepath.Join(root, "readers", "readers-0", "agents", "1", "child.txt"))
}

// TestYoloIsInherited: with --yolo the child's ask is allowed like its parent's.
func TestYoloIsInherited(t *testing.T) {
	opt := warren.Options{WorkRoot: t.TempDir()}
	opt.Launch.Yolo = true
	_, events := runPermission(t, "inherit.toml", opt)
	if e := toolCall(t, events, "granters-0/1-t0-c0"); e.Verdict != "allow" || e.Layer != "launch:yolo" {
		t.Errorf("the child's write_file under --yolo: %s by %s, want allow by launch:yolo", e.Verdict, e.Layer)
	}
	if e := toolCall(t, events, "readers-0/1-t0-c0"); e.Verdict != "deny" || e.Layer != "safety:read-only" {
		t.Errorf("--yolo lifted the read-only floor of a read-only parent's child: %s by %s", e.Verdict, e.Layer)
	}
}

// wantNoFile fails the test if path exists: a refused write must leave nothing behind.
func wantNoFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: want no such file, got %v", path, err)
	}
}
