package subagents

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/warrenhq/warren/tools"
)

// parseFor returns the Parse function of a tool, nil for list_agents (which takes no arguments).
func parseFor(name string) func(json.RawMessage) error {
	switch name {
	case NameSpawn:
		return func(a json.RawMessage) error { _, err := ParseSpawn(a); return err }
	case NameCheck, NameWait, NameKill:
		return func(a json.RawMessage) error { _, err := ParseTarget(a); return err }
	case NameSend:
		return func(a json.RawMessage) error { _, err := ParseSend(a); return err }
	case NameFanOut:
		return func(a json.RawMessage) error { _, err := ParseFanOut(a); return err }
	}
	return nil
}

// TestSchemas checks every tool's schema accepts and refuses what its description promises, and
// that the tool's Parse function agrees with the schema on every case.
func TestSchemas(t *testing.T) {
	longMessage := `"` + strings.Repeat("é", maxMessageLength) + `"`
	tooLongMessage := `"` + strings.Repeat("é", maxMessageLength+1) + `"`
	cases := []struct {
		name  string
		tool  tools.Tool
		args  string
		valid bool
	}{
		{"spawn minimal", Spawn{}, `{"blueprint":"coder","task":"fix it"}`, true},
		{"spawn empty task", Spawn{}, `{"blueprint":"coder","task":""}`, true},
		{"spawn all fields", Spawn{}, `{"blueprint":"coder","task":"t","wait":true,"seed_context":false,"max_child_depth":64}`, true},
		{"spawn depth zero", Spawn{}, `{"blueprint":"coder","task":"t","max_child_depth":0}`, true},
		{"spawn depth as float", Spawn{}, `{"blueprint":"coder","task":"t","max_child_depth":2.0}`, true},
		{"spawn depth too big", Spawn{}, `{"blueprint":"coder","task":"t","max_child_depth":65}`, false},
		{"spawn depth negative", Spawn{}, `{"blueprint":"coder","task":"t","max_child_depth":-1}`, false},
		{"spawn depth fractional", Spawn{}, `{"blueprint":"coder","task":"t","max_child_depth":1.5}`, false},
		{"spawn depth string", Spawn{}, `{"blueprint":"coder","task":"t","max_child_depth":"2"}`, false},
		{"spawn missing task", Spawn{}, `{"blueprint":"coder"}`, false},
		{"spawn missing blueprint", Spawn{}, `{"task":"t"}`, false},
		{"spawn empty blueprint", Spawn{}, `{"blueprint":"","task":"t"}`, false},
		{"spawn null blueprint", Spawn{}, `{"blueprint":null,"task":"t"}`, false},
		{"spawn wait not bool", Spawn{}, `{"blueprint":"coder","task":"t","wait":"yes"}`, false},
		{"spawn wait null", Spawn{}, `{"blueprint":"coder","task":"t","wait":null}`, false},
		{"spawn unknown field", Spawn{}, `{"blueprint":"coder","task":"t","model":"x"}`, false},
		{"spawn array", Spawn{}, `["coder","t"]`, false},
		{"spawn empty args", Spawn{}, ``, false},
		{"check id", Check{}, `{"id":"planner-0/1"}`, true},
		{"check empty id", Check{}, `{"id":""}`, false},
		{"check number id", Check{}, `{"id":1}`, false},
		{"check missing id", Check{}, `{}`, false},
		{"wait id", Wait{}, `{"id":"planner-0"}`, true},
		{"wait extra field", Wait{}, `{"id":"planner-0","timeout":5}`, false},
		{"kill id", Kill{}, `{"id":"planner-0/2/1"}`, true},
		{"kill null", Kill{}, `null`, false},
		{"send ok", Send{}, `{"id":"a/1","message":"hello"}`, true},
		{"send longest message", Send{}, `{"id":"a/1","message":` + longMessage + `}`, true},
		{"send message too long", Send{}, `{"id":"a/1","message":` + tooLongMessage + `}`, false},
		{"send empty message", Send{}, `{"id":"a/1","message":""}`, false},
		{"send missing message", Send{}, `{"id":"a/1"}`, false},
		{"send missing id", Send{}, `{"message":"hi"}`, false},
		{"list empty object", List{}, `{}`, true},
		{"list empty args", List{}, ``, true},
		{"list any field", List{}, `{"all":true}`, false},
		{"fan_out minimal", FanOut{}, `{"items":["a"],"blueprint":"w"}`, true},
		{"fan_out all fields", FanOut{}, `{"items":["a","b"],"blueprint":"w","max_workers":100000,"on_worker_failure":"fail_all"}`, true},
		{"fan_out continue", FanOut{}, `{"items":["a"],"blueprint":"w","on_worker_failure":"continue"}`, true},
		{"fan_out no items", FanOut{}, `{"items":[],"blueprint":"w"}`, false},
		{"fan_out empty item", FanOut{}, `{"items":["a",""],"blueprint":"w"}`, false},
		{"fan_out item not string", FanOut{}, `{"items":["a",3],"blueprint":"w"}`, false},
		{"fan_out items string", FanOut{}, `{"items":"a","blueprint":"w"}`, false},
		{"fan_out missing blueprint", FanOut{}, `{"items":["a"]}`, false},
		{"fan_out missing items", FanOut{}, `{"blueprint":"w"}`, false},
		{"fan_out zero workers", FanOut{}, `{"items":["a"],"blueprint":"w","max_workers":0}`, false},
		{"fan_out too many workers", FanOut{}, `{"items":["a"],"blueprint":"w","max_workers":100001}`, false},
		{"fan_out bad policy", FanOut{}, `{"items":["a"],"blueprint":"w","on_worker_failure":"stop"}`, false},
		{"fan_out items file", FanOut{}, `{"items_file":"items.txt","blueprint":"w","max_workers":8,"on_worker_failure":"continue"}`, true},
		{"fan_out items and items file", FanOut{}, `{"items":["a"],"items_file":"items.txt","blueprint":"w"}`, false},
		{"fan_out empty items file", FanOut{}, `{"items_file":"","blueprint":"w"}`, false},
		{"fan_out items file not string", FanOut{}, `{"items_file":["a"],"blueprint":"w"}`, false},
		{"fan_out trailing data", FanOut{}, `{"items":["a"],"blueprint":"w"} {}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := tools.NewHandle(tc.tool)
			if err != nil {
				t.Fatalf("NewHandle: %v", err)
			}
			err = h.Validate(json.RawMessage(tc.args))
			if (err == nil) != tc.valid {
				t.Fatalf("Validate(%s) = %v, want valid=%v", tc.args, err, tc.valid)
			}
			if err != nil && !errors.Is(err, tools.ErrInvalidArguments) {
				t.Errorf("Validate error %v does not wrap ErrInvalidArguments", err)
			}
			parse := parseFor(tc.tool.Spec().Name)
			if parse == nil {
				return
			}
			perr := parse(json.RawMessage(tc.args))
			if (perr == nil) != tc.valid {
				t.Fatalf("Parse(%s) = %v, but the schema says valid=%v", tc.args, perr, tc.valid)
			}
			if perr != nil && !errors.Is(perr, tools.ErrInvalidArguments) {
				t.Errorf("Parse error %v does not wrap ErrInvalidArguments", perr)
			}
		})
	}
}

func TestToolsAreWorldTools(t *testing.T) {
	wantOps := map[string]Op{
		NameSpawn: OpSpawn, NameCheck: OpCheck, NameWait: OpWait, NameSend: OpSend,
		NameKill: OpKill, NameList: OpList, NameFanOut: OpFanOut,
	}
	all := Tools()
	if len(all) != len(wantOps) {
		t.Fatalf("Tools() has %d tools, want %d", len(all), len(wantOps))
	}
	for i, tool := range all {
		name := tool.Spec().Name
		t.Run(name, func(t *testing.T) {
			if i > 0 && all[i-1].Spec().Name >= name {
				t.Errorf("Tools() not in name order: %q before %q", all[i-1].Spec().Name, name)
			}
			wt, ok := tool.(WorldTool)
			if !ok {
				t.Fatalf("%s is not a WorldTool", name)
			}
			if wt.Op() != wantOps[name] || wt.Op().String() != name {
				t.Errorf("Op() = %v (%d), want %v", wt.Op(), wt.Op(), wantOps[name])
			}
			if _, inline := tool.(tools.Inline); inline {
				t.Errorf("%s implements Inline; world tools must go to the sub-agent system", name)
			}
			_, err := tool.Execute(&tools.ExecContext{}, json.RawMessage(`{}`))
			if !errors.Is(err, ErrNeedsWorld) {
				t.Fatalf("Execute error = %v, want ErrNeedsWorld", err)
			}
			want := name + " runs inside the world's sub-agent system; it cannot run here"
			if err.Error() != want {
				t.Errorf("Execute error text = %q, want %q", err.Error(), want)
			}
			if desc := tool.Spec().Description; len(desc) < 150 {
				t.Errorf("description is too thin to guide a model (%d chars): %q", len(desc), desc)
			}
		})
	}
}

func TestOpString(t *testing.T) {
	cases := []struct {
		op   Op
		want string
	}{
		{OpSpawn, "spawn_agent"},
		{OpFanOut, "fan_out"},
		{0, "Op(0)"},
		{OpFanOut + 1, "Op(8)"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.op.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	r := tools.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatalf("Register: %v", err)
	}
	want := []string{NameCheck, NameFanOut, NameKill, NameList, NameSend, NameSpawn, NameWait}
	if got := r.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("registered %v, want %v", got, want)
	}
	if err := Register(r); !errors.Is(err, tools.ErrDuplicate) {
		t.Errorf("second Register = %v, want ErrDuplicate", err)
	}
}
