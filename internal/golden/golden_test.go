package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder captures failures so a test can assert that Check fails.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("want\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := &recorder{TB: t}
	Check(same, path, "want\n")
	if same.failed {
		t.Error("Check failed on equal output")
	}
	differs := &recorder{TB: t}
	Check(differs, path, "got\n")
	if !differs.failed {
		t.Error("Check passed on different output")
	}
	missing := &recorder{TB: t}
	Check(missing, filepath.Join(t.TempDir(), "absent"), "x")
	if !missing.failed {
		t.Error("Check passed without a golden file")
	}
}

func TestCheckUpdates(t *testing.T) {
	*update = true
	defer func() { *update = false }()
	path := filepath.Join(t.TempDir(), "new.golden")
	Check(t, path, "fresh\n")
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "fresh\n" || !Updating() {
		t.Fatalf("golden not written: %q %v", got, err)
	}
}
