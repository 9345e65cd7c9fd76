// Package policy is Warren's pure permission resolver: given the layers that
// govern one tool call (launch overrides, the user's ceiling, the blueprint's
// stage and agent values, grants and the built-in defaults) it decides whether
// the call is allowed, must be asked about, or is denied.
//
// The package is deliberately free of arche and of any world state, so every
// rule can be tested as a plain function: [Resolver] applies the layers and
// launch overrides, [Resolver.Cover] turns asks into allows with safe keys and
// [Grants], [ShellKeys] turns a command line into the keys every layer speaks
// about, and [Resolver.Explain] shows each layer's contribution.
package policy

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrBadVerdict reports a permission value that is not one of allow, ask or
// deny. Blueprint and config loaders wrap it so that a misspelled permission
// becomes a load error instead of a silent default.
var ErrBadVerdict = errors.New("invalid permission verdict")

// Verdict is the outcome of a permission decision. The zero value is not a
// valid verdict, so a forgotten assignment can never read as "allow".
type Verdict uint8

// The verdicts, from most to least permissive.
const (
	// Allow lets the tool call run without asking anyone.
	Allow Verdict = iota + 1
	// Ask runs the call only after a grant or a human answer covers it.
	Ask
	// Deny refuses the call; it is terminal and no launch flag lifts it.
	Deny
)

// verdictNames is indexed by Verdict; index 0 is the invalid zero value.
var verdictNames = [...]string{Allow: "allow", Ask: "ask", Deny: "deny"}

// ParseVerdict converts the exact spelling used in blueprints and configs
// ("allow", "ask" or "deny") into a Verdict. Anything else, including other
// capitalisations, is an error wrapping ErrBadVerdict that lists the valid
// values, because guessing at a permission is never safe.
func ParseVerdict(s string) (Verdict, error) {
	switch s {
	case "allow":
		return Allow, nil
	case "ask":
		return Ask, nil
	case "deny":
		return Deny, nil
	}
	return 0, fmt.Errorf("%w %q; valid verdicts: allow, ask, deny", ErrBadVerdict, s)
}

// String returns the spelling ParseVerdict accepts, so verdicts round-trip
// through files and traces; an invalid value prints as Verdict(n).
func (v Verdict) String() string {
	if v >= Allow && v <= Deny {
		return verdictNames[v]
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}
