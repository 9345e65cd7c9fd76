package policy

import "testing"

// BenchmarkShellKeysTypical measures the key extraction the gate runs for a typical shell
// call; the target is under 20 µs/op.
func BenchmarkShellKeysTypical(b *testing.B) {
	const line = "git status && go test ./... 2>&1 | tail -n 20"
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ShellKeys(line); !ok {
			b.Fatal("not ok")
		}
	}
}

// BenchmarkShellKeysWrapped measures a line that goes through wrappers and a nested parse.
func BenchmarkShellKeysWrapped(b *testing.B) {
	const line = `sudo -u app env FOO=1 bash -c 'cd /srv && git pull && make -j4 build' > deploy.log 2>&1`
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ShellKeys(line); !ok {
			b.Fatal("not ok")
		}
	}
}

// BenchmarkSafeCovers measures one safe-key lookup, run for every asking key of a call.
func BenchmarkSafeCovers(b *testing.B) {
	safe, err := NewSafeKeys(ShippedSafeCommands, []string{"make test"})
	if err != nil {
		b.Fatal(err)
	}
	keys := []string{"shell:git status", "shell:tail", "shell:go test", "shell:>out", "shell:make test"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		safe.Covers(keys[i%len(keys)])
	}
}
