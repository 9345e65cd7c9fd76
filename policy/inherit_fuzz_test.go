package policy

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// fuzzCeilingsFrom builds up to three ancestors from the fuzz input, each with its own layers,
// spawn-time stage and safe set; ok is false when the input gives an invalid configuration.
func fuzzCeilingsFrom(in *fuzzBytes) ([]Ceiling, bool) {
	n := int(in.next() % 4)
	ceilings := make([]Ceiling, 0, n)
	for i := range n {
		layers := fuzzLayersFrom(in)
		ar, err := NewResolver(layers.host, layers.bp, layers.launch)
		if err != nil {
			return nil, false
		}
		ceilings = append(ceilings, Ceiling{Resolver: ar, Stage: int(in.next()%4) - 1,
			Safe: fuzzSafeFrom(in), Agent: fmt.Sprintf("ancestor-%d", i)})
	}
	return ceilings, true
}

// fuzzSafeFrom gives no safe set or one holding a subset of the fuzzer's names.
func fuzzSafeFrom(in *fuzzBytes) Coverer {
	mask := uint16(in.next()) | uint16(in.next())<<8
	if mask == 0 {
		return nil
	}
	s := safeSet{}
	for i, key := range slices.Concat(fuzzNames, fuzzShellKeys) {
		if mask&(1<<(i%16)) != 0 {
			s[key] = true
		}
	}
	return s
}

func FuzzDecideUnder(f *testing.F) {
	f.Add([]byte{})
	f.Add(slices.Repeat([]byte{2, 3, 4, 0, 1, 0, 9}, 40))
	f.Add(slices.Repeat([]byte{0, 0, 4, 0, 0, 3, 2, 0, 255, 1}, 30))
	f.Add(append(make([]byte, 60), slices.Repeat([]byte{4, 3, 2, 1}, 60)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzBytes(data)
		layers := fuzzLayersFrom(&in)
		r, err := NewResolver(layers.host, layers.bp, layers.launch)
		if err != nil {
			if !errors.Is(err, ErrBadVerdict) && !errors.Is(err, ErrConflictingFlags) {
				t.Fatalf("NewResolver: unexpected error %v", err)
			}
			return
		}
		ceilings, ok := fuzzCeilingsFrom(&in)
		if !ok {
			return
		}
		call := fuzzCallFrom(&in)
		safe := fuzzSafeFrom(&in)
		g := new(Grants)
		for i, key := range slices.Concat(fuzzNames, fuzzShellKeys) {
			if in.next()&(1<<(i%8)) != 0 {
				g.Grant([]string{key}, ScopeRun, 0)
			}
		}

		own := r.Decide(call)
		got := r.DecideUnder(call, ceilings)
		want, denied := own.Verdict, own.Verdict == Deny
		for _, ceil := range ceilings {
			at := call
			at.Stage = ceil.Stage
			cd := ceil.Resolver.Decide(at)
			if got.Verdict < cd.Verdict {
				t.Fatalf("DecideUnder = %+v is looser than %s's %+v", got, ceil.Agent, cd)
			}
			want = max(want, cd.Verdict)
			denied = denied || cd.Verdict == Deny
		}
		switch {
		case got.Verdict < own.Verdict:
			t.Fatalf("DecideUnder = %+v is looser than the agent's own %+v", got, own)
		case got.Verdict != want:
			t.Fatalf("DecideUnder = %+v, want the strictest verdict %v", got, want)
		case got.Layer == LayerParent && got.Verdict == own.Verdict:
			t.Fatalf("DecideUnder = %+v names an ancestor on a tie with own %+v", got, own)
		case got.Layer != LayerParent && got != own:
			t.Fatalf("DecideUnder = %+v, own %+v: not own, yet no ancestor named", got, own)
		case got.Reason == "" || got.Key == "":
			t.Fatalf("DecideUnder = %+v: no reason or key", got)
		}

		// Neither DecideUnder's decision nor a forged ask is ever covered past an ancestor's deny:
		// the call is left as it came (an uncovered key before the denied one stops the walk, as
		// in Cover) or gets DecideUnder's deny back; an unanalysable line is never touched.
		unparsed := call.Tool == ShellTool && !call.Parsed
		for _, d := range []Decision{got, {Verdict: Ask, Layer: LayerDefault, Key: call.Tool}} {
			covered := r.CoverUnder(call, d, safe, g, ceilings)
			switch {
			case denied && covered.Verdict == Allow:
				t.Fatalf("CoverUnder(%+v) = %+v although a ceiling denies", d, covered)
			case denied && covered != d && covered != got:
				t.Fatalf("CoverUnder(%+v) = %+v, want it unchanged or DecideUnder's deny %+v", d, covered, got)
			case unparsed && covered != d:
				t.Fatalf("CoverUnder covered an unanalysable line: %+v", covered)
			case covered.Verdict == Allow && d.Verdict == Ask:
				assertCoveredUnder(t, r, call, safe, g, ceilings)
			}
		}
		if got := r.CoverUnder(call, own, safe, g, nil); got != r.Cover(call, own, safe, g) {
			t.Fatalf("CoverUnder without ceilings = %+v, Cover = %+v", got, r.Cover(call, own, safe, g))
		}
	})
}

// assertCoveredUnder checks an allow CoverUnder gave: every key that asks under the agent or
// some ancestor is granted to the agent itself or safe in every set.
func assertCoveredUnder(t *testing.T, r *Resolver, c Call, safe Coverer, g *Grants, ceilings []Ceiling) {
	t.Helper()
	keys := []string{c.Tool}
	if c.Tool == ShellTool && len(c.Keys) > 0 {
		keys = c.Keys
	}
	for _, key := range keys {
		call := Call{Stage: c.Stage, Tool: c.Tool}
		if c.Tool == ShellTool {
			call.Keys, call.Parsed = []string{key}, true
		}
		if r.DecideUnder(call, ceilings).Verdict == Allow {
			continue
		}
		if _, ok := g.Covers(key); ok {
			continue
		}
		allSafe := safe != nil && safe.Covers(key) && !neverSafe(key)
		for _, ceil := range ceilings {
			allSafe = allSafe && ceil.Safe != nil && ceil.Safe.Covers(key)
		}
		if !allSafe {
			t.Fatalf("CoverUnder allowed %+v, but %s asks and is neither granted to the agent nor safe in every set", c, key)
		}
	}
}
