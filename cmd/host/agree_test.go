package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren/trace"
)

// agreeEvent is what the agreement test reads of a trace event.
type agreeEvent struct {
	Seq        uint64          `json:"seq"`
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	Verdict    string          `json:"verdict"`
	Layer      string          `json:"layer"`
	Stage      string          `json:"stage"`
	Group      string          `json:"group"`
	ParentName string          `json:"parent_name"`
	Answer     string          `json:"answer"`
}

// verdictLine matches the first line of an explanation: the verdict and the deciding layer.
var verdictLine = regexp.MustCompile(`(?m)^(allow|ask|deny) \(([^,)]+)`)

// TestExplainAgreesWithRun runs a scenario whose agents call tools through every layer of the
// gate (visibility, schema, the read-only floor of plan mode, the permission layers with opaque
// keys and unanalysable lines, auto mode's classifier, sub-agents under ancestors that denied or
// asked in the stage they spawned from), attended and unattended, then asks host explain about
// every call the run decided, naming the agent's line with --under and its stage, and requires
// the same verdict and layer.
func TestExplainAgreesWithRun(t *testing.T) {
	file := filepath.Join("testdata", "agree", "agree.toml")
	for _, unattended := range []bool{false, true} {
		t.Run("unattended="+strconv.FormatBool(unattended), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "trace.jsonl")
			args := []string{"run", file, "--trace", out, "--no-progress"}
			if unattended {
				args = append(args, "--unattended")
			}
			wantCode(t, host(t, args...), exitOK)
			events := readAgreeTrace(t, out)
			layers := map[string]bool{}
			calls := 0
			for i, ev := range events {
				if ev.Kind == trace.KindAnswer && ev.Answer != "once" && ev.Answer != "deny" {
					t.Fatalf("answer %q: a grant would cover later calls, which explain is not told about", ev.Answer)
				}
				if ev.Kind != trace.KindToolCall {
					continue
				}
				calls++
				line := lineOf(t, events[:i], ev.Name)
				explain := []string{"explain", "--scenario", file, "--agent", ev.Name, "--stage", stageAt(events[:i], ev.Name)}
				for _, a := range line[:len(line)-1] {
					explain = append(explain, "--under", a)
				}
				explain = append(explain, "--blueprint", line[len(line)-1])
				if unattended {
					explain = append(explain, "--unattended")
				}
				explain = append(explain, ev.Tool, string(ev.Args))
				r := host(t, explain...)
				m := verdictLine.FindStringSubmatch(r.stdout)
				if m == nil {
					t.Errorf("%s %s %s: explain printed no verdict (exit %d):\n%s%s", ev.Name, ev.Tool, ev.Args, r.code, r.stdout, r.stderr)
					continue
				}
				if m[1] != ev.Verdict || m[2] != ev.Layer {
					t.Errorf("%s %s %s: the run decided %s by %s, explain %s by %s\n  host %s\n%s", ev.Name, ev.Tool, ev.Args,
						ev.Verdict, ev.Layer, m[1], m[2], strings.Join(explain, " "), r.stdout)
				}
				layers[ev.Layer] = true
			}
			want := []string{"visibility", "schema", "safety:read-only", "host", "default", "opaque", "unparsed", "classifier", "parent"}
			if unattended {
				want = append(want, "unattended")
			} else {
				want = append(want, "write_file")
			}
			for _, l := range want {
				if !layers[l] {
					t.Errorf("no call was decided by %s; the scenario must exercise it (layers seen: %v)", l, slices.Sorted(maps.Keys(layers)))
				}
			}
			if calls < 30 {
				t.Errorf("only %d calls were compared", calls)
			}
		})
	}
}

func readAgreeTrace(t *testing.T, path string) []agreeEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, lines, err := trace.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	events := make([]agreeEvent, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &events[i]); err != nil {
			t.Fatal(err)
		}
	}
	return events
}

// lineOf is the agent's line for host explain, top first: the top-level agent's group with the
// stage it spawned the next one from, each sub-agent's [spawn] key and stage, then the agent's
// own group or key.
func lineOf(t *testing.T, before []agreeEvent, name string) []string {
	t.Helper()
	var spawn *agreeEvent
	for i := range before {
		if before[i].Kind == trace.KindSpawn && before[i].Name == name {
			spawn = &before[i]
		}
	}
	if spawn == nil {
		t.Fatalf("no spawn event for %s", name)
	}
	if spawn.ParentName == "" {
		return []string{spawn.Group}
	}
	parent := lineOf(t, before, spawn.ParentName)
	var spawnedAt []agreeEvent
	for _, ev := range before {
		if ev.Seq < spawn.Seq {
			spawnedAt = append(spawnedAt, ev)
		}
	}
	parent[len(parent)-1] += ":" + stageAt(spawnedAt, spawn.ParentName)
	return append(parent, spawn.Group)
}

// stageAt is the stage the agent last entered among events.
func stageAt(events []agreeEvent, name string) string {
	stage := ""
	for _, ev := range events {
		if ev.Kind == trace.KindStageEnter && ev.Name == name {
			stage = ev.Stage
		}
	}
	return stage
}
