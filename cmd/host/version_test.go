package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// TestVersion: host --version prints Warren's version (the constant trace headers carry), the Go
// version and what the build recorded of the VCS revision, and exits 0; the real binary says the
// same.
func TestVersion(t *testing.T) {
	r := host(t, "--version")
	wantCode(t, r, exitOK)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "warren   "+warren.Version ||
		lines[1] != "go       "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH || !strings.HasPrefix(lines[2], "revision ") {
		t.Errorf("host --version:\n%s", r.stdout)
	}
	if warren.Version == "" || strings.ContainsAny(warren.Version, " \n\"") {
		t.Errorf("warren.Version = %q: want one word, as a trace header carries it", warren.Version)
	}

	bin, repo := buildBinary(t)
	code, stdout, stderr := runIn(t, bin, repo, nil, "--version")
	if code != exitOK || !strings.HasPrefix(stdout, "warren   "+warren.Version+"\n") || !strings.Contains(stdout, "\nrevision ") {
		t.Errorf("the binary's --version: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
