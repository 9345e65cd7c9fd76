package subagents

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/warrenhq/warren/tools"
)

func TestParseSpawn(t *testing.T) {
	cases := []struct {
		name    string
		args    string
		want    SpawnArgs
		wantErr string
	}{
		{"defaults", `{"blueprint":"coder","task":"fix"}`, SpawnArgs{Blueprint: "coder", Task: "fix", MaxChildDepth: -1}, ""},
		{"everything", `{"blueprint":"coder","task":"fix","wait":true,"seed_context":true,"max_child_depth":2}`,
			SpawnArgs{Blueprint: "coder", Task: "fix", Wait: true, SeedContext: true, MaxChildDepth: 2}, ""},
		{"depth written as float", `{"blueprint":"b","task":"t","max_child_depth":3e0}`, SpawnArgs{Blueprint: "b", Task: "t", MaxChildDepth: 3}, ""},
		{"depth zero", `{"blueprint":"b","task":"t","max_child_depth":0}`, SpawnArgs{Blueprint: "b", Task: "t", MaxChildDepth: 0}, ""},
		{"whitespace around", " \n{\"blueprint\":\"b\",\"task\":\"t\"}\n", SpawnArgs{Blueprint: "b", Task: "t", MaxChildDepth: -1}, ""},
		{"missing blueprint", `{"task":"t"}`, SpawnArgs{}, `invalid arguments for tool "spawn_agent": at (root): missing property 'blueprint'`},
		{"depth out of range", `{"blueprint":"b","task":"t","max_child_depth":99}`, SpawnArgs{},
			`invalid arguments for tool "spawn_agent": at /max_child_depth: must be an integer from 0 to 64 (got 99)`},
		{"wait is a string", `{"blueprint":"b","task":"t","wait":"true"}`, SpawnArgs{},
			`invalid arguments for tool "spawn_agent": at /wait: must be true or false, got string`},
		{"task is null", `{"blueprint":"b","task":null}`, SpawnArgs{},
			`invalid arguments for tool "spawn_agent": at /task: must be a string, got null`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSpawn(json.RawMessage(tc.args))
			checkParse(t, got, err, tc.want, tc.wantErr)
		})
	}
}

// TestParseValidatedSpawnAgrees: for every document spawn_agent's schema accepts, the one-pass
// decode gives exactly what ParseSpawn gives (the documents it cannot take fall back to it).
func TestParseValidatedSpawnAgrees(t *testing.T) {
	h, err := tools.NewHandle(Spawn{})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		`{"blueprint":"coder","task":"fix"}`,
		`{"blueprint":"coder","task":"fix","wait":true,"seed_context":true,"max_child_depth":2}`,
		`{"blueprint":"b","task":"t","max_child_depth":3e0}`,
		`{"blueprint":"b","task":"t","max_child_depth":0}`,
		`{"blueprint":"b","task":"","wait":false}`,
		`{"task":"t","blueprint":"b","blueprint":"c"}`,
		" \n{\"blueprint\":\"b\",\"task\":\"t\"}\n",
	} {
		t.Run(args, func(t *testing.T) {
			if err := h.Validate(json.RawMessage(args)); err != nil {
				t.Fatalf("the schema refuses it: %v", err)
			}
			want, wantErr := ParseSpawn(json.RawMessage(args))
			got, err := ParseValidatedSpawn(json.RawMessage(args))
			if got != want || (err == nil) != (wantErr == nil) {
				t.Fatalf("ParseValidatedSpawn = %+v, %v; ParseSpawn = %+v, %v", got, err, want, wantErr)
			}
		})
	}
}

func TestParseTarget(t *testing.T) {
	cases := []struct {
		name    string
		args    string
		want    string
		wantErr string
	}{
		{"child", `{"id":"planner-0/3"}`, "planner-0/3", ""},
		{"unicode", `{"id":"écrivain/1"}`, "écrivain/1", ""},
		{"empty", `{"id":""}`, "", `invalid arguments: at /id: must not be empty`},
		{"missing", `{}`, "", `invalid arguments: at (root): missing property 'id'`},
		{"unknown field", `{"id":"a","x":1}`, "", `invalid arguments: at (root): cannot decode the arguments: json: unknown field "x"`},
		{"not an object", `"a"`, "", `invalid arguments: at (root): the arguments must be a JSON object, got string`},
		{"broken json", `{"id":`, "", `invalid arguments: at (root): cannot decode the arguments: unexpected EOF`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTarget(json.RawMessage(tc.args))
			checkParse(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestParseSend(t *testing.T) {
	cases := []struct {
		name    string
		args    string
		want    SendArgs
		wantErr string
	}{
		{"ok", `{"id":"a/1","message":"look at <b>"}`, SendArgs{ID: "a/1", Message: "look at <b>"}, ""},
		{"empty message", `{"id":"a/1","message":""}`, SendArgs{},
			`invalid arguments for tool "send_to_agent": at /message: must not be empty`},
		{"message is a number", `{"id":"a/1","message":5}`, SendArgs{},
			`invalid arguments for tool "send_to_agent": at /message: must be a string, got number`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSend(json.RawMessage(tc.args))
			checkParse(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestParseFanOut(t *testing.T) {
	cases := []struct {
		name    string
		args    string
		want    FanOutArgs
		wantErr string
		noItems bool
	}{
		{"defaults", `{"items":["a","b"],"blueprint":"w"}`, FanOutArgs{Items: []string{"a", "b"}, Blueprint: "w", OnWorkerFailure: FailContinue}, "", false},
		{"everything", `{"items":["a"],"blueprint":"w","max_workers":4,"on_worker_failure":"fail_all"}`,
			FanOutArgs{Items: []string{"a"}, Blueprint: "w", MaxWorkers: 4, OnWorkerFailure: FailAll}, "", false},
		{"no items", `{"items":[],"blueprint":"w"}`, FanOutArgs{},
			`invalid arguments for tool "fan_out": at /items: must hold at least one item: no work items`, true},
		{"missing items", `{"blueprint":"w"}`, FanOutArgs{},
			`invalid arguments for tool "fan_out": at (root): missing property 'items' (or 'items_file'): no work items`, true},
		{"items file", `{"items_file":"work/items.txt","blueprint":"w","max_workers":8}`,
			FanOutArgs{ItemsFile: "work/items.txt", Blueprint: "w", MaxWorkers: 8, OnWorkerFailure: FailContinue}, "", false},
		{"items and items file", `{"items":["a"],"items_file":"x","blueprint":"w"}`, FanOutArgs{},
			`invalid arguments for tool "fan_out": at (root): give items or items_file, not both`, false},
		{"empty items file", `{"items_file":"","blueprint":"w"}`, FanOutArgs{},
			`invalid arguments for tool "fan_out": at /items_file: must not be empty`, false},
		{"empty item", `{"items":["a",""],"blueprint":"w"}`, FanOutArgs{},
			`invalid arguments for tool "fan_out": at /items/1: must not be empty`, false},
		{"bad policy", `{"items":["a"],"blueprint":"w","on_worker_failure":"halt"}`, FanOutArgs{},
			`invalid arguments for tool "fan_out": at /on_worker_failure: must be "continue" or "fail_all" (got "halt")`, false},
		{"workers zero", `{"items":["a"],"blueprint":"w","max_workers":0}`, FanOutArgs{},
			`invalid arguments for tool "fan_out": at /max_workers: must be an integer from 1 to 100000 (got 0)`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFanOut(json.RawMessage(tc.args))
			checkParse(t, got, err, tc.want, tc.wantErr)
			if errors.Is(err, ErrNoItems) != tc.noItems {
				t.Errorf("errors.Is(err, ErrNoItems) = %v, want %v", !tc.noItems, tc.noItems)
			}
		})
	}
}

// checkParse compares a Parse function's outcome with the expected value or error text.
func checkParse[T any](t *testing.T, got T, err error, want T, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil {
			t.Fatalf("got %+v, want error %q", got, wantErr)
		}
		if err.Error() != wantErr {
			t.Errorf("error = %q, want %q", err.Error(), wantErr)
		}
		if !errors.Is(err, tools.ErrInvalidArguments) {
			t.Errorf("error %v does not wrap ErrInvalidArguments", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestFailurePolicy(t *testing.T) {
	cases := []struct {
		text string
		want FailurePolicy
		ok   bool
	}{
		{"continue", FailContinue, true},
		{"fail_all", FailAll, true},
		{"Continue", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			got, err := ParseFailurePolicy(tc.text)
			if tc.ok {
				if err != nil || got != tc.want || got.String() != tc.text {
					t.Errorf("ParseFailurePolicy(%q) = %v, %v; want %v round-tripping", tc.text, got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, tools.ErrUnknownValue) {
				t.Errorf("ParseFailurePolicy(%q) error = %v, want ErrUnknownValue", tc.text, err)
			}
		})
	}
	if got := FailurePolicy(0).String(); got != "FailurePolicy(0)" {
		t.Errorf("zero policy String() = %q", got)
	}
}
