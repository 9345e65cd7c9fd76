package sandbox

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRlimitsFor(t *testing.T) {
	got := rlimitsFor(Limits{Timeout: 5, CPUSeconds: 7, OpenFiles: 64})
	want := []rlimitSetting{{unix.RLIMIT_CORE, 0}, {unix.RLIMIT_CPU, 7}, {unix.RLIMIT_NOFILE, 64}}
	if !slices.Equal(got, want) {
		t.Errorf("rlimits %v, want %v", got, want)
	}
}
