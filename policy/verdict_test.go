package policy

import (
	"errors"
	"fmt"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Verdict
		wantErr string
	}{
		{name: "allow", in: "allow", want: Allow},
		{name: "ask", in: "ask", want: Ask},
		{name: "deny", in: "deny", want: Deny},
		{name: "empty", in: "", wantErr: `invalid permission verdict ""; valid verdicts: allow, ask, deny`},
		{name: "capitalised", in: "Allow", wantErr: `invalid permission verdict "Allow"; valid verdicts: allow, ask, deny`},
		{name: "misspelled", in: "alow", wantErr: `invalid permission verdict "alow"; valid verdicts: allow, ask, deny`},
		{name: "padded", in: " ask", wantErr: `invalid permission verdict " ask"; valid verdicts: allow, ask, deny`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVerdict(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseVerdict(%q) = %v, want error", tt.in, got)
				}
				if !errors.Is(err, ErrBadVerdict) {
					t.Errorf("error %v does not wrap ErrBadVerdict", err)
				}
				if err.Error() != tt.wantErr {
					t.Errorf("error = %q, want %q", err.Error(), tt.wantErr)
				}
				if got != 0 {
					t.Errorf("verdict on error = %v, want the zero value", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseVerdict(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseVerdict(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestVerdictString(t *testing.T) {
	tests := []struct {
		name string
		v    Verdict
		want string
	}{
		{name: "allow", v: Allow, want: "allow"},
		{name: "ask", v: Ask, want: "ask"},
		{name: "deny", v: Deny, want: "deny"},
		{name: "zero", v: 0, want: "Verdict(0)"},
		{name: "out of range", v: 9, want: "Verdict(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVerdictRoundTrip(t *testing.T) {
	for _, v := range []Verdict{Allow, Ask, Deny} {
		got, err := ParseVerdict(v.String())
		if err != nil || got != v {
			t.Errorf("ParseVerdict(%q) = %v, %v; want %v", v.String(), got, err, v)
		}
	}
}

func ExampleParseVerdict() {
	v, err := ParseVerdict("ask")
	fmt.Println(v, err)
	_, err = ParseVerdict("yes")
	fmt.Println(err)
	// Output:
	// ask <nil>
	// invalid permission verdict "yes"; valid verdicts: allow, ask, deny
}
