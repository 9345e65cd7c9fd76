package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSafeKeysCovers(t *testing.T) {
	safe, err := NewSafeKeys(ShippedSafeCommands, []string{"git status", "git log", "make test", "docker", "mytool"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key  string
		want bool
	}{
		{"shell:cat", true},
		{"shell:ls", true},
		{"shell:[", true},
		{"shell:git status", true},
		{"shell:git log", true},
		{"shell:git push", false},
		{"shell:git", false},
		{"shell:git -c", false},
		{"shell:make test", true},
		{"shell:make", false},
		{"shell:make deploy", false},
		{"shell:make -f", false},
		{"shell:docker ps", true},
		{"shell:docker", true},
		{"shell:mytool", true},
		{"shell:rm", false},
		{"shell:find", false},
		{"shell:find -delete", false},
		{"shell:date", true},
		{"shell:date --set", false},
		{"shell:rg --pre", false},
		{"shell:tree -R", false},
		{"shell:file -C", false},
		{"shell:>out.txt", false},
		{"shell:>/dev/stdout", false},
		{"shell:PATH=", false},
		{"shell:LD_PRELOAD=", false},
		{"shell:./ls", false},
		{"shell:/tmp/cat", false},
		{"shell:cat extra", false},
		{"cat", false},
		{"read_file", false},
		{"shell", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := safe.Covers(tt.key); got != tt.want {
				t.Errorf("Covers(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestSafeKeysRedirectAndEnvNeverSafe(t *testing.T) {
	// Even entries spelled like redirect or environment keys cannot make them safe: such entries
	// are rejected, and the keys are refused whatever the set holds.
	for _, entry := range []string{">out", "FOO=", "PATH="} {
		if _, err := NewSafeKeys([]string{entry}); !errors.Is(err, ErrBadSafeCommand) {
			t.Errorf("NewSafeKeys(%q) error = %v, want ErrBadSafeCommand", entry, err)
		}
	}
	safe, err := NewSafeKeys(ShippedSafeCommands)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"echo x > out", "FOO=1 ls", "export GOPATH=/x", "ls 2>err"} {
		keys, ok := ShellKeys(line)
		if !ok {
			t.Fatalf("ShellKeys(%q) not ok", line)
		}
		if !slices.ContainsFunc(keys, func(k string) bool { return !safe.Covers(k) }) {
			t.Errorf("%q: every key of %q is safe", line, keys)
		}
	}
}

func TestNewSafeKeysRejects(t *testing.T) {
	tests := []struct {
		entry, why string
	}{
		{"", "empty"},
		{"/bin/ls", "plain name"},
		{"./ls", "plain name"},
		{"ls -l", "ls takes no subcommand"},
		{"cat file.txt", "cat takes no subcommand"},
		{"git -c", "not an option"},
		{"git stash list", "one plain word"},
		{"git  status", "one plain word"},
		{" git", "plain name"},
		{"git ", "one plain word"},
		{"-rf", "plain name"},
		{"$x", "plain name"},
		{"ls;rm", "plain name"},
		{"'ls'", "plain name"},
		{"a\tb", "plain name"},
		{".", "plain name"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			s, err := NewSafeKeys([]string{"cat"}, []string{tt.entry})
			if !errors.Is(err, ErrBadSafeCommand) || s != nil {
				t.Fatalf("NewSafeKeys(%q) = %v, %v; want ErrBadSafeCommand", tt.entry, s, err)
			}
			if !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.entry)) {
				t.Errorf("error %q should name the entry and say %q", err, tt.why)
			}
		})
	}
}

func TestSafeKeysEntries(t *testing.T) {
	safe, err := NewSafeKeys([]string{"git status", "cat", "ls"}, []string{"cat", "make test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cat", "git status", "ls", "make test"}
	got := safe.Entries()
	if !slices.Equal(got, want) {
		t.Fatalf("Entries() = %q, want %q", got, want)
	}
	got[0] = "rm"
	if safe.Covers("shell:rm") || !slices.Equal(safe.Entries(), want) {
		t.Error("changing the returned slice changed the set")
	}
	empty, err := NewSafeKeys()
	if err != nil || len(empty.Entries()) != 0 || empty.Covers("shell:ls") {
		t.Errorf("NewSafeKeys() = %v, %v; want an empty set", empty.Entries(), err)
	}
}

// TestShippedSafeCommandsReadOnly checks the shipped list against ShellKeys: each entry's own
// line is covered, and lines that use one of them to write or run something are not.
func TestShippedSafeCommandsReadOnly(t *testing.T) {
	safe, err := NewSafeKeys(ShippedSafeCommands)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(ShippedSafeCommands) {
		t.Error("ShippedSafeCommands are not sorted")
	}
	for _, entry := range ShippedSafeCommands {
		keys, ok := ShellKeys(entry)
		if !ok || len(keys) != 1 || !safe.Covers(keys[0]) {
			t.Errorf("ShellKeys(%q) = %q, %v; want one covered key", entry, keys, ok)
		}
	}
	for _, excluded := range []string{"find", "sort", "uniq", "tee", "sed", "awk", "xargs", "env", "make", "cp", "mv", "hostname", "python3", "bash", "less", "more", "man", "git"} {
		if safe.Covers(ProgramKey(excluded, "")) {
			t.Errorf("%s is on the shipped safe list", excluded)
		}
	}
	for _, line := range []string{
		"cat x > y", "date -s now", "tree -o out", "rg --pre sh x", "git log --output=x",
		"file -C -m m", "ls $(rm x)", "git -c core.pager=sh log", "echo x | sh", "FOO=1 ls",
		"./ls", "cd /tmp && ./cat", "test -v 'a[$(id)]'", "grep x $(curl y)",
	} {
		keys, _ := ShellKeys(line)
		if len(keys) > 0 && !slices.ContainsFunc(keys, func(k string) bool { return !safe.Covers(k) }) {
			t.Errorf("%q: every key of %q is safe", line, keys)
		}
	}
}

// TestShippedSafeCommandsReadNoCode checks that no shipped safe command runs code the line
// does not show (an opaque key), and that no git command is on the list: a repository's config
// and attributes, which an agent can write, make even git status and git log run programs.
func TestShippedSafeCommandsReadNoCode(t *testing.T) {
	for _, entry := range ShippedSafeCommands {
		if a := AnalyzeShell(entry); len(a.Opaque) > 0 {
			t.Errorf("shipped safe command %q is opaque: %v", entry, a.Opaque)
		}
		if strings.HasPrefix(entry, "git") {
			t.Errorf("shipped safe command %q: git runs hooks and config from the repository", entry)
		}
	}
	safe, err := NewSafeKeys(ShippedSafeCommands)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"status", "log", "diff", "show", "blame", "ls-files", "rev-parse"} {
		if safe.Covers(ProgramKey("git", sub)) {
			t.Errorf("git %s is covered by the shipped safe commands", sub)
		}
	}
}

func TestMultiCommandPrograms(t *testing.T) {
	if !slices.IsSorted(MultiCommandPrograms) {
		t.Errorf("MultiCommandPrograms not sorted: %q", MultiCommandPrograms)
	}
	for _, prog := range MultiCommandPrograms {
		keys, ok := ShellKeys(prog + " sub")
		if !ok || !slices.Contains(keys, ProgramKey(prog, "sub")) {
			t.Errorf("ShellKeys(%q) = %q, %v; want %q", prog+" sub", keys, ok, ProgramKey(prog, "sub"))
		}
		if _, err := NewSafeKeys([]string{prog + " sub"}); err != nil {
			t.Errorf("NewSafeKeys(%q): %v", prog+" sub", err)
		}
	}
	for _, prog := range []string{"ls", "cat", "rm", "python3"} {
		if slices.Contains(MultiCommandPrograms, prog) {
			t.Errorf("%s is listed as a multi-command program", prog)
		}
	}
}

func ExampleSafeKeys_Covers() {
	// A host that trusts its repositories and Makefile adds the commands it wants.
	safe, err := NewSafeKeys(ShippedSafeCommands, []string{"git status", "make test"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range []string{"git status && make test", "git push", "cat notes > copy"} {
		keys, _ := ShellKeys(line)
		covered := !slices.ContainsFunc(keys, func(k string) bool { return !safe.Covers(k) })
		fmt.Println(line, "->", keys, covered)
	}
	_, err = NewSafeKeys([]string{"cat notes.txt"})
	fmt.Println(err)
	// Output:
	// git status && make test -> [shell:git status shell:make test] true
	// git push -> [shell:git push] false
	// cat notes > copy -> [shell:>copy shell:cat] false
	// invalid safe command "cat notes.txt": cat takes no subcommand: its arguments are not part of its key; write "cat"
}
