package warren_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/trace"
)

// example is the path of a shipped example.
func example(name string) string { return filepath.Join("scenarios", "examples", name) }

// TestGroupInputs runs the corpus example with a work root it keeps: every reader's workdir holds
// the corpus as shipped, under the group's at, and every reader holds its own line of the items
// file in its memory and in its task.
func TestGroupInputs(t *testing.T) {
	sc, err := warren.Load(example("corpus.toml"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var tr bytes.Buffer
	sum, err := warren.Run(t.Context(), sc, warren.Options{WorkRoot: root, Trace: &tr})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) > 0 || sum.Agents != 6 {
		t.Fatalf("%d agents, failures %v", sum.Agents, sum.Failures)
	}
	docs, err := os.ReadDir(example("corpus/docs"))
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, example("corpus/assignments.jsonl"))
	for i, rec := range sum.Records {
		for _, d := range docs {
			want, _ := os.ReadFile(filepath.Join(example("corpus/docs"), d.Name()))
			got, err := os.ReadFile(filepath.Join(root, "readers", rec.Name, "docs", d.Name()))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s's copy of %s: %q, %v", rec.Name, d.Name(), got, err)
			}
		}
		if len(rec.Memory) != 1 || rec.Memory[0].Key != "item" || rec.Memory[0].JSON != compactJSON(t, lines[i]) {
			t.Errorf("%s's memory %+v, want item %s", rec.Name, rec.Memory, lines[i])
		}
	}
	if !strings.Contains(tr.String(), `"task":"Answer this question from the corpus: What does an ask wait for?"`) {
		t.Error("the fifth reader's task is not its item's question")
	}
}

// TestCorpusCopyFollowsNoLink: in a kept work root where an earlier run's agent left a link at
// its workdir's corpus place (to a folder outside the root), the copy replaces the link and
// writes nothing outside; a workdir that is itself such a link stops the run before it starts,
// with nothing written through it.
func TestCorpusCopyFollowsNoLink(t *testing.T) {
	sc, err := warren.Load(example("corpus.toml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a link at the corpus's place", func(t *testing.T) {
		root, outside := t.TempDir(), t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "readers", "readers-1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(root, "readers", "readers-1", "docs")); err != nil {
			t.Fatal(err)
		}
		sum, err := warren.Run(t.Context(), sc, warren.Options{WorkRoot: root})
		if err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) > 0 {
			t.Fatalf("the copy wrote %d entries outside the work root, through a link", len(entries))
		}
		info, err := os.Lstat(filepath.Join(root, "readers", "readers-1", "docs"))
		if err != nil || info.Mode()&os.ModeSymlink != 0 || !info.IsDir() {
			t.Errorf("readers-1's docs is %v (%v), want the corpus's folder in place of the link", info, err)
		}
		if len(sum.Failures) > 0 {
			t.Errorf("the readers failed their expectations: %v", sum.Failures)
		}
	})
	t.Run("a workdir that is a link", func(t *testing.T) {
		root, outside := t.TempDir(), t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "readers"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(root, "readers", "readers-0")); err != nil {
			t.Fatal(err)
		}
		_, err := warren.Run(t.Context(), sc, warren.Options{WorkRoot: root})
		if err == nil || !strings.Contains(err.Error(), "escapes") {
			t.Fatalf("error %v, want the copy refused for a path escaping the work root", err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) > 0 {
			t.Fatalf("the copy wrote %d entries outside the work root, through a link", len(entries))
		}
	})
}

// TestItemsBoundTheAgents: a run may not give a group more agents than it has items.
func TestItemsBoundTheAgents(t *testing.T) {
	sc, err := warren.Load(example("corpus.toml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = warren.Run(t.Context(), sc, warren.Options{Agents: 9})
	if !errors.Is(err, warren.ErrItems) || !strings.Contains(err.Error(), `group "readers" has 6 items`) {
		t.Fatalf("error %v, want ErrItems naming the group and its items", err)
	}
}

// TestParams gives the gossip example's [params] and a group's count other values: the voters'
// JavaScript policy reads its peers from params, so each voter reads that many files a round;
// the count changes the run's agents; each value gives the trace another scenario hash.
func TestParams(t *testing.T) {
	hashes := map[string]bool{}
	for _, tc := range []struct {
		name   string
		params []warren.Param
		agents int
		reads  int // files each voter reads per round
	}{
		{"the file's values", nil, 20, 3},
		{"one peer", []warren.Param{{Name: "peers", Value: "1"}}, 20, 1},
		{"four peers", []warren.Param{{Name: "peers", Value: "4"}}, 20, 4},
		{"a group's count by its name", []warren.Param{{Name: "groups.voters.count", Value: "12"}, {Name: "peers", Value: "2"}}, 12, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := warren.LoadParams(example("gossip.toml"), nil, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			opt := warren.Options{}
			if tc.agents == 20 {
				opt.Agents = 20
			}
			var tr bytes.Buffer
			opt.Trace = &tr
			sum, err := warren.Run(t.Context(), sc, opt)
			if err != nil {
				t.Fatal(err)
			}
			// Per voter: three writes, two rounds of reads, two memory_set calls.
			if want := uint64(tc.agents * (3 + 2*tc.reads + 2)); sum.Agents != tc.agents || sum.ToolCalls != want {
				t.Errorf("%d agents made %d tool calls, want %d agents and %d calls", sum.Agents, sum.ToolCalls, tc.agents, want)
			}
			h, _, err := trace.ReadAll(&tr)
			if err != nil {
				t.Fatal(err)
			}
			if hashes[h.ScenarioHash] {
				t.Errorf("the scenario hash %s is that of other values too", h.ScenarioHash)
			}
			hashes[h.ScenarioHash] = true
		})
	}
}

// TestParamsRefused: a parameter that names nothing, names a table, or gives a value of another
// kind is refused with ErrParam, saying what is valid.
func TestParamsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		param warren.Param
		want  string
	}{
		{"no such [params] entry", warren.Param{Name: "neighbours", Value: "2"}, "declares no such parameter in [params] (declared: peers, radius)"},
		{"not an integer", warren.Param{Name: "peers", Value: "three"}, "gossip.toml:29:9 sets it to an integer, and the new value is not an integer"},
		{"no such group", warren.Param{Name: "groups.judges.count", Value: "2"}, `has no group "judges" (groups: voters)`},
		{"a key the file does not set", warren.Param{Name: "limits.max_turns_per_agent", Value: "9"}, "does not set it; write the key there"},
		{"a table", warren.Param{Name: "models.voter", Value: "9"}, "sets it to a table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := warren.LoadParams(example("gossip.toml"), nil, []warren.Param{tc.param})
			if !errors.Is(err, warren.ErrParam) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrParam saying %q", err, tc.want)
			}
		})
	}
}

// readLines reads a file's lines.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// compactJSON is s compacted.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
