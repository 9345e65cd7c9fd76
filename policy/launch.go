package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrConflictingFlags reports a name given to two of --allow, --ask and --deny. The command line
// is the user's last word on a run, so a contradiction in it is a usage error rather than
// something to resolve by guessing which flag was meant.
var ErrConflictingFlags = errors.New("conflicting launch flags")

// ErrEmptyFlagName reports an --allow, --ask or --deny given an empty name, which would match
// no tool and no key and so silently do nothing.
var ErrEmptyFlagName = errors.New("empty launch flag name")

// Launch holds the permission overrides given on the command line for one run. Each name is a
// tool ("write_file") or a key ("shell:git push", "shell:git"); a key-level flag governs only
// the keys it names, and the most specific flag for a key wins, as in every other layer.
type Launch struct {
	// Yolo turns every ask into allow; nobody is watching the run. It never lifts a deny, and
	// an explicit --ask keeps its ask.
	Yolo bool
	// Allow turns ask into allow for the named tools and keys; it never lifts a deny.
	Allow []string
	// Ask turns allow into ask for the named tools and keys; it may always tighten.
	Ask []string
	// Deny denies the named tools and keys; it may always tighten.
	Deny []string
}

// launchFlag names one of the three per-name flags in messages and traces.
type launchFlag struct {
	option string   // "--allow"
	names  []string // the names given to it
}

// Validate reports a usage error: a name given to two of --allow, --ask and --deny (wrapping
// ErrConflictingFlags, naming the name and both flags), or an empty name (wrapping
// ErrEmptyFlagName). Several problems are joined, in sorted order, so the user sees them all at
// once. --yolo combines with everything: --ask and --deny only tighten it.
func (l Launch) Validate() error {
	flags := []launchFlag{{"--allow", l.Allow}, {"--ask", l.Ask}, {"--deny", l.Deny}}
	firstFlag := map[string]string{}
	var empties []string
	type conflict struct{ name, first, second string }
	var conflicts []conflict
	for _, f := range flags {
		seen := map[string]bool{}
		for _, name := range f.names {
			if name == "" {
				empties = append(empties, f.option)
				continue
			}
			if seen[name] {
				continue // repeating a name to the same flag is harmless
			}
			seen[name] = true
			if first, ok := firstFlag[name]; ok {
				conflicts = append(conflicts, conflict{name, first, f.option})
				continue
			}
			firstFlag[name] = f.option
		}
	}
	slices.SortStableFunc(conflicts, func(a, b conflict) int { return strings.Compare(a.name, b.name) })
	var errs []error
	for _, c := range conflicts {
		errs = append(errs, fmt.Errorf("%w: %q is given to both %s and %s", ErrConflictingFlags, c.name, c.first, c.second))
	}
	for _, option := range slices.Compact(empties) {
		errs = append(errs, fmt.Errorf("%w: %s needs a tool or key name", ErrEmptyFlagName, option))
	}
	return errors.Join(errs...)
}
