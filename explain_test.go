package warren_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// researcher is a shipped blueprint: gather (write_file asks) then report (read_file allowed).
var researcher = filepath.Join("scenarios", "examples", "blueprints", "researcher.toml")

// explain asks req with a background context and fails t on an error.
func explain(t *testing.T, req warren.ExplainRequest) *warren.Explanation {
	t.Helper()
	x, err := warren.Explain(context.Background(), req)
	if err != nil {
		t.Fatalf("Explain(%+v): %v", req, err)
	}
	return x
}

// verdict is "<verdict> by <layer>" of x.
func verdict(x *warren.Explanation) string {
	return fmt.Sprintf("%s by %s", x.Gate.Decision.Verdict, x.Gate.Decision.Layer)
}

// TestExplainDecides: the request's stage, grants, safety mode and launch overrides reach the
// gate, and the answer says which stage and line it was decided in.
func TestExplainDecides(t *testing.T) {
	write := `{"path":"notes.md","content":"x"}`
	tests := []struct {
		name  string
		req   warren.ExplainRequest
		stage string
		want  string
	}{
		{"entry stage", warren.ExplainRequest{Tool: "write_file", Args: write}, "gather", "ask by blueprint:stage"},
		{"named stage", warren.ExplainRequest{Stage: "report", Tool: "read_file", Args: `{"path":"a"}`}, "report", "allow by blueprint:agent"},
		{"stage grant", warren.ExplainRequest{Grants: []string{"write_file=stage"}, Tool: "write_file", Args: write}, "gather", "allow by grant:stage"},
		{"read-only", warren.ExplainRequest{SafetyMode: "read-only", Tool: "write_file", Args: write}, "gather", "deny by safety:read-only"},
		{"launch deny", warren.ExplainRequest{Launch: warren.Launch{Deny: []string{"write_file"}}, Tool: "write_file", Args: write}, "gather", "deny by launch:deny"},
		{"unattended", warren.ExplainRequest{Unattended: true, Tool: "write_file", Args: write}, "gather", "deny by unattended"},
		{"not in the stage", warren.ExplainRequest{Tool: "list_dir", Args: `{}`}, "gather", "deny by visibility"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Blueprint = researcher
			x := explain(t, tt.req)
			if got := verdict(x); got != tt.want {
				t.Errorf("%s, want %s\n%s", got, tt.want, x.Gate)
			}
			if x.Stage != tt.stage || !slices.Equal(x.Line, []string{"blueprint researcher"}) {
				t.Errorf("stage %q, line %q; want stage %q of blueprint researcher", x.Stage, x.Line, tt.stage)
			}
			if x.Command != "" {
				t.Errorf("command %q for a tool that is not the shell", x.Command)
			}
			if err := x.Err(); err != nil {
				t.Errorf("Err: %v", err)
			}
		})
	}
}

// TestExplainShell: a shell call's arguments may be the line itself or JSON, and the answer
// carries the line it judged.
func TestExplainShell(t *testing.T) {
	bp := writeFile(t, t.TempDir(), "sh.toml", "name = \"sh\"\n\n[[stages]]\nname = \"run\"\navailable_tools = [\"shell\"]\n")
	for _, args := range []string{"ls -la && cat notes.md", `{"command":"ls -la && cat notes.md"}`} {
		x := explain(t, warren.ExplainRequest{Blueprint: bp, Tool: warren.ShellTool, Args: args})
		if x.Command != "ls -la && cat notes.md" || verdict(x) != "allow by safe" {
			t.Errorf("args %s: command %q, %s; want the line, allowed by its safe keys\n%s", args, x.Command, verdict(x), x.Gate)
		}
	}
}

// TestExplainUnderScenario: with a scenario, the agent and its ancestors are its groups and
// [spawn] keys, and the line names the stage each ancestor spawned the next from.
func TestExplainUnderScenario(t *testing.T) {
	sc := filepath.Join("scenarios", "examples", "kill_tree.toml")
	x := explain(t, warren.ExplainRequest{Scenario: sc, Under: []string{"root:work", "chain"}, Blueprint: "chain", Tool: "todo_add", Args: `{"text":"a"}`})
	want := []string{"blueprint chain (stage work)", "blueprint chain (stage work)", "blueprint chain"}
	if !slices.Equal(x.Line, want) || x.Stage != "work" {
		t.Errorf("line %q, stage %q; want %q, stage work", x.Line, x.Stage, want)
	}
	if err := x.Err(); err != nil {
		t.Error(err)
	}
	for _, req := range []warren.ExplainRequest{
		{Scenario: sc, Blueprint: "nobody", Tool: "todo_add"},
		{Scenario: sc, Under: []string{"root"}, Blueprint: "nobody", Tool: "todo_add"},
	} {
		if _, err := warren.Explain(context.Background(), req); !errors.Is(err, warren.ErrUnknownBlueprint) {
			t.Errorf("%+v: %v, want ErrUnknownBlueprint", req, err)
		}
	}
}

// TestExplainBadRequest: a question that names what does not exist, or holds what cannot be
// held, is an error, named by the host explain flag that gave it.
func TestExplainBadRequest(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.toml")
	tests := []struct {
		name string
		req  warren.ExplainRequest
		want string
	}{
		{"unknown stage", warren.ExplainRequest{Blueprint: researcher, Stage: "nope"}, `--stage "nope": blueprint researcher has stages gather, report`},
		{"an ancestor's unknown stage", warren.ExplainRequest{Under: []string{researcher + ":nope"}, Blueprint: researcher}, `--under "` + researcher + `:nope": blueprint researcher has stages gather, report`},
		{"missing blueprint", warren.ExplainRequest{Blueprint: missing}, "--blueprint " + missing + ":\n"},
		{"missing ancestor", warren.ExplainRequest{Under: []string{missing}, Blueprint: researcher}, "--under " + missing + ":\n"},
		{"grant once", warren.ExplainRequest{Blueprint: researcher, Grants: []string{"write_file=once"}}, `--grant "write_file=once": write KEY=stage or KEY=run`},
		{"grant without scope", warren.ExplainRequest{Blueprint: researcher, Grants: []string{"write_file"}}, `--grant "write_file": write KEY=stage or KEY=run`},
		{"safety mode", warren.ExplainRequest{Blueprint: researcher, SafetyMode: "reckless"}, `--safety-mode "reckless": write default, read-only or auto`},
		{"conflicting launch", warren.ExplainRequest{Blueprint: researcher, Launch: warren.Launch{Allow: []string{"write_file"}, Deny: []string{"write_file"}}},
			`"write_file" is given to both --allow and --deny`},
		{"misspelt launch", warren.ExplainRequest{Blueprint: researcher, Launch: warren.Launch{Allow: []string{"wirte_file"}}}, "--allow: "},
		{"invalid scenario", warren.ExplainRequest{Scenario: missing, Blueprint: "g"}, missing + " is not a valid scenario:\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Tool = "write_file"
			x, err := warren.Explain(context.Background(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
			if x != nil {
				t.Errorf("an explanation with the error: %+v", x)
			}
		})
	}
}

// TestExplainErr: a tool the host does not have and arguments that fail the schema are decided
// (the gate refuses them, as a run would) and reported by Err as bad input.
func TestExplainErr(t *testing.T) {
	x := explain(t, warren.ExplainRequest{Blueprint: researcher, Tool: "no_such_tool"})
	if err := x.Err(); err == nil || !strings.HasPrefix(err.Error(), `no tool "no_such_tool" is registered with this host (known: `) ||
		!strings.Contains(err.Error(), "write_file") {
		t.Errorf("Err: %v", err)
	}
	if verdict(x) != "deny by visibility" {
		t.Errorf("%s, want deny by visibility", verdict(x))
	}
	x = explain(t, warren.ExplainRequest{Blueprint: researcher, Tool: "write_file", Args: `{"path":5}`})
	if err := x.Err(); err == nil || !strings.HasPrefix(err.Error(), "the arguments of write_file are invalid: ") {
		t.Errorf("Err: %v", err)
	}
	if verdict(x) != "deny by schema" {
		t.Errorf("%s, want deny by schema", verdict(x))
	}
}
