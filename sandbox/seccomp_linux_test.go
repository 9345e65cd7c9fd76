package sandbox

import (
	"slices"
	"testing"
)

func TestSeccompProgram(t *testing.T) {
	prog, err := seccompProgram()
	if err != nil {
		t.Fatalf("seccompProgram: %v", err)
	}
	if len(prog) == 0 || len(prog)%8 != 0 || len(prog) > 4096 {
		t.Errorf("program of %d bytes, want whole sock_filter entries under a page", len(prog))
	}
	policy, err := seccompPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if names := policy.Syscalls[0].Names; !slices.Contains(names, "unshare") || !slices.Contains(names, "mount") || !slices.Contains(names, "ptrace") {
		t.Errorf("denied calls %v", names)
	}
}
