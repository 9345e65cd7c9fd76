package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/golden"
	"github.com/warrenhq/warren/trace"
)

// explainData is a file under testdata/explain.
func explainData(name string) string { return filepath.Join("testdata", "explain", name) }

// TestExplain asks host explain about calls of the researcher blueprint under different host
// configs, launch flags, grants and stages. Each case asserts the verdict line (the decision and
// the layer that made it) and compares the whole explanation with a golden file under
// testdata/explain (go test -update rewrites them).
func TestExplain(t *testing.T) {
	bp := explainData("researcher.toml")
	write := `{"path":"a","content":"b"}`
	tests := []struct {
		name string
		args []string
		// want must each appear in stdout.
		want []string
	}{
		{"default", []string{"--blueprint", bp, "write_file", write}, []string{
			"agent    blueprint researcher, stage gather\n",
			"ask (default, key write_file): no layer sets write_file; its built-in default is ask\n",
			"coverage  write_file  not covered  no safe key or grant; it needs a prompt",
		}},
		{"host_deny", []string{"--config", explainData("deny_write.toml"), "--blueprint", bp, "write_file", write}, []string{
			"deny (host, key write_file): host [tool_permissions] sets write_file = deny\n",
		}},
		{"yolo", []string{"--yolo", "--blueprint", bp, "write_file", write}, []string{
			"allow (launch:yolo, key write_file): --yolo turns every ask into allow\n",
		}},
		{"yolo_never_lifts_deny", []string{"--yolo", "--config", explainData("deny_write.toml"), "--blueprint", bp, "write_file", write}, []string{
			"deny (host, key write_file)",
		}},
		{"launch_deny", []string{"--deny", "write_file", "--blueprint", bp, "write_file", write}, []string{
			"deny (launch:deny, key write_file)",
		}},
		{"grant_run", []string{"--grant", "write_file=run", "--blueprint", bp, "write_file", write}, []string{
			"allow (grant:run, key write_file): every asking key is covered: write_file (grant:run)\n",
			"grant:run  write_file  covered  granted for the rest of the run",
		}},
		{"grant_never_lifts_deny", []string{"--stage", "report", "--grant", "edit_file=run", "--blueprint", bp, "edit_file", `{"path":"a","old_string":"x","new_string":"y"}`}, []string{
			"agent    blueprint researcher, stage report\n",
			"deny (blueprint:stage, key edit_file): blueprint stage \"report\" sets edit_file = deny\n",
		}},
		{"unattended", []string{"--unattended", "--blueprint", bp, "write_file", write}, []string{
			"deny (unattended): nobody is watching this run, and no grant or --yolo covers the ask (default: no layer sets write_file; its built-in default is ask)\n",
			"  unattended  write_file  deny  nobody is watching this run\n",
		}},
		{"shell_sudo_rm", []string{"--config", explainData("deny_rm.toml"), "--blueprint", bp, "shell", "sudo rm -rf x"}, []string{
			"command  sudo rm -rf x\n",
			"keys: shell:rm, shell:sudo\n",
			"deny (host, key shell:rm): host [tool_permissions] sets shell:rm = deny\n",
			"shell:sudo -> ask (default:",
		}},
		{"shell_json_args", []string{"--config", explainData("deny_rm.toml"), "--blueprint", bp, "shell", `{"command":"sudo rm -rf x"}`}, []string{
			"command  sudo rm -rf x\n",
			"keys: shell:rm, shell:sudo\n",
			"deny (host, key shell:rm)",
		}},
		{"shell_wrapped_rm", []string{"--config", explainData("deny_rm.toml"), "--blueprint", bp, "shell", `bash -c 'r''m -rf x'`}, []string{
			"shell:rm",
			"deny (host, key shell:rm)",
		}},
		{"shell_unparsed", []string{"--blueprint", bp, "shell", "echo $(("}, []string{
			"command  echo $((\n",
			"keys: none: does not parse: ",
			"ask (default, key shell)",
			"a line that could not be analysed is never covered",
		}},
		{"shell_unparsed_with_a_deny", []string{"--config", explainData("deny_rm.toml"), "--blueprint", bp, "shell", "echo $(("}, []string{
			"keys: none: does not parse: ",
			"deny (unparsed, key shell): the line could not be analysed, so it cannot be shown to avoid denied programs (host [tool_permissions] sets shell:rm = deny)\n",
		}},
		{"shell_safe_line", []string{"--blueprint", bp, "shell", "ls -la && cat notes.md"}, []string{
			"keys: shell:cat, shell:ls\n",
			"allow (safe, key shell:cat): every asking key is covered: shell:cat (safe), shell:ls (safe)\n",
		}},
		{"shell_safe_line_with_redirect", []string{"--blueprint", bp, "shell", "ls > listing.txt"}, []string{
			"keys: shell:>listing.txt, shell:ls\n",
			"ask (",
		}},
		{"may_loosen_ignored", []string{"--blueprint", bp, "shell", "make test"}, []string{
			"ask (default, key shell:make test): blueprint [tool_permissions] sets shell:make = allow, but may not loosen the built-in default ask without [security] allow_blueprint_permissions\n",
		}},
		{"may_loosen_opt_in", []string{"--config", explainData("opt_in.toml"), "--blueprint", bp, "shell", "make test"}, []string{
			"allow (blueprint:agent, key shell:make test)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := host(t, append([]string{"explain"}, tt.args...)...)
			wantCode(t, r, exitOK)
			for _, want := range tt.want {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout does not contain %q:\n%s", want, r.stdout)
				}
			}
			if r.stderr != "" {
				t.Errorf("stderr: %q", r.stderr)
			}
			golden.Check(t, explainData(tt.name+".golden"), r.stdout)
		})
	}
}

// TestExplainBadInput: usage errors exit 2 with a message on stderr saying what is wrong, and
// explain nothing.
func TestExplainBadInput(t *testing.T) {
	bp := explainData("researcher.toml")
	tests := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"conflicting launch flags", []string{"--blueprint", bp, "--deny", "write_file", "--allow", "write_file", "write_file"},
			[]string{`conflicting launch flags: "write_file" is given to both --allow and --deny`}},
		{"unknown stage", []string{"--blueprint", bp, "--stage", "nope", "write_file"},
			[]string{`--stage "nope": blueprint researcher has stages gather, report`}},
		{"missing blueprint flag", []string{"write_file"}, []string{"missing flags: --blueprint"}},
		{"blueprint file missing", []string{"--blueprint", explainData("absent.toml"), "write_file"},
			[]string{"--blueprint " + explainData("absent.toml")}},
		{"grant once", []string{"--blueprint", bp, "--grant", "write_file=once", "write_file"},
			[]string{`--grant "write_file=once": write KEY=stage or KEY=run`}},
		{"grant without scope", []string{"--blueprint", bp, "--grant", "write_file", "write_file"},
			[]string{`--grant "write_file": write KEY=stage or KEY=run`}},
		{"bad host config", []string{"--config", explainData("bad_verdict.toml"), "--blueprint", bp, "write_file"},
			[]string{"--config " + explainData("bad_verdict.toml"), `invalid permission verdict "alow"`}},
		{"no tool", []string{"--blueprint", bp}, []string{"<tool>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := host(t, append([]string{"explain"}, tt.args...)...)
			wantCode(t, r, exitBadInput)
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not contain %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stdout, "agent    blueprint") {
				t.Errorf("an explanation was printed for bad input:\n%s", r.stdout)
			}
		})
	}
}

// runData is a file under testdata/run.
func runData(name string) string { return filepath.Join("testdata", "run", name) }

// gateDecisions returns "<tool> <verdict> by <layer>" for every tool_call of the trace at path.
func gateDecisions(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, events, err := trace.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range events {
		var e struct{ Kind, Tool, Verdict, Layer string }
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		if e.Kind == trace.KindToolCall {
			out = append(out, e.Tool+" "+e.Verdict+" by "+e.Layer)
		}
	}
	return out
}

// TestRunPermissionFlags runs a one-write scenario through host run with the permission flags:
// launch overrides decide the write's ask, --unattended denies it, --config replaces the
// scenario's [host], and contradicting flags are a usage error.
func TestRunPermissionFlags(t *testing.T) {
	unanswered := "agent writers-0 asked about write_file (keys write_file) at tick 0 and nothing answers it (add an [[interactions]] entry, or give it to people: host run --interactive, host serve); it was refused"
	tests := []struct {
		name     string
		file     string
		args     []string
		code     int
		decision string
		// written says whether the write reached the disk.
		written bool
		stdout  string
	}{
		{"unanswered prompt", "prompt.toml", nil, exitExpect, "write_file ask by default", false, "expectations 1 failed:\n  " + unanswered + "\n"},
		{"yolo", "prompt.toml", []string{"--yolo"}, exitOK, "write_file allow by launch:yolo", true, "expectations all 1 held\n"},
		{"allow", "prompt.toml", []string{"--allow", "write_file"}, exitOK, "write_file allow by launch:allow", true, "expectations all 1 held\n"},
		{"deny", "prompt.toml", []string{"--deny", "write_file"}, exitOK, "write_file deny by launch:deny", false, "expectations all 1 held\n"},
		{"unattended", "prompt.toml", []string{"--unattended"}, exitOK, "write_file deny by unattended", false, "expectations all 1 held\n"},
		{"scenario host", "ceiling.toml", nil, exitOK, "write_file deny by host", false, "expectations all 1 held\n"},
		{"config replaces the scenario host", "ceiling.toml", []string{"--config", runData("allow_write.toml")}, exitOK, "write_file allow by host", true, "expectations all 1 held\n"},
		{"yolo does not lift the scenario host's deny", "ceiling.toml", []string{"--yolo"}, exitOK, "write_file deny by host", false, "expectations all 1 held\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out, work := filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "work")
			r := host(t, append([]string{"run", runData(tt.file), "--trace", out, "--workdir", work}, tt.args...)...)
			wantCode(t, r, tt.code)
			if !strings.HasSuffix(r.stdout, tt.stdout) {
				t.Errorf("stdout:\n%s\nwant it to end with:\n%s", r.stdout, tt.stdout)
			}
			if got := gateDecisions(t, out); len(got) != 1 || got[0] != tt.decision {
				t.Errorf("gate decisions %q, want [%q]", got, tt.decision)
			}
			data, err := os.ReadFile(filepath.Join(work, "writers", "writers-0", "a.txt"))
			switch {
			case tt.written && (err != nil || string(data) != "hello"):
				t.Errorf("a.txt = %q, %v; want the write on disk", data, err)
			case !tt.written && err == nil:
				t.Errorf("a.txt was written (%q); the write should have been refused", data)
			}
		})
	}
}

// TestRunPermissionBadInput: contradicting launch flags, alone or against the scenario's
// [launch], and a host config that does not validate are usage errors (exit 2) reported before
// anything runs.
func TestRunPermissionBadInput(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"allow and deny", []string{"--allow", "write_file", "--deny", "write_file"},
			[]string{`host: conflicting launch flags: "write_file" is given to both --allow and --deny`}},
		{"ask and deny", []string{"--ask", "write_file", "--deny", "write_file"},
			[]string{`"write_file" is given to both --ask and --deny`}},
		// --deny "$TOOL" with TOOL unset: policy.Launch.Validate refuses an empty name, so the
		// flag cannot silently deny nothing.
		{"empty flag name", []string{"--deny", ""}, []string{"--deny needs a tool or key name"}},
		{"bad config", []string{"--config", explainData("bad_verdict.toml")},
			[]string{"--config " + explainData("bad_verdict.toml") + " is not a valid host config", `invalid permission verdict "alow"`}},
		{"missing config", []string{"--config", runData("absent.toml")}, []string{"--config " + runData("absent.toml")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "trace.jsonl")
			r := host(t, append([]string{"run", runData("prompt.toml"), "--trace", out}, tt.args...)...)
			wantCode(t, r, exitBadInput)
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not contain %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stdout, "scenario     ") {
				t.Errorf("a summary was printed for bad input:\n%s", r.stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a trace was written for bad input")
			}
		})
	}
}

// TestValidatePermissionScenarios: host validate accepts every permission scenario of the
// scenarios package and rejects every file of its bad corpus, naming each file.
func TestValidatePermissionScenarios(t *testing.T) {
	dir := filepath.Join("..", "..", "scenarios", "testdata", "permissions")
	good, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil || len(good) == 0 {
		t.Fatalf("no permission scenarios: %v", err)
	}
	r := host(t, append([]string{"validate"}, good...)...)
	wantCode(t, r, exitOK)
	if n := strings.Count(r.stdout, ": ok (scenario "); n != len(good) {
		t.Errorf("%d ok lines for %d files:\n%s\n%s", n, len(good), r.stdout, r.stderr)
	}
	bad, err := filepath.Glob(filepath.Join(dir, "bad", "*.toml"))
	if err != nil || len(bad) == 0 {
		t.Fatalf("no bad permission scenarios: %v", err)
	}
	r = host(t, append([]string{"validate"}, bad...)...)
	wantCode(t, r, exitBadInput)
	for _, file := range bad {
		if !strings.Contains(r.stderr, file+": invalid:\n") {
			t.Errorf("stderr does not report %s as invalid:\n%s", file, r.stderr)
		}
	}
}

// TestExplainScriptTools: explain knows the script tools a blueprint may list, from its own
// tools/ folder and from the --config host's tools_dir.
func TestExplainScriptTools(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"the blueprint's tools/ folder", []string{"--blueprint", example(filepath.Join("scripted", "analyst.toml")), "roll_dice", `{"n":2}`},
			"ask (default, key roll_dice): no layer names this tool; tools without a built-in default ask\n"},
		{"the host's tools_dir", []string{"--blueprint", runData(filepath.Join("hosttools", "shouter.toml")),
			"--config", runData(filepath.Join("hosttools", "host", "host.toml")), "shout", `{"text":"x"}`},
			"allow (host, key shout): host [tool_permissions] sets shout = allow\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := host(t, append([]string{"explain"}, tt.args...)...)
			wantCode(t, r, exitOK)
			if !strings.Contains(r.stdout, tt.want) {
				t.Errorf("stdout:\n%s\nwant it to contain %q", r.stdout, tt.want)
			}
		})
	}
	r := host(t, "explain", "--blueprint", runData(filepath.Join("hosttools", "shouter.toml")), "shout", `{"text":"x"}`)
	wantCode(t, r, exitBadInput)
	if !strings.Contains(r.stderr, `unknown tool "shout"`) {
		t.Errorf("without the host's tools_dir:\n%s", r.stderr)
	}
}

// TestExplainLineage explains calls of an agent under its ancestors (--under) and in the modes a
// run gives it, with blueprint files and with a scenario's groups and [spawn] keys.
func TestExplainLineage(t *testing.T) {
	agree := filepath.Join("testdata", "agree")
	boss, helper := filepath.Join(agree, "boss.toml"), filepath.Join(agree, "helper.toml")
	scenario := filepath.Join(agree, "agree.toml")
	allowAll := explainData("opt_in.toml")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"a child under its parent's planning stage", []string{"--config", allowAll, "--under", boss + ":plan", "--blueprint", helper, "shell", "touch x"}, []string{
			"agent    blueprint boss (stage plan) > blueprint helper, stage work\n",
			"deny (parent, key shell:touch): agent of group boss (stage \"plan\" when it spawned this agent's line) holds deny for shell:touch (layer blueprint:stage)",
			"parent           shell:touch  deny",
		}},
		{"the same child spawned once the parent acts", []string{"--config", allowAll, "--under", boss + ":act", "--blueprint", helper, "shell", "touch x"}, []string{
			"ask (parent, key shell:touch): agent of group boss (stage \"act\" when it spawned this agent's line) holds ask",
		}},
		{"a child of a read-only top-level agent", []string{"--safety-mode", "read-only", "--under", boss, "--blueprint", helper, "write_file", `{"path":"a","content":"b"}`}, []string{
			"deny (safety:read-only): read-only mode: write_file writes a\n",
		}},
		{"plan mode", []string{"--plan-file", "PLAN.md", "--blueprint", helper, "write_file", `{"path":"PLAN.md","content":"b"}`}, []string{
			"safety:read-only  write_file  pass  it writes the plan file\n",
		}},
		{"a scenario's classifier", []string{"--scenario", scenario, "--blueprint", "autos", "write_file", `{"path":"a","content":"b"}`}, []string{
			"allow (classifier): auto mode: the classifier allows it: notes are fine\n",
		}},
		{"a scenario's spawn key under a group", []string{"--scenario", scenario, "--under", "bosses:plan", "--blueprint", "helper", "shell", "touch x"}, []string{
			"agent    blueprint boss (stage plan) > blueprint helper, stage work\n",
			"deny (parent, key shell:touch): agent of group bosses",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := host(t, append([]string{"explain"}, tt.args...)...)
			wantCode(t, r, exitOK)
			for _, want := range tt.want {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout does not contain %q:\n%s", want, r.stdout)
				}
			}
		})
	}
}

// TestExplainRefusesBadCalls: an unknown tool and bad arguments exit 2 after the gate's refusal,
// as a run refuses them; a bad line of ancestors exits 2 before any explanation.
func TestExplainRefusesBadCalls(t *testing.T) {
	bp := explainData("researcher.toml")
	scenario := filepath.Join("testdata", "agree", "agree.toml")
	tests := []struct {
		name           string
		args           []string
		stdout, stderr string // substrings; stdout "" means nothing is explained
	}{
		{"unknown tool", []string{"--blueprint", bp, "no_such_tool", "{}"},
			"deny (visibility): tool \"no_such_tool\" is not available in stage \"gather\"", "no tool \"no_such_tool\" is registered with this host (known: "},
		{"arguments that are not JSON", []string{"--blueprint", bp, "write_file", "{path"},
			"deny (schema): ", "the arguments of write_file are invalid"},
		{"arguments that fail the schema", []string{"--blueprint", bp, "write_file", `{"path":5}`},
			"deny (schema): invalid arguments for tool \"write_file\"", "the arguments of write_file are invalid"},
		{"an ancestor's unknown stage", []string{"--under", bp + ":nope", "--blueprint", bp, "read_file", `{"path":"a"}`},
			"", `--under "` + bp + `:nope": blueprint researcher has stages gather, report`},
		{"an ancestor file that is missing", []string{"--under", explainData("absent.toml"), "--blueprint", bp, "read_file", `{"path":"a"}`},
			"", "--under " + explainData("absent.toml")},
		{"a scenario group that does not exist", []string{"--scenario", scenario, "--blueprint", "nobody", "read_file", `{"path":"a"}`},
			"", `unknown blueprint "nobody": the top-level agent is one of the scenario's groups: workers, planners, autos, bosses`},
		{"a spawn key that does not exist", []string{"--scenario", scenario, "--under", "bosses", "--blueprint", "nobody", "read_file", `{"path":"a"}`},
			"", `unknown blueprint "nobody": a sub-agent is one of the scenario's [spawn] keys: helper`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := host(t, append([]string{"explain"}, tt.args...)...)
			wantCode(t, r, exitBadInput)
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr does not contain %q:\n%s", tt.stderr, r.stderr)
			}
			if tt.stdout == "" && r.stdout != "" || !strings.Contains(r.stdout, tt.stdout) {
				t.Errorf("stdout %q, want it to contain %q", r.stdout, tt.stdout)
			}
		})
	}
}
