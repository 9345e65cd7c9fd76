package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// attackReal are the programs that run for real when the attack corpus runs: the dialect test's,
// and the ones whose options the attacks abuse (sed's e command, awk's system, zip's test
// command).
var attackReal = append(slices.Clone(dialectReal), "sed", "awk", "mawk", "gawk")

// attackFixture makes the attack corpus's workdir: the victim, a file to read, a program of the
// agent's (bin/ls, the stub, so that its run is recorded by its path), and a file and a folder
// whose names hold code that bash runs if it evaluates them.
func attackFixture(work string) error {
	for _, f := range []string{"victim", "f"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("1\n"), 0o644); err != nil {
			return err
		}
	}
	for _, d := range []string{"bin", "d[$(cd ..; rm -f victim)]"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(work, "a[$(rm -f victim)]"), nil, 0o644); err != nil {
		return err
	}
	return os.Symlink(dialectRoot+"/stub", filepath.Join(work, "bin", "ls"))
}

// attackRan reports whether a run started rm or a program from the workdir (any path outside
// the system folders): what the attack was after.
func attackRan(r dialectRun) bool {
	for _, e := range r.execs {
		if filepath.Base(e.name) == "rm" || !filepath.IsAbs(e.name) || strings.HasPrefix(e.name, "/w/") {
			return true
		}
	}
	return false
}

// TestAttacksRunForReal runs every line of the second review's corpus (attacks.txt) with the
// real executor, bash as the sandbox runs it, in a workdir made by attackFixture, and checks that
// each does start rm or the agent's own program: the corpus holds attacks, not lines that would
// have been harmless anyway. What the analysis says of them is the corpus tests' to check
// (TestShellEvasionCorpus, TestEvasionCorpusDenied, the gate's TestAttackCorpusNeverAllowed).
func TestAttacksRunForReal(t *testing.T) {
	bwrap := requireBwrap(t)
	cases := readShellCorpus(t, "attacks.txt")
	if len(cases) < 28 {
		t.Fatalf("attacks.txt has %d lines, want at least the review's 28", len(cases))
	}
	env := newDialectEnvWith(t, []string{"rm", "ls", "cat", "head", "wc", "zip", "sed", "awk"}, attackReal)
	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, 4)
	)
	for _, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := env.runIn(bwrap, c.line, attackFixture)
			switch {
			case err != nil:
				t.Errorf("%s: %v", c.where(), err)
			case !attackRan(r):
				t.Errorf("%s: ran %v, neither rm nor a program of the workdir: the line is no attack here\n%s", c.where(), r.execs, r.output)
			}
		}()
	}
	wg.Wait()
}
