package scripting

import (
	"context"
	"errors"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"positioned", &Error{File: "tools/a.js", Line: 3, Column: 7, Message: "Error: boom", Kind: ErrRuntime}, "tools/a.js:3:7: Error: boom"},
		{"no position", &Error{File: "tools/a.js", Message: "script ran past its 2s budget", Kind: ErrTimeout}, "tools/a.js: script ran past its 2s budget"},
		{"no file", &Error{Message: "no compiled script (use Compile)", Kind: ErrDefinition}, ": no compiled script (use Compile)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if !errors.Is(tt.err, tt.err.Kind) {
				t.Errorf("errors.Is(err, %v) = false", tt.err.Kind)
			}
		})
	}
}

func TestErrorKindsAreDistinct(t *testing.T) {
	kinds := []error{ErrSyntax, ErrDefinition, ErrRuntime, ErrTimeout, ErrMemory, ErrTooLarge, ErrStackOverflow, ErrDuplicate, ErrClosed}
	for i, a := range kinds {
		for j, b := range kinds {
			if (i == j) != errors.Is(a, b) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, errors.Is(a, b))
			}
		}
	}
	cancelled := interruptError("a.js", context.Canceled, Limits{})
	if !errors.Is(cancelled, context.Canceled) || errors.Is(cancelled, ErrTimeout) {
		t.Errorf("a cancellation is %v", cancelled)
	}
}

func TestTruncateUTF8(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"ééé", 3, "é…"},
		{"ééé", 4, "éé…"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := truncateUTF8(tt.in, tt.n); got != tt.want {
				t.Errorf("truncateUTF8(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}
