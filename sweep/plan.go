// Package sweep runs one scenario over a grid of parameters and seeds (host sweep): every run in
// a run directory of its own (warren.RunInDir), a manifest of the whole sweep (sweep.json), and
// a results table with a row per run (results.csv). A sweep resumes: run again into the same
// directory, it skips the runs that finished and runs the others again, so a sweep killed halfway
// loses only the runs it was in the middle of.
//
// The lifecycle of a sweep, in order: Plan checks the grid (ParseAxis, ParseSeeds) and names
// every run; Open makes or reopens the sweep directory, refusing one that holds another sweep;
// Run carries out the runs that have not finished, N at a time; Results writes the table from
// every run directory's files.
package sweep

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/warren"
)

// ErrSpec marks a sweep that cannot be planned: a malformed --param or --seeds, a parameter
// given twice, a grid too large.
var ErrSpec = errors.New("invalid sweep")

// MaxRuns bounds a sweep's grid: a typo in a range must not plan a billion runs.
const MaxRuns = 100_000

// Axis is one parameter of the grid and the values it takes, in the order given.
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// ParseAxis reads a --param flag: name=v1,v2,... (a value may not contain a comma; the name is
// a [params] entry or a key path, see warren.Param).
func ParseAxis(flag string) (Axis, error) {
	name, list, ok := strings.Cut(flag, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || list == "" {
		return Axis{}, fmt.Errorf("%w: --param %q: write name=value1,value2 (a [params] name or a key path such as groups.voters.count)", ErrSpec, flag)
	}
	a := Axis{Name: name}
	for _, v := range strings.Split(list, ",") {
		if v == "" {
			return Axis{}, fmt.Errorf("%w: --param %s: an empty value (two commas, or one at an end)", ErrSpec, name)
		}
		if slices.Contains(a.Values, v) {
			return Axis{}, fmt.Errorf("%w: --param %s: the value %q is given twice", ErrSpec, name, v)
		}
		a.Values = append(a.Values, v)
	}
	return a, nil
}

// ParseSeeds reads --seeds: a list of seeds and inclusive ranges, "1..20", "1,2,5", "1..5,10".
func ParseSeeds(spec string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "..")
		first, err1 := strconv.ParseUint(lo, 10, 64)
		last, err2 := first, error(nil)
		if isRange {
			last, err2 = strconv.ParseUint(hi, 10, 64)
		}
		switch {
		case err1 != nil || err2 != nil:
			return nil, fmt.Errorf("%w: --seeds %q: %q is not a seed (0 to %d) or a range first..last", ErrSpec, spec, part, uint64(math.MaxUint64))
		case last < first:
			return nil, fmt.Errorf("%w: --seeds %q: the range %s goes down", ErrSpec, spec, part)
		case last-first >= MaxRuns:
			return nil, fmt.Errorf("%w: --seeds %q: %s is more than %d seeds", ErrSpec, spec, part, MaxRuns)
		}
		for s := first; ; s++ {
			if seen[s] {
				return nil, fmt.Errorf("%w: --seeds %q: seed %d is given twice", ErrSpec, spec, s)
			}
			if len(out) == MaxRuns {
				return nil, fmt.Errorf("%w: --seeds %q: more than %d seeds", ErrSpec, spec, MaxRuns)
			}
			seen[s] = true
			out = append(out, s)
			if s == last {
				break
			}
		}
	}
	return out, nil
}

// Run is one run of the grid: a point of it (a value of every axis) and a seed.
type Run struct {
	// Cell numbers the grid point from 0, the first axis varying slowest; Params are its values.
	Cell   int
	Params []warren.Param
	Seed   uint64
	// Dir is the run's directory, relative to the sweep's.
	Dir string
}

// Plan lists every run of the grid of axes over seeds: each point of the grid (the first axis
// varying slowest) with every seed, in that order. With no axes the grid is one point: the
// scenario as written, over the seeds.
func Plan(axes []Axis, seeds []uint64) ([]Run, error) {
	if len(seeds) == 0 {
		return nil, fmt.Errorf("%w: no seeds: give --seeds (1..10, or 1,2,3)", ErrSpec)
	}
	points := 1
	for i, a := range axes {
		for _, b := range axes[:i] {
			if b.Name == a.Name {
				return nil, fmt.Errorf("%w: --param %s is given twice: give its values in one flag, comma-separated", ErrSpec, a.Name)
			}
		}
		if len(a.Values) == 0 {
			return nil, fmt.Errorf("%w: --param %s has no values", ErrSpec, a.Name)
		}
		points *= len(a.Values)
		if points > MaxRuns {
			break
		}
	}
	if points*len(seeds) > MaxRuns || points > MaxRuns {
		return nil, fmt.Errorf("%w: the grid has more than %d runs", ErrSpec, MaxRuns)
	}
	runs := make([]Run, 0, points*len(seeds))
	for cell := range points {
		params := make([]warren.Param, len(axes))
		rest := cell
		for i := len(axes) - 1; i >= 0; i-- {
			n := len(axes[i].Values)
			params[i] = warren.Param{Name: axes[i].Name, Value: axes[i].Values[rest%n]}
			rest /= n
		}
		for _, seed := range seeds {
			runs = append(runs, Run{Cell: cell, Params: params, Seed: seed, Dir: runDir(cell, params, seed)})
		}
	}
	return runs, nil
}

// runDir names a run's directory: runs/<cell>-<params>/seed-<seed>, the parameters spelled out
// (as far as a file name allows) so that a listing reads, the cell number keeping two cells
// whose values spell alike apart.
func runDir(cell int, params []warren.Param, seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%03d", cell)
	for _, p := range params {
		b.WriteByte('_')
		b.WriteString(slug(p.Name[strings.LastIndexAny(p.Name, ".]")+1:]))
		b.WriteByte('-')
		b.WriteString(slug(p.Value))
	}
	name := b.String()
	if len(name) > 80 {
		name = name[:80]
	}
	return "runs/" + name + "/seed-" + strconv.FormatUint(seed, 10)
}

// slug keeps the letters, digits, '.' and '-' of s and turns the rest into '_'.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, s)
}
