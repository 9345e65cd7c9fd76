package policy

import (
	"errors"
	"slices"
	"testing"
)

// fuzzNames is the universe the fuzzer draws entries, flags and keys from: tools with each kind
// of default, and shell keys of every form, including a program and one of its subcommands.
var fuzzNames = []string{
	"read_file", "write_file", "edit_file", "shell", "mcp__x",
	"shell:git", "shell:git push", "shell:rm", "shell:>out", "shell:FOO=", "shell:ls",
}

var fuzzShellKeys = []string{"shell:git", "shell:git push", "shell:rm", "shell:>out", "shell:FOO=", "shell:ls", "shell:ls -l", "shell:gitk"}

// fuzzBytes hands out the fuzz input a byte at a time, then zeros.
type fuzzBytes []byte

func (b *fuzzBytes) next() byte {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return v
}

// fuzzLayers holds one generated configuration, plus whether it is invalid on purpose.
type fuzzLayers struct {
	host     HostLayer
	bp       BlueprintLayer
	launch   Launch
	badEntry bool
	conflict bool
}

// verdictMapFrom gives each name no entry (most often), allow, ask, deny, or, on byte 255, an
// invalid verdict.
func verdictMapFrom(in *fuzzBytes, bad *bool) map[string]Verdict {
	m := map[string]Verdict{}
	for _, name := range fuzzNames {
		switch b := in.next(); {
		case b == 255:
			m[name] = Verdict(4)
			*bad = true
		case b%5 >= 2:
			m[name] = Verdict(b%5 - 1)
		}
	}
	return m
}

func fuzzLayersFrom(in *fuzzBytes) fuzzLayers {
	var f fuzzLayers
	f.host.Global = verdictMapFrom(in, &f.badEntry)
	f.host.PerBlueprint = map[string]map[string]Verdict{"bp": verdictMapFrom(in, &f.badEntry)}
	f.bp = BlueprintLayer{Name: "bp", Agent: verdictMapFrom(in, &f.badEntry)}
	f.bp.Stages = []map[string]Verdict{verdictMapFrom(in, &f.badEntry), verdictMapFrom(in, &f.badEntry)}
	flags := in.next()
	f.host.AllowBlueprintPermissions = flags&1 != 0
	f.launch.Yolo = flags&2 != 0
	for _, name := range fuzzNames {
		switch in.next() % 7 {
		case 3:
			f.launch.Allow = append(f.launch.Allow, name)
		case 4:
			f.launch.Ask = append(f.launch.Ask, name)
		case 5:
			f.launch.Deny = append(f.launch.Deny, name)
		case 6: // the same name to two flags: a usage error
			f.launch.Allow = append(f.launch.Allow, name)
			f.launch.Deny = append(f.launch.Deny, name)
			f.conflict = true
		}
	}
	return f
}

func fuzzCallFrom(in *fuzzBytes) Call {
	c := Call{Stage: int(in.next()%4) - 1} // -1 and 2 are stages the blueprint lacks
	tools := []string{"read_file", "write_file", "shell", "shell", "shell", "mcp__x", "unknown_tool"}
	c.Tool = tools[int(in.next())%len(tools)]
	mask := in.next()
	c.Parsed = mask&1 != 0
	for i, key := range fuzzShellKeys {
		if in.next()&(1<<(i%8)) != 0 {
			c.Keys = append(c.Keys, key)
		}
	}
	return c
}

// oracle is an independent, slow statement of when a call must be denied: some layer's
// effective entry for one of its keys is deny (the host's most specific name, per-blueprint
// over global; the blueprint's most specific name, stage over agent), or a --deny names the
// key, its program or its tool.
type oracle struct {
	f     fuzzLayers
	stage int
}

func (o oracle) chain(key string) []string {
	if !IsShellKey(key) {
		return []string{key}
	}
	names := []string{key}
	if p := KeyProgram(key); p != "" && ProgramKey(p, "") != key {
		names = append(names, ProgramKey(p, ""))
	}
	return append(names, ShellTool)
}

func (o oracle) hostAt(name string) (Verdict, bool) {
	if v, ok := o.f.host.PerBlueprint["bp"][name]; ok {
		return v, true
	}
	v, ok := o.f.host.Global[name]
	return v, ok
}

func (o oracle) blueprintAt(name string) (Verdict, bool) {
	if o.stage >= 0 && o.stage < len(o.f.bp.Stages) {
		if v, ok := o.f.bp.Stages[o.stage][name]; ok {
			return v, true
		}
	}
	v, ok := o.f.bp.Agent[name]
	return v, ok
}

func mostSpecific(names []string, at func(string) (Verdict, bool)) Verdict {
	for _, name := range names {
		if v, ok := at(name); ok {
			return v
		}
	}
	return 0
}

func (o oracle) denies(key string) bool {
	names := o.chain(key)
	if mostSpecific(names, o.hostAt) == Deny || mostSpecific(names, o.blueprintAt) == Deny {
		return true
	}
	for _, name := range names {
		if slices.Contains(o.f.launch.Deny, name) {
			return true
		}
	}
	return false
}

func (o oracle) callDenied(c Call) bool {
	switch {
	case c.Tool != ShellTool:
		return o.denies(c.Tool)
	case !c.Parsed:
		if o.denies(ShellTool) || o.denies("write_file") {
			return true
		}
		for _, name := range fuzzNames {
			if !IsShellKey(name) {
				continue
			}
			h, _ := o.hostAt(name)
			b, _ := o.blueprintAt(name)
			if h == Deny || b == Deny || slices.Contains(o.f.launch.Deny, name) {
				return true
			}
		}
		return false
	case len(c.Keys) == 0:
		return o.denies(ShellTool)
	}
	for _, key := range c.Keys {
		if o.denies(key) || IsRedirectKey(key) && o.denies("write_file") {
			return true
		}
	}
	return false
}

// coverAll is a safe list that calls everything safe.
type coverAll struct{}

func (coverAll) Covers(string) bool { return true }

func FuzzResolve(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{4, 0, 0, 0, 0, 2, 3, 4, 2, 2, 2, 0, 0, 0})
	f.Add(slices.Repeat([]byte{2, 3, 4, 7, 9, 13, 255}, 30))
	f.Add(slices.Repeat([]byte{0, 0, 0, 0, 4}, 25))
	f.Add(append(make([]byte, 55), 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 0, 255, 255, 255, 255, 255, 255, 255, 255))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzBytes(data)
		layers := fuzzLayersFrom(&in)
		call := fuzzCallFrom(&in)
		r, err := NewResolver(layers.host, layers.bp, layers.launch)
		switch {
		case layers.conflict:
			if !errors.Is(err, ErrConflictingFlags) {
				t.Fatalf("conflicting launch %+v: err = %v", layers.launch, err)
			}
			return
		case layers.badEntry:
			if !errors.Is(err, ErrBadVerdict) {
				t.Fatalf("invalid verdict accepted: err = %v", err)
			}
			return
		case err != nil:
			t.Fatalf("NewResolver: %v", err)
		}
		d := r.Decide(call)
		if d.Verdict < Allow || d.Verdict > Deny || d.Layer == "" || d.Reason == "" {
			t.Fatalf("Decide(%+v) = %+v: not a valid decision", call, d)
		}
		o := oracle{f: layers, stage: call.Stage}
		if want := o.callDenied(call); (d.Verdict == Deny) != want {
			t.Fatalf("Decide(%+v) = %+v; a layer denies: %v\nlayers: %+v", call, d, want, layers)
		}

		// Coverage never touches a deny or an allow, and never denies.
		g := new(Grants)
		g.Grant(append(slices.Clone(fuzzNames), fuzzShellKeys...), ScopeRun, 0)
		g.Grant(fuzzShellKeys, ScopeStage, call.Stage)
		covered := r.Cover(call, d, coverAll{}, g)
		switch {
		case d.Verdict != Ask && covered != d:
			t.Fatalf("Cover changed %+v into %+v", d, covered)
		case d.Verdict == Ask && covered.Verdict == Deny:
			t.Fatalf("Cover turned an ask into a deny: %+v", covered)
		}
		if x := r.Explain(call, coverAll{}, g); x.Decision != covered || len(x.Steps) == 0 {
			t.Fatalf("Explain decided %+v with %d steps; Decide+Cover %+v", x.Decision, len(x.Steps), covered)
		}

		// --yolo and --allow of every name no other flag holds never lift a deny, and tighten
		// nothing but an unanalysable line (key-level flags stop --yolo lifting it).
		loose := layers.launch
		loose.Yolo = true
		loose.Allow = nil
		for _, name := range append(slices.Clone(fuzzNames), fuzzShellKeys...) {
			if !slices.Contains(loose.Ask, name) && !slices.Contains(loose.Deny, name) {
				loose.Allow = append(loose.Allow, name)
			}
		}
		rl, err := NewResolver(layers.host, layers.bp, loose)
		if err != nil {
			t.Fatalf("NewResolver with --yolo and --allow: %v", err)
		}
		dl := rl.Decide(call)
		if (d.Verdict == Deny) != (dl.Verdict == Deny) || (dl.Verdict > d.Verdict && (call.Tool != ShellTool || call.Parsed)) {
			t.Fatalf("--yolo/--allow changed %+v into %+v", d, dl)
		}
	})
}
