package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// recorder is a testing.TB that records what MustHave asked of it instead of ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestMustHave(t *testing.T) {
	const reason = "bwrap: bwrap not found in PATH: install bubblewrap (apt-get install -y bubblewrap)"
	tests := []struct {
		name, env, reason string
		skip, fail        bool
	}{
		{"present", "", "", false, false},
		{"present, required", "1", "", false, false},
		{"missing skips", "", reason, true, false},
		{"missing fails when required", "1", reason, false, true},
		{"only 1 requires", "0", reason, true, false},
		{"only 1 requires, not yes", "yes", reason, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(RequireVar, tt.env)
			r := &recorder{}
			MustHave(r, tt.reason)
			if (r.skipped != "") != tt.skip || (r.failed != "") != tt.fail {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, tt.skip, tt.fail)
			}
			for _, msg := range []string{r.skipped, r.failed} {
				if msg != "" && (!strings.Contains(msg, tt.reason) || !strings.Contains(msg, RequireVar)) {
					t.Errorf("%q: want the reason and %s named", msg, RequireVar)
				}
			}
		})
	}
}

func TestMustHaveProgram(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, env := range []string{"", "1"} {
		t.Setenv(RequireVar, env)
		r := &recorder{}
		if path := MustHaveProgram(r, "strace", "strace"); path != "" {
			t.Fatalf("found %s in an empty PATH", path)
		}
		got, other := r.skipped, r.failed
		if env == "1" {
			got, other = r.failed, r.skipped
		}
		if want := "strace not found in PATH: install it (apt-get install -y strace)"; !strings.Contains(got, want) || other != "" {
			t.Errorf("%s=%q: skipped %q, failed %q; want %q in the %s", RequireVar, env, r.skipped, r.failed, want,
				map[string]string{"": "skip", "1": "failure"}[env])
		}
	}
	t.Setenv("PATH", "/usr/bin:/bin")
	r := &recorder{}
	if path := MustHaveProgram(r, "sh", "dash"); path == "" || r.skipped != "" || r.failed != "" {
		t.Errorf("sh: path %q, skipped %q, failed %q", path, r.skipped, r.failed)
	}
}

// TestMustHaveEndsTheTest runs TestMissingHelper in a child test binary, under each setting of
// RequireVar, and reads how the real testing package reported it.
func TestMustHaveEndsTheTest(t *testing.T) {
	if os.Getenv("WARREN_TESTENV_HELPER") == "1" {
		t.Skip("the child itself")
	}
	for _, tc := range []struct{ env, want string }{{"", "--- SKIP: TestMissingHelper"}, {"1", "--- FAIL: TestMissingHelper"}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMissingHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "WARREN_TESTENV_HELPER=1", RequireVar+"="+tc.env)
		out, err := cmd.CombinedOutput()
		if (err != nil) != (tc.env == "1") || !strings.Contains(string(out), tc.want) ||
			!strings.Contains(string(out), "the test mechanism") || strings.Contains(string(out), "went on") {
			t.Errorf("%s=%q: %v\n%s", RequireVar, tc.env, err, out)
		}
	}
}

// TestMissingHelper is the child of TestMustHaveEndsTheTest.
func TestMissingHelper(t *testing.T) {
	if os.Getenv("WARREN_TESTENV_HELPER") != "1" {
		t.Skip("run by TestMustHaveEndsTheTest")
	}
	MustHave(t, "the test mechanism is missing")
	t.Log("went on")
}
