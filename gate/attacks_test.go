package gate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// attackLines reads the lines of the policy package's shell corpora that hide rm from the
// analysis: the first outside review's (evasion.txt, its lines whose target is rm or unknown)
// and the second's (attacks.txt, all of them).
func attackLines(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, name := range []string{"evasion.txt", "attacks.txt"} {
		data, err := os.ReadFile(filepath.Join("..", "policy", "testdata", "shell", name))
		if err != nil {
			t.Fatal(err)
		}
		for n, raw := range strings.Split(string(data), "\n") {
			if raw == "" || strings.HasPrefix(raw, "#") {
				continue
			}
			expect, line, ok := strings.Cut(raw, "\t")
			if !ok {
				t.Fatalf("%s:%d: no tab", name, n+1)
			}
			if quoted, ok := strings.CutPrefix(expect, "q "); ok {
				expect = quoted
				if line, err = strconv.Unquote(line); err != nil {
					t.Fatalf("%s:%d: %v", name, n+1, err)
				}
			}
			if expect == "unknowable" || expect == "opaque" || expect == policy.ProgramKey("rm", "") {
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// TestAttackCorpusNeverAllowed takes every corpus line through the whole gate as a shell call,
// the way dispatch does, in the configurations the reviews attacked, and requires that none is
// allowed without a person: unattended with no host config at all (the shipped safe commands,
// echo, cat, test and cd among them, the only cover), unattended under the deny-list
// shell = "allow", "shell:rm" = "deny" (denied), and under the read-only floor and while a plan is
// drafted (denied). A line that attacks a program the deny names is denied outright.
func TestAttackCorpusNeverAllowed(t *testing.T) {
	reg := registry(t)
	bp := loadBlueprint(t, agentBlueprint, reg)
	denyList := hostWith(t, "[tool_permissions]\nshell = \"allow\"\nwrite_file = \"allow\"\n\"shell:rm\" = \"deny\"\n")
	configs := []struct {
		name  string
		modes gate.Modes
		host  string
		want  policy.Verdict // the strictest verdict every line must get at least
	}{
		{"no host config, unattended", gate.Modes{Unattended: true}, "", policy.Deny},
		{"deny-list, attended", gate.Modes{}, "deny-list", policy.Ask},
		{"deny-list, unattended", gate.Modes{Unattended: true}, "deny-list", policy.Deny},
		{"read-only", gate.Modes{SafetyMode: tools.SafetyReadOnly}, "", policy.Deny},
		{"drafting a plan", gate.Modes{PlanFile: "PLAN.md"}, "deny-list", policy.Deny},
	}
	lines := attackLines(t)
	if len(lines) < 150 {
		t.Fatalf("the corpora hold %d lines, want at least 150", len(lines))
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			host := hostWith(t, "")
			if c.host == "deny-list" {
				host = denyList
			}
			pol, err := gate.ForGroup(bp, host, policy.Launch{}, c.modes)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range lines {
				args, _ := json.Marshal(map[string]string{"command": line})
				d := gate.Decide(pol, request(t, reg, bp, 0, "shell", string(args), nil))
				if d.Verdict < c.want {
					t.Errorf("%q: %v by %s (%s), keys %q; want at least %v", line, d.Verdict, d.Layer, d.Reason, d.Keys, c.want)
				}
			}
		})
	}
}
