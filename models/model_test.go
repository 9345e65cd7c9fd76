package models

import (
	"errors"
	"strings"
	"testing"
)

func TestRoleString(t *testing.T) {
	tests := []struct {
		name string
		role Role
		want string
	}{
		{"system", RoleSystem, "system"},
		{"user", RoleUser, "user"},
		{"assistant", RoleAssistant, "assistant"},
		{"tool", RoleTool, "tool"},
		{"out of range", Role(9), "role(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.role.String(); got != tt.want {
				t.Errorf("Role(%d).String() = %q, want %q", tt.role, got, tt.want)
			}
		})
	}
}

func TestParseWhenExhausted(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    WhenExhausted
		wantErr bool
	}{
		{"fail", "fail", ExhaustedFail, false},
		{"finish", "finish", ExhaustedFinish, false},
		{"repeat last", "repeat_last", ExhaustedRepeatLast, false},
		{"wrong case", "Finish", 0, true},
		{"hyphenated", "repeat-last", 0, true},
		{"empty", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWhenExhausted(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidScript) {
					t.Fatalf("ParseWhenExhausted(%q) error = %v, want ErrInvalidScript", tt.in, err)
				}
				for _, valid := range []string{`"fail"`, `"finish"`, `"repeat_last"`, `"` + tt.in + `"`} {
					if !strings.Contains(err.Error(), valid) {
						t.Errorf("error %q does not mention %s", err, valid)
					}
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseWhenExhausted(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want the round trip %q", got.String(), tt.in)
			}
			var viaText WhenExhausted
			if err := viaText.UnmarshalText([]byte(tt.in)); err != nil || viaText != tt.want {
				t.Errorf("UnmarshalText(%q) = %v, %v; want %v", tt.in, viaText, err, tt.want)
			}
		})
	}
}

func TestWhenExhaustedUnmarshalTextKeepsValueOnError(t *testing.T) {
	w := ExhaustedFinish
	if err := w.UnmarshalText([]byte("forever")); !errors.Is(err, ErrInvalidScript) {
		t.Fatalf("UnmarshalText error = %v, want ErrInvalidScript", err)
	}
	if w != ExhaustedFinish {
		t.Errorf("value changed to %v on error", w)
	}
	if got := WhenExhausted(7).String(); got != "when_exhausted(7)" {
		t.Errorf("String() of an unknown value = %q", got)
	}
}
