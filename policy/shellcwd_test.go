package policy

import (
	"slices"
	"strings"
	"testing"
)

// TestRedirectTargetsFollowTheFolder holds the redirect keys to the file the command writes,
// named relative to the workdir, after the line's own cd (issue 31: cd /etc && echo x > passwd
// was keyed shell:>passwd). A cd may fail, so a target after cd ...; is keyed in both folders.
func TestRedirectTargetsFollowTheFolder(t *testing.T) {
	tests := []struct {
		name, line string
		redirects  []string // the line's redirect keys, as targets
	}{
		{"cd then", "cd /etc && echo x > passwd", []string{"/etc/passwd"}},
		{"cd may fail", "cd sub; echo x > a.txt", []string{"a.txt", "sub/a.txt"}},
		{"cd and back", "cd sub && cd .. && echo x > b.txt", []string{"b.txt"}},
		{"or runs where cd failed", "cd sub || echo x > d.txt; echo y > e.txt", []string{"d.txt", "e.txt", "sub/e.txt"}},
		{"subshell", "(cd sub && echo x > f.txt); echo y > g.txt", []string{"g.txt", "sub/f.txt"}},
		{"command substitution", "cd sub && echo $(cd .. && echo x > p.txt) > q.txt", []string{"p.txt", "sub/q.txt"}},
		{"pipeline parts are subshells", "cd sub | cat; echo x > r.txt", []string{"r.txt"}},
		{"background", "cd sub & echo x > s.txt", []string{"s.txt"}},
		{"cd -", "cd sub && cd - && echo x > h.txt", []string{"h.txt"}},
		{"if", "if cd sub; then echo x > i.txt; else echo y > j.txt; fi", []string{"j.txt", "sub/i.txt"}},
		{"pushd", "pushd sub >/dev/null && echo x > k.txt", []string{"sub/k.txt"}},
		{"negated", "! cd sub || echo x > n.txt", []string{"sub/n.txt"}},
		{"the redirect of cd itself", "cd sub > log.txt && echo x > o.txt", []string{"log.txt", "sub/o.txt"}},
		{"builtin cd", "builtin cd /etc && echo x > passwd", []string{"/etc/passwd"}},
		{"a wrapped cd is a program", "nice cd /etc; echo x > t.txt", []string{"t.txt"}},
		{"env -C", "cd sub && env -C .. sh -c 'echo x > u.txt'", []string{"u.txt"}},
		{"sudo -D", "sudo -D /etc sh -c 'echo x > passwd'", []string{"/etc/passwd"}},
		{"a shell string starts where its command runs", "cd /etc && bash -c 'echo x > passwd'", []string{"/etc/passwd"}},
		{"a function where the line stays", "f() { echo x > v.txt; }; f", []string{"v.txt"}},
		{"a loop that stays", "for i in 1 2; do echo $i >> w.txt; done", []string{"w.txt"}},
		{"case", "case a in a) cd sub;; esac; echo x > x.txt", []string{"sub/x.txt", "x.txt"}},
		{"home", "cd sub; echo x >> ~/.bashrc", []string{"~/.bashrc"}},
		{"proc root", "echo x > /proc/self/root/etc/passwd", []string{"/etc/passwd"}},
		{"thread-self root", "echo x > /proc/thread-self/root/etc/passwd", []string{"/etc/passwd"}},
		{"another pid's root", "echo x > /proc/1/root/etc/passwd", []string{"/etc/passwd"}},
		{"a task's root", "echo x > /proc/self/task/1/root/etc/shadow", []string{"/etc/shadow"}},
		{"dot dot after root", "echo x > /proc/self/root/../etc/passwd", []string{"/etc/passwd"}},
		{"twice", "echo x > /proc/self/root/proc/self/root/etc/hosts", []string{"/etc/hosts"}},
		{"proc cwd", "cd sub && echo x > /proc/self/cwd/y.txt", []string{"sub/y.txt"}},
		{"a descriptor itself", "echo x > /proc/self/fd/1", []string{"/proc/self/fd/1"}},
		{"program writes after cd", "cd /tmp && tree -o listing.txt", []string{"/tmp/listing.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, why := ShellKeysExplained(tt.line)
			if why != "" {
				t.Fatalf("ShellKeys(%q): %s", tt.line, why)
			}
			var got []string
			for _, k := range keys {
				if target, ok := strings.CutPrefix(k, RedirectKey("")); ok {
					got = append(got, target)
				}
			}
			if !slices.Equal(got, tt.redirects) {
				t.Errorf("ShellKeys(%q) redirects %q, want %q (keys %q)", tt.line, got, tt.redirects, keys)
			}
		})
	}
}

// TestRedirectTargetsUnknowable: where the folder or the file cannot be known, a target there
// makes the line unanalysable.
func TestRedirectTargetsUnknowable(t *testing.T) {
	tests := []struct{ name, line, why string }{
		{"computed cd", "cd \"$d\" && echo x > a", "cd goes to a computed folder"},
		{"cd to home", "cd && echo x > a", "goes to $HOME"},
		{"cd tilde", "cd ~ && echo x > a", "a folder the line does not name"},
		{"cd - to before the line", "cd - && echo x > a", "a folder from before the line"},
		{"popd", "pushd sub; popd; echo x > a", "popd goes back"},
		{"cd -P through dot dot", "cd -P sub/.. && echo x > a", "resolves symbolic links"},
		{"a loop that moves", "for d in a b; do cd sub; echo x > r.txt; done", "a loop of the line changes folder"},
		{"a function that moves", "f() { cd /etc; }; f; echo x > passwd", "a function of the line changes folder"},
		{"a function where the line moves", "cd sub; f() { echo x > a; }; f", "a function runs in the folder it is called from"},
		{"find -execdir", "find . -execdir sh -c 'echo x > t' \\;", "the folder of each file"},
		{"chroot, absolute", "chroot /tmp/x sh -c 'echo x > /etc/passwd'", "under another root"},
		{"unshare --root", "unshare --root=/tmp/x sh -c 'echo x > /etc/passwd'", "under another root"},
		{"sudo -i", "sudo -i sh -c 'echo x > a'", "home folder"},
		{"su login", "su - root -c 'echo x > a'", "home folder"},
		{"through a descriptor", "echo x > /dev/fd/3/../x", "a descriptor's file"},
		{"through stdout", "echo x > /dev/stdout/x", "a descriptor's file"},
		{"another process's folder", "echo x > /proc/1/cwd/x", "the folder of another process"},
		{"climbing toward proc", "echo x > ../../../../proc/self/root/etc/passwd", "climbs out of the workdir toward proc"},
		{"too many folders", strings.Repeat("cd a; cd b; cd c; cd d; ", 2) + "echo x > y", "more than 8 folders"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, why := ShellKeysExplained(tt.line)
			if why == "" || !strings.Contains(why, tt.why) {
				t.Errorf("ShellKeys(%q): keys %q, why %q; want a reason containing %q", tt.line, keys, why, tt.why)
			}
		})
	}
}

func TestCleanTarget(t *testing.T) {
	tests := []struct{ in, want string }{
		{"//etc/passwd", "/etc/passwd"},
		{"/usr/../etc/passwd", "/etc/passwd"},
		{"./notes.txt", "notes.txt"},
		{"/proc/self/root/etc/passwd", "/etc/passwd"},
		{"/proc/4242/task/4242/root/etc", "/etc"},
		{"/proc/self/cwd/x", "x"},
		{"/dev/fd/3/x", "/dev/fd/3/x"}, // unresolvable: as path.Clean gives it
		{"../x", "../x"},
	}
	for _, tt := range tests {
		if got := CleanTarget(tt.in); got != tt.want {
			t.Errorf("CleanTarget(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
