package blueprint

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/policy"
)

// describeScriptPermissions renders a [tool_script_permissions] table in sorted order.
func describeScriptPermissions(m map[string]policy.ScriptVerdict) string {
	parts := []string{}
	for _, fn := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fn+"="+m[fn].String())
	}
	return "{" + strings.Join(parts, " ") + "}"
}

const scriptedHeader = "name = \"scripted\"\n"
const scriptedStage = "\n[[stages]]\nname = \"work\"\n"

func TestScriptSettings(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		dynamic bool
		perms   map[string]policy.ScriptVerdict
	}{
		{name: "defaults", src: scriptedHeader + scriptedStage},
		{name: "dynamic on", src: scriptedHeader + "dynamic_tools = true\n" + scriptedStage, dynamic: true},
		{name: "dynamic off", src: scriptedHeader + "dynamic_tools = false\n" + scriptedStage},
		{name: "empty table", src: scriptedHeader + "[tool_script_permissions]\n" + scriptedStage},
		{name: "every value", src: scriptedHeader + "[tool_script_permissions]\nshell = \"inherit\"\ncall_tool = \"deny\"\nhttp_post = \"allow\"\n" + scriptedStage,
			perms: map[string]policy.ScriptVerdict{policy.FnShell: policy.ScriptInherit, policy.FnCallTool: policy.ScriptDeny, policy.FnHTTPPost: policy.ScriptAllow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bp, err := Parse("scripted.toml", []byte(tt.src), testTools)
			if err != nil {
				t.Fatal(err)
			}
			if bp.DynamicTools != tt.dynamic {
				t.Errorf("DynamicTools = %v, want %v", bp.DynamicTools, tt.dynamic)
			}
			if !maps.Equal(bp.ScriptPermissions, tt.perms) {
				t.Errorf("ScriptPermissions = %v, want %v", bp.ScriptPermissions, tt.perms)
			}
			checkInvariants(t, bp)
		})
	}
}

func TestCheckScriptCeiling(t *testing.T) {
	src := "name = \"scripted\"\n\n[tool_script_permissions]\nwrite_file = \"allow\"\nhttp_get = \"allow\"\nenv = \"deny\"\n" + scriptedStage
	bp, err := Parse("scripted.toml", []byte(src), testTools)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		host map[string]policy.ScriptVerdict
		want string
	}{
		{name: "host allows both", host: map[string]policy.ScriptVerdict{policy.FnWriteFile: policy.ScriptAllow, policy.FnHTTPGet: policy.ScriptAllow}},
		{name: "built-in defaults", want: "scripted.toml:4:1: tool_script_permissions.write_file: blueprint loosens a script permission: blueprint [tool_script_permissions] sets write_file = allow, but the host leaves write_file at its default, inherit, and a blueprint may only tighten it (allow < inherit < deny)\n" +
			"scripted.toml:5:1: tool_script_permissions.http_get: blueprint loosens a script permission: blueprint [tool_script_permissions] sets http_get = allow, but the host leaves http_get at its default, deny, and a blueprint may only tighten it (allow < inherit < deny)"},
		{name: "host denies http_get", host: map[string]policy.ScriptVerdict{policy.FnWriteFile: policy.ScriptAllow, policy.FnHTTPGet: policy.ScriptDeny, policy.FnEnv: policy.ScriptDeny},
			want: "scripted.toml:5:1: tool_script_permissions.http_get: blueprint loosens a script permission: blueprint [tool_script_permissions] sets http_get = allow, but host [tool_script_permissions] sets http_get = deny, and a blueprint may only tighten it (allow < inherit < deny)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := bp.CheckScriptCeiling(tt.host)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckScriptCeiling = %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("CheckScriptCeiling =\n%v\nwant\n%s", err, tt.want)
			}
			var errs tomlfile.Errors
			if !errors.As(err, &errs) || !errors.Is(err, policy.ErrScriptLoosens) {
				t.Errorf("error %T does not wrap tomlfile.Errors and ErrScriptLoosens", err)
			}
		})
	}
	if err := (&Blueprint{}).CheckScriptCeiling(nil); err != nil {
		t.Errorf("a blueprint without the table: %v", err)
	}
}

// TestScriptToolNames: script tools join the host's known tools under names with underscores and
// digits, and a blueprint names them like any tool.
func TestScriptToolNames(t *testing.T) {
	known := append(slices.Clone(testTools), "word_count", "fetch_v2", "x1")
	src := `name = "scripted"
[tool_permissions]
fetch_v2 = "deny"
[[stages]]
name = "work"
available_tools = ["word_count", "fetch_v2", "x1"]
required_tools = ["x1"]
  [stages.tool_permissions]
  word_count = "allow"
`
	bp, err := Parse("scripted.toml", []byte(src), known)
	if err != nil {
		t.Fatal(err)
	}
	st := &bp.Stages[0]
	if !slices.Equal(st.AvailableTools, []string{"fetch_v2", "word_count", "x1"}) || st.ToolPermissions["word_count"] != policy.Allow ||
		bp.ToolPermissions["fetch_v2"] != policy.Deny || !slices.Equal(st.RequiredTools, []string{"x1"}) {
		t.Errorf("stage %+v, agent permissions %v", st, bp.ToolPermissions)
	}
}

func TestScriptErrorsWrapSentinels(t *testing.T) {
	tests := []struct {
		file      string
		sentinels []error
	}{
		{"script_permissions_values", []error{policy.ErrBadScriptVerdict, policy.ErrUnknownScriptFunc}},
		{"script_permissions_unknown_tool", []error{policy.ErrUnknownScriptFunc, ErrUnknownTool}},
		{"script_permissions_not_table", []error{tomlfile.ErrType}},
		{"dynamic_tools_wrong_type", []error{tomlfile.ErrType}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load("testdata/bad/"+tt.file+".toml", testTools)
			for _, sentinel := range tt.sentinels {
				if !errors.Is(err, sentinel) {
					t.Errorf("errors.Is(%v, %v) = false", err, sentinel)
				}
			}
		})
	}
}

// A blueprint's [tool_script_permissions] is validated when it loads; whether it only tightens
// the host's table is checked once the host config is known.
func ExampleBlueprint_CheckScriptCeiling() {
	src := `name = "fetcher"
dynamic_tools = true

[tool_script_permissions]
http_get = "allow"
shell = "deny"

[[stages]]
name = "fetch"
`
	bp, err := Parse("fetcher.toml", []byte(src), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(bp.DynamicTools, bp.ScriptPermissions)
	fmt.Println(bp.CheckScriptCeiling(map[string]policy.ScriptVerdict{policy.FnHTTPGet: policy.ScriptAllow}))
	fmt.Println(bp.CheckScriptCeiling(nil))
	// Output:
	// true map[http_get:allow shell:deny]
	// <nil>
	// fetcher.toml:5:1: tool_script_permissions.http_get: blueprint loosens a script permission: blueprint [tool_script_permissions] sets http_get = allow, but the host leaves http_get at its default, deny, and a blueprint may only tighten it (allow < inherit < deny)
}
