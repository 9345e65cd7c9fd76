package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseScriptVerdict(t *testing.T) {
	tests := []struct {
		in   string
		want ScriptVerdict
		err  string
	}{
		{in: "allow", want: ScriptAllow},
		{in: "deny", want: ScriptDeny},
		{in: "inherit", want: ScriptInherit},
		{in: "ask", err: `invalid script permission "ask"; valid: allow, deny, inherit (a script's host call cannot wait for an answer, so there is no ask)`},
		{in: "Allow", err: `invalid script permission "Allow"; valid: allow, deny, inherit`},
		{in: "", err: `invalid script permission ""; valid: allow, deny, inherit`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseScriptVerdict(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || !errors.Is(err, ErrBadScriptVerdict) {
					t.Fatalf("ParseScriptVerdict(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want || got.String() != tt.in {
				t.Fatalf("ParseScriptVerdict(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	if s := ScriptVerdict(0).String(); s != "ScriptVerdict(0)" {
		t.Errorf("zero verdict prints %q", s)
	}
	if !(ScriptAllow < ScriptInherit && ScriptInherit < ScriptDeny) {
		t.Errorf("tightening order is not allow < inherit < deny")
	}
}

func TestScriptFuncs(t *testing.T) {
	want := []string{FnCallTool, FnEnv, FnHTTPGet, FnHTTPPost, FnListDir, FnReadFile, FnShell, FnWriteFile}
	got := ScriptFuncs()
	if !slices.Equal(got, want) || !slices.IsSorted(got) {
		t.Fatalf("ScriptFuncs() = %v, want %v", got, want)
	}
	if strings.Join(got, ", ") != validScriptFuncs {
		t.Errorf("validScriptFuncs %q does not list %v", validScriptFuncs, got)
	}
	for i, fn := range got {
		if scriptFuncIndex(fn) != i {
			t.Errorf("scriptFuncIndex(%q) = %d, want %d", fn, scriptFuncIndex(fn), i)
		}
	}
	got[0] = "changed"
	if ScriptFuncs()[0] != FnCallTool {
		t.Errorf("ScriptFuncs shares its slice with callers")
	}
}

func TestScriptDefaults(t *testing.T) {
	want := map[string]ScriptVerdict{
		FnReadFile: ScriptInherit, FnWriteFile: ScriptInherit, FnListDir: ScriptInherit, FnShell: ScriptInherit,
		FnHTTPGet: ScriptDeny, FnHTTPPost: ScriptDeny, FnEnv: ScriptAllow, FnCallTool: ScriptAllow,
	}
	p, err := NewScriptPermissions(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range ScriptFuncs() {
		if got := DefaultScriptVerdict(fn); got != want[fn] {
			t.Errorf("DefaultScriptVerdict(%s) = %v, want %v", fn, got, want[fn])
		}
		if v, who := p.Verdict(fn); v != want[fn] || who != "default" {
			t.Errorf("Verdict(%s) = %v, %q; want %v, default", fn, v, who, want[fn])
		}
	}
	if DefaultScriptVerdict("log") != 0 {
		t.Errorf("log has a default, but it is not gated")
	}
	if v, who := p.Verdict("eval"); v != 0 || who != "" {
		t.Errorf("Verdict(eval) = %v, %q", v, who)
	}
}

func TestCheckScriptEntry(t *testing.T) {
	tests := []struct {
		name     string
		fn       string
		v        ScriptVerdict
		sentinel error
		err      string
	}{
		{name: "inherit read_file", fn: FnReadFile, v: ScriptInherit},
		{name: "inherit shell", fn: FnShell, v: ScriptInherit},
		{name: "allow env", fn: FnEnv, v: ScriptAllow},
		{name: "deny call_tool", fn: FnCallTool, v: ScriptDeny},
		{name: "inherit env", fn: FnEnv, v: ScriptInherit, sentinel: ErrBadScriptVerdict,
			err: "invalid script permission: inherit is not valid for env, which has no built-in tool of the same name to inherit from; valid: allow, deny"},
		{name: "inherit http_get", fn: FnHTTPGet, v: ScriptInherit, sentinel: ErrBadScriptVerdict,
			err: "invalid script permission: inherit is not valid for http_get, which has no built-in tool of the same name to inherit from; valid: allow, deny"},
		{name: "zero verdict", fn: FnShell, v: 0, sentinel: ErrBadScriptVerdict,
			err: "invalid script permission ScriptVerdict(0) for shell; valid: allow, deny, inherit"},
		{name: "unknown function", fn: "log", v: ScriptAllow, sentinel: ErrUnknownScriptFunc,
			err: `unknown script host function "log"; valid: call_tool, env, http_get, http_post, list_dir, read_file, shell, write_file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckScriptEntry(tt.fn, tt.v)
			if tt.sentinel == nil {
				if err != nil {
					t.Fatalf("CheckScriptEntry(%s, %v) = %v", tt.fn, tt.v, err)
				}
				return
			}
			if err == nil || err.Error() != tt.err || !errors.Is(err, tt.sentinel) {
				t.Fatalf("CheckScriptEntry(%s, %v) = %v\nwant %s", tt.fn, tt.v, err, tt.err)
			}
		})
	}
}

func TestParseScriptTable(t *testing.T) {
	got, problems := ParseScriptTable(map[string]string{
		"write_file": "inherit", "http_get": "allow", "env": "inherit", "shell": "ask", "http_post": "maybe", "eval": "deny",
	})
	if want := map[string]ScriptVerdict{FnWriteFile: ScriptInherit, FnHTTPGet: ScriptAllow}; len(got) != len(want) || got[FnWriteFile] != ScriptInherit || got[FnHTTPGet] != ScriptAllow {
		t.Errorf("valid entries %v, want %v", got, want)
	}
	want := []string{
		`env: invalid script permission: inherit is not valid for env, which has no built-in tool of the same name to inherit from; valid: allow, deny`,
		`eval: unknown script host function "eval"; valid: call_tool, env, http_get, http_post, list_dir, read_file, shell, write_file`,
		`http_post: invalid script permission "maybe" for http_post; valid: allow, deny`,
		`shell: invalid script permission "ask" for shell; valid: allow, deny, inherit (a script's host call cannot wait for an answer, so there is no ask)`,
	}
	var lines []string
	for _, p := range problems {
		lines = append(lines, p.Name+": "+p.Err.Error())
	}
	if !slices.Equal(lines, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if !errors.Is(problems[1].Err, ErrUnknownScriptFunc) || !errors.Is(problems[2].Err, ErrBadScriptVerdict) {
		t.Errorf("problems do not wrap their sentinels: %v", problems)
	}
	if got, problems := ParseScriptTable(nil); got != nil || problems != nil {
		t.Errorf("empty table: %v %v", got, problems)
	}
}

func TestCheckScriptTightening(t *testing.T) {
	tests := []struct {
		name      string
		host      map[string]ScriptVerdict
		blueprint map[string]ScriptVerdict
		want      []string
	}{
		{name: "nothing set"},
		{name: "tightens the host", host: map[string]ScriptVerdict{FnHTTPGet: ScriptAllow}, blueprint: map[string]ScriptVerdict{FnHTTPGet: ScriptDeny}},
		{name: "equals the host", host: map[string]ScriptVerdict{FnShell: ScriptInherit}, blueprint: map[string]ScriptVerdict{FnShell: ScriptInherit}},
		{name: "inherit under allow", host: map[string]ScriptVerdict{FnReadFile: ScriptAllow}, blueprint: map[string]ScriptVerdict{FnReadFile: ScriptInherit}},
		{name: "tightens a default", blueprint: map[string]ScriptVerdict{FnEnv: ScriptDeny, FnWriteFile: ScriptDeny}},
		{name: "allow over the host's deny", host: map[string]ScriptVerdict{FnHTTPGet: ScriptDeny}, blueprint: map[string]ScriptVerdict{FnHTTPGet: ScriptAllow},
			want: []string{"http_get: blueprint loosens a script permission: blueprint [tool_script_permissions] sets http_get = allow, but host [tool_script_permissions] sets http_get = deny, and a blueprint may only tighten it (allow < inherit < deny)"}},
		{name: "allow over the default deny", blueprint: map[string]ScriptVerdict{FnHTTPPost: ScriptAllow},
			want: []string{"http_post: blueprint loosens a script permission: blueprint [tool_script_permissions] sets http_post = allow, but the host leaves http_post at its default, deny, and a blueprint may only tighten it (allow < inherit < deny)"}},
		{name: "allow over the default inherit", blueprint: map[string]ScriptVerdict{FnWriteFile: ScriptAllow, FnReadFile: ScriptAllow},
			want: []string{
				"read_file: blueprint loosens a script permission: blueprint [tool_script_permissions] sets read_file = allow, but the host leaves read_file at its default, inherit, and a blueprint may only tighten it (allow < inherit < deny)",
				"write_file: blueprint loosens a script permission: blueprint [tool_script_permissions] sets write_file = allow, but the host leaves write_file at its default, inherit, and a blueprint may only tighten it (allow < inherit < deny)",
			}},
		{name: "inherit over the host's deny", host: map[string]ScriptVerdict{FnShell: ScriptDeny}, blueprint: map[string]ScriptVerdict{FnShell: ScriptInherit},
			want: []string{"shell: blueprint loosens a script permission: blueprint [tool_script_permissions] sets shell = inherit, but host [tool_script_permissions] sets shell = deny, and a blueprint may only tighten it (allow < inherit < deny)"}},
		{name: "invalid blueprint entry", blueprint: map[string]ScriptVerdict{FnEnv: ScriptInherit},
			want: []string{"env: invalid script permission: inherit is not valid for env, which has no built-in tool of the same name to inherit from; valid: allow, deny"}},
		{name: "invalid host entry counts as deny", host: map[string]ScriptVerdict{FnEnv: 9}, blueprint: map[string]ScriptVerdict{FnEnv: ScriptAllow},
			want: []string{"env: blueprint loosens a script permission: blueprint [tool_script_permissions] sets env = allow, but host [tool_script_permissions] sets env = deny, and a blueprint may only tighten it (allow < inherit < deny)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range CheckScriptTightening(tt.host, tt.blueprint) {
				got = append(got, p.Name+": "+p.Err.Error())
				if !errors.Is(p.Err, ErrScriptLoosens) && !errors.Is(p.Err, ErrBadScriptVerdict) {
					t.Errorf("%s wraps no sentinel", p.Err)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestNewScriptPermissionsReportsEverything(t *testing.T) {
	_, err := NewScriptPermissions(
		map[string]ScriptVerdict{"eval": ScriptAllow, FnEnv: ScriptInherit, FnShell: ScriptDeny},
		map[string]ScriptVerdict{FnShell: ScriptAllow, FnHTTPGet: ScriptAllow, FnCallTool: ScriptDeny},
	)
	want := strings.Join([]string{
		`host [tool_script_permissions] entry "env": invalid script permission: inherit is not valid for env, which has no built-in tool of the same name to inherit from; valid: allow, deny`,
		`host [tool_script_permissions] entry "eval": unknown script host function "eval"; valid: call_tool, env, http_get, http_post, list_dir, read_file, shell, write_file`,
		`blueprint [tool_script_permissions] entry "http_get": blueprint loosens a script permission: blueprint [tool_script_permissions] sets http_get = allow, but the host leaves http_get at its default, deny, and a blueprint may only tighten it (allow < inherit < deny)`,
		`blueprint [tool_script_permissions] entry "shell": blueprint loosens a script permission: blueprint [tool_script_permissions] sets shell = allow, but host [tool_script_permissions] sets shell = deny, and a blueprint may only tighten it (allow < inherit < deny)`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	for _, sentinel := range []error{ErrBadScriptVerdict, ErrUnknownScriptFunc, ErrScriptLoosens} {
		if !errors.Is(err, sentinel) {
			t.Errorf("errors.Is(err, %v) = false", sentinel)
		}
	}
}

// builtinAllows is a builtin callback backed by a set of tools that resolve to allow.
func builtinAllows(tools ...string) func(string) bool {
	return func(tool string) bool { return slices.Contains(tools, tool) }
}

func TestScriptDecide(t *testing.T) {
	tests := []struct {
		name      string
		host      map[string]ScriptVerdict
		blueprint map[string]ScriptVerdict
		fn        string
		builtin   func(string) bool
		allowed   bool
		layer     string
		reason    string
	}{
		{name: "default allow", fn: FnEnv, allowed: true, layer: LayerScriptDefault,
			reason: "no tool_script_permissions entry sets env; its default is allow, since the host's [scripting] allow_env already limits which variables a script can read"},
		{name: "default allow call_tool", fn: FnCallTool, allowed: true, layer: LayerScriptDefault,
			reason: "no tool_script_permissions entry sets call_tool; its default is allow, since the called tool passes the full permission gate anyway"},
		{name: "default deny", fn: FnHTTPGet, builtin: builtinAllows(FnHTTPGet), layer: LayerScriptDefault,
			reason: "no tool_script_permissions entry sets http_get; its default is deny, since a script reaches the network only where the host opts in, so a script may not make HTTP GET requests"},
		{name: "default inherit, built-in allows", fn: FnReadFile, builtin: builtinAllows(FnReadFile), allowed: true, layer: LayerScriptDefault,
			reason: "no tool_script_permissions entry sets read_file; its default is inherit, since it follows the built-in read_file tool; inherit: the built-in read_file resolves to allow for this agent in its current stage"},
		{name: "default inherit, built-in does not allow", fn: FnWriteFile, builtin: builtinAllows(FnReadFile), layer: LayerScriptDefault,
			reason: "no tool_script_permissions entry sets write_file; its default is inherit, since it follows the built-in write_file tool; inherit: the built-in write_file does not resolve to allow for this agent in its current stage, so a script may not write files"},
		{name: "inherit with nil builtin", fn: FnListDir, layer: LayerScriptDefault,
			reason: "no tool_script_permissions entry sets list_dir; its default is inherit, since it follows the built-in list_dir tool; inherit: the built-in list_dir does not resolve to allow for this agent in its current stage, so a script may not list folders"},
		{name: "host allow", host: map[string]ScriptVerdict{FnHTTPPost: ScriptAllow}, fn: FnHTTPPost, allowed: true, layer: LayerScriptHost,
			reason: "tool_script_permissions (host) sets http_post = allow"},
		{name: "host allow ignores builtin", host: map[string]ScriptVerdict{FnWriteFile: ScriptAllow}, fn: FnWriteFile, builtin: builtinAllows(), allowed: true, layer: LayerScriptHost,
			reason: "tool_script_permissions (host) sets write_file = allow"},
		{name: "host deny ignores builtin", host: map[string]ScriptVerdict{FnShell: ScriptDeny}, fn: FnShell, builtin: builtinAllows(FnShell), layer: LayerScriptHost,
			reason: "tool_script_permissions (host) sets shell = deny, so a script may not run commands"},
		{name: "host inherit, built-in allows", host: map[string]ScriptVerdict{FnShell: ScriptInherit}, fn: FnShell, builtin: builtinAllows(FnShell), allowed: true, layer: LayerScriptHost,
			reason: "tool_script_permissions (host) sets shell = inherit; inherit: the built-in shell resolves to allow for this agent in its current stage"},
		{name: "blueprint tightens host allow to inherit", host: map[string]ScriptVerdict{FnReadFile: ScriptAllow}, blueprint: map[string]ScriptVerdict{FnReadFile: ScriptInherit},
			fn: FnReadFile, builtin: builtinAllows(), layer: LayerScriptBlueprint,
			reason: "tool_script_permissions (blueprint) sets read_file = inherit, tightening the host's allow; inherit: the built-in read_file does not resolve to allow for this agent in its current stage, so a script may not read files"},
		{name: "blueprint tightens a default", blueprint: map[string]ScriptVerdict{FnEnv: ScriptDeny}, fn: FnEnv, layer: LayerScriptBlueprint,
			reason: "tool_script_permissions (blueprint) sets env = deny, tightening the default allow, so a script may not read environment variables"},
		{name: "blueprint equal to host reports host", host: map[string]ScriptVerdict{FnCallTool: ScriptDeny}, blueprint: map[string]ScriptVerdict{FnCallTool: ScriptDeny},
			fn: FnCallTool, layer: LayerScriptHost, reason: "tool_script_permissions (host) sets call_tool = deny, so a script may not call other tools"},
		{name: "unknown function", fn: "eval", builtin: builtinAllows("eval"), layer: LayerScriptDefault,
			reason: `"eval" is no host function a script may call; valid: call_tool, env, http_get, http_post, list_dir, read_file, shell, write_file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewScriptPermissions(tt.host, tt.blueprint)
			if err != nil {
				t.Fatal(err)
			}
			allowed, layer, reason := p.Decide(tt.fn, tt.builtin)
			if allowed != tt.allowed || layer != tt.layer || reason != tt.reason {
				t.Errorf("Decide(%s) = %v, %q, %q\nwant %v, %q, %q", tt.fn, allowed, layer, reason, tt.allowed, tt.layer, tt.reason)
			}
		})
	}
}

// TestScriptDecideSeesStageChange: the builtin callback is asked at every call, so an agent
// whose stage changes between two host calls gets the new stage's answer.
func TestScriptDecideSeesStageChange(t *testing.T) {
	p, err := NewScriptPermissions(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	stage := "draft"
	allowIn := map[string][]string{"draft": {FnReadFile}, "publish": {FnReadFile, FnWriteFile}}
	var asked []string
	builtin := func(tool string) bool {
		asked = append(asked, stage+":"+tool)
		return slices.Contains(allowIn[stage], tool)
	}
	var got []bool
	for _, s := range []string{"draft", "publish", "draft"} {
		stage = s
		allowed, _, _ := p.Decide(FnWriteFile, builtin)
		got = append(got, allowed)
	}
	if !slices.Equal(got, []bool{false, true, false}) {
		t.Errorf("write_file across draft, publish, draft = %v, want [false true false]", got)
	}
	if want := []string{"draft:write_file", "publish:write_file", "draft:write_file"}; !slices.Equal(asked, want) {
		t.Errorf("builtin asked %v, want %v", asked, want)
	}
}

// TestScriptDecideConsultsBuiltinOnlyForInherit: allow and deny never depend on the built-in tool.
func TestScriptDecideConsultsBuiltinOnlyForInherit(t *testing.T) {
	p, err := NewScriptPermissions(map[string]ScriptVerdict{FnReadFile: ScriptAllow, FnWriteFile: ScriptDeny}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	builtin := func(tool string) bool { asked = append(asked, tool); return true }
	for _, fn := range ScriptFuncs() {
		p.Decide(fn, builtin)
	}
	if want := []string{FnListDir, FnShell}; !slices.Equal(asked, want) {
		t.Errorf("builtin asked about %v, want only the inherit functions %v", asked, want)
	}
}

func TestScriptDecideAllocatesNothing(t *testing.T) {
	p, err := NewScriptPermissions(map[string]ScriptVerdict{FnHTTPGet: ScriptAllow}, nil)
	if err != nil {
		t.Fatal(err)
	}
	builtin := builtinAllows(FnReadFile)
	allocs := testing.AllocsPerRun(100, func() {
		for _, fn := range scriptFuncNamesForBench {
			p.Decide(fn, builtin)
		}
	})
	if allocs != 0 {
		t.Errorf("Decide allocates %v times per round", allocs)
	}
}

var scriptFuncNamesForBench = ScriptFuncs()

func BenchmarkScriptDecide(b *testing.B) {
	p, err := NewScriptPermissions(map[string]ScriptVerdict{FnHTTPGet: ScriptAllow}, map[string]ScriptVerdict{FnShell: ScriptDeny})
	if err != nil {
		b.Fatal(err)
	}
	builtin := func(tool string) bool { return tool == FnReadFile }
	for _, fn := range []string{FnEnv, FnReadFile, FnShell} {
		b.Run(fn, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Decide(fn, builtin)
			}
		})
	}
}

func BenchmarkNewScriptPermissions(b *testing.B) {
	host := map[string]ScriptVerdict{FnHTTPGet: ScriptAllow, FnEnv: ScriptAllow}
	blueprint := map[string]ScriptVerdict{FnShell: ScriptDeny}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewScriptPermissions(host, blueprint); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleScriptPermissions_Decide() {
	p, err := NewScriptPermissions(
		map[string]ScriptVerdict{FnHTTPGet: ScriptAllow},  // the host opts into http_get
		map[string]ScriptVerdict{FnWriteFile: ScriptDeny}, // the blueprint tightens write_file
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	// In this stage the built-in read_file resolves to allow; nothing else does.
	builtin := func(tool string) bool { return tool == FnReadFile }
	for _, fn := range []string{FnHTTPGet, FnReadFile, FnWriteFile, FnListDir} {
		allowed, layer, reason := p.Decide(fn, builtin)
		fmt.Printf("%s: %v (%s) %s\n", fn, allowed, layer, reason)
	}
	_, err = NewScriptPermissions(nil, map[string]ScriptVerdict{FnHTTPPost: ScriptAllow})
	fmt.Println(err)
	// Output:
	// http_get: true (script:host) tool_script_permissions (host) sets http_get = allow
	// read_file: true (script:default) no tool_script_permissions entry sets read_file; its default is inherit, since it follows the built-in read_file tool; inherit: the built-in read_file resolves to allow for this agent in its current stage
	// write_file: false (script:blueprint) tool_script_permissions (blueprint) sets write_file = deny, tightening the default inherit, so a script may not write files
	// list_dir: false (script:default) no tool_script_permissions entry sets list_dir; its default is inherit, since it follows the built-in list_dir tool; inherit: the built-in list_dir does not resolve to allow for this agent in its current stage, so a script may not list folders
	// blueprint [tool_script_permissions] entry "http_post": blueprint loosens a script permission: blueprint [tool_script_permissions] sets http_post = allow, but the host leaves http_post at its default, deny, and a blueprint may only tighten it (allow < inherit < deny)
}
