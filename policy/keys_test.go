package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestKeyForms(t *testing.T) {
	cases := []struct {
		name, key            string
		shell, redirect, env bool
		program              string
	}{
		{"plain command", ProgramKey("ls", ""), true, false, false, "ls"},
		{"subcommand", ProgramKey("git", "push"), true, false, false, "git"},
		{"redirect", RedirectKey("out.txt"), true, true, false, ""},
		{"redirect to a path with spaces", RedirectKey("my file="), true, true, false, ""},
		{"env assignment", EnvKey("LD_PRELOAD"), true, false, true, ""},
		{"tool name", "write_file", false, false, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if IsShellKey(tc.key) != tc.shell || IsRedirectKey(tc.key) != tc.redirect || IsEnvKey(tc.key) != tc.env || KeyProgram(tc.key) != tc.program {
				t.Fatalf("%q: shell=%v redirect=%v env=%v program=%q", tc.key,
					IsShellKey(tc.key), IsRedirectKey(tc.key), IsEnvKey(tc.key), KeyProgram(tc.key))
			}
		})
	}
	if ProgramKey("git", "push") != "shell:git push" || RedirectKey("a") != "shell:>a" || EnvKey("X") != "shell:X=" {
		t.Fatal("key spellings changed; they are part of the config format")
	}
}

func TestCheckName(t *testing.T) {
	known := []string{"read_file", "write_file"}
	for _, tc := range []struct {
		name string
		ok   bool
		says string
	}{
		{"write_file", true, ""},
		{"shell:rm", true, ""},
		{"shell:git push", true, ""},
		{"shell:>out.txt", true, ""},
		{"wrte_file", false, `unknown tool or key "wrte_file"; valid: a tool the host knows (read_file, write_file)`},
		{"shell:", false, `a shell key names a program`},
		{"rm", false, `or a shell key such as "shell:rm"`},
	} {
		err := CheckName(tc.name, known)
		if (err == nil) != tc.ok || (err != nil && (!errors.Is(err, ErrUnknownName) || !strings.Contains(err.Error(), tc.says))) {
			t.Errorf("CheckName(%q) = %v", tc.name, err)
		}
	}
}

func TestParseTable(t *testing.T) {
	check := func(name string) error { return CheckName(name, []string{"read_file", "write_file"}) }
	got, problems := ParseTable(map[string]string{
		"write_file": "deny", "shell:rm": "ask", "read_file": "alow", "wrte_file": "allow", "shell:": "yes",
	}, check)
	if len(got) != 2 || got["write_file"] != Deny || got["shell:rm"] != Ask {
		t.Errorf("entries %v, want write_file=deny shell:rm=ask", got)
	}
	var names []string
	for _, p := range problems {
		names = append(names, p.Name)
	}
	// Sorted by name; "shell:" has a bad value and a bad name, so it is reported twice.
	if strings.Join(names, ",") != "read_file,shell:,shell:,wrte_file" {
		t.Fatalf("problems for %v", names)
	}
	if !errors.Is(problems[0].Err, ErrBadVerdict) || !errors.Is(problems[3].Err, ErrUnknownName) {
		t.Errorf("problems %v", problems)
	}
	if got, problems := ParseTable(nil, check); got != nil || problems != nil {
		t.Error("an empty table is not empty")
	}
}
