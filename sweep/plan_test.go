package sweep_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/sweep"
)

func TestParseAxis(t *testing.T) {
	tests := []struct {
		name, flag string
		want       sweep.Axis
		err        string // a part of the error; "" for none
	}{
		{"a [params] name", "peers=1,2,3", sweep.Axis{Name: "peers", Values: []string{"1", "2", "3"}}, ""},
		{"one value", "peers=4", sweep.Axis{Name: "peers", Values: []string{"4"}}, ""},
		{"a key path", "groups.voters.count=10,20", sweep.Axis{Name: "groups.voters.count", Values: []string{"10", "20"}}, ""},
		{"spaces around the name", "  radius =2,5", sweep.Axis{Name: "radius", Values: []string{"2", "5"}}, ""},
		{"a value holding '='", "label=a=b,c", sweep.Axis{Name: "label", Values: []string{"a=b", "c"}}, ""},
		{"no '='", "peers", sweep.Axis{}, `--param "peers": write name=value1,value2`},
		{"no values", "peers=", sweep.Axis{}, `--param "peers=": write name=value1,value2`},
		{"no name", "=1,2", sweep.Axis{}, `--param "=1,2": write name=value1,value2`},
		{"a blank name", "  =1,2", sweep.Axis{}, "write name=value1,value2"},
		{"an empty flag", "", sweep.Axis{}, "write name=value1,value2"},
		{"a value given twice", "peers=1,2,1", sweep.Axis{}, `--param peers: the value "1" is given twice`},
		{"an empty value", "peers=1,,2", sweep.Axis{}, "an empty value (two commas, or one at an end)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sweep.ParseAxis(tt.flag)
			if tt.err != "" {
				if !errors.Is(err, sweep.ErrSpec) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseAxis(%q) = %v, %v; want an ErrSpec saying %q", tt.flag, got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAxis(%q): %v", tt.flag, err)
			}
			if got.Name != tt.want.Name || !slices.Equal(got.Values, tt.want.Values) {
				t.Errorf("ParseAxis(%q) = %+v, want %+v", tt.flag, got, tt.want)
			}
		})
	}
}

func TestParseSeeds(t *testing.T) {
	tests := []struct {
		name, spec string
		want       []uint64
		wantLen    int    // when want is nil and err empty: the number of seeds
		err        string // a part of the error; "" for none
	}{
		{"a range", "1..3", []uint64{1, 2, 3}, 0, ""},
		{"a list", "1,2,5", []uint64{1, 2, 5}, 0, ""},
		{"a range and a seed", "1..3,7", []uint64{1, 2, 3, 7}, 0, ""},
		{"a seed and a range, in the order given", "9,1..2", []uint64{9, 1, 2}, 0, ""},
		{"one seed", "7", []uint64{7}, 0, ""},
		{"seed 0", "0", []uint64{0}, 0, ""},
		{"a range of one", "5..5", []uint64{5}, 0, ""},
		{"spaces around the parts", " 1, 2 ", []uint64{1, 2}, 0, ""},
		{"a range up to the largest seed", "18446744073709551614..18446744073709551615", []uint64{18446744073709551614, 18446744073709551615}, 0, ""},
		{"a range of MaxRuns seeds", fmt.Sprintf("1..%d", sweep.MaxRuns), nil, sweep.MaxRuns, ""},
		{"a range that goes down", "3..1", nil, 0, `--seeds "3..1": the range 3..1 goes down`},
		{"not a number", "a", nil, 0, `"a" is not a seed`},
		{"a range to no number", "1..a", nil, 0, `"1..a" is not a seed`},
		{"a range from nothing", "..3", nil, 0, `"..3" is not a seed`},
		{"a negative seed", "-1", nil, 0, `"-1" is not a seed`},
		{"past the largest seed", "18446744073709551616", nil, 0, "is not a seed"},
		{"empty", "", nil, 0, `"" is not a seed`},
		{"an empty part", "1,,2", nil, 0, `"" is not a seed`},
		{"a seed given twice", "1,2,1", nil, 0, "seed 1 is given twice"},
		{"a seed in a range given again", "1..3,2", nil, 0, "seed 2 is given twice"},
		{"two ranges that overlap", "1..5,4..8", nil, 0, "seed 4 is given twice"},
		{"a range over MaxRuns", fmt.Sprintf("1..%d", sweep.MaxRuns+1), nil, 0, fmt.Sprintf("is more than %d seeds", sweep.MaxRuns)},
		{"the whole seed space", "0..18446744073709551615", nil, 0, fmt.Sprintf("is more than %d seeds", sweep.MaxRuns)},
		// Each range is under the bound, together they are over it: a few more such ranges must
		// not make ParseSeeds plan (or spend minutes checking) millions of seeds.
		{"ranges together over MaxRuns", fmt.Sprintf("1..%d,%d..%d", sweep.MaxRuns/2+1, sweep.MaxRuns+1, sweep.MaxRuns*3/2), nil, 0, fmt.Sprintf("more than %d seeds", sweep.MaxRuns)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sweep.ParseSeeds(tt.spec)
			if tt.err != "" {
				if !errors.Is(err, sweep.ErrSpec) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseSeeds(%q) = %d seeds, %v; want an ErrSpec saying %q", tt.spec, len(got), err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSeeds(%q): %v", tt.spec, err)
			}
			if tt.want == nil {
				if len(got) != tt.wantLen || got[0] != 1 || got[len(got)-1] != uint64(tt.wantLen) {
					t.Errorf("ParseSeeds(%q) = %d seeds (%d..%d), want 1..%d", tt.spec, len(got), got[0], got[len(got)-1], tt.wantLen)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ParseSeeds(%q) = %v, want %v", tt.spec, got, tt.want)
			}
		})
	}
}

// axis is an Axis of name over values.
func axis(name string, values ...string) sweep.Axis { return sweep.Axis{Name: name, Values: values} }

// valuesOf lists n distinct values, "v0" to "v<n-1>".
func valuesOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("v", i)
	}
	return out
}

// runLine writes a planned run as "cell dir seed name=value ...", for comparing plans.
func runLine(r sweep.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %d", r.Cell, r.Dir, r.Seed)
	for _, p := range r.Params {
		fmt.Fprintf(&b, " %s=%s", p.Name, p.Value)
	}
	return b.String()
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name  string
		axes  []sweep.Axis
		seeds []uint64
		want  []string // runLine of every run, in order
		err   string   // a part of the error; "" for none
	}{
		{"one axis, every seed per point", []sweep.Axis{axis("peers", "1", "2")}, []uint64{5, 6}, []string{
			"0 runs/000_peers-1/seed-5 5 peers=1",
			"0 runs/000_peers-1/seed-6 6 peers=1",
			"1 runs/001_peers-2/seed-5 5 peers=2",
			"1 runs/001_peers-2/seed-6 6 peers=2",
		}, ""},
		{"the first axis varies slowest", []sweep.Axis{axis("peers", "1", "3"), axis("radius", "2", "4", "8")}, []uint64{1}, []string{
			"0 runs/000_peers-1_radius-2/seed-1 1 peers=1 radius=2",
			"1 runs/001_peers-1_radius-4/seed-1 1 peers=1 radius=4",
			"2 runs/002_peers-1_radius-8/seed-1 1 peers=1 radius=8",
			"3 runs/003_peers-3_radius-2/seed-1 1 peers=3 radius=2",
			"4 runs/004_peers-3_radius-4/seed-1 1 peers=3 radius=4",
			"5 runs/005_peers-3_radius-8/seed-1 1 peers=3 radius=8",
		}, ""},
		{"no axes: one point", nil, []uint64{3, 1}, []string{
			"0 runs/000/seed-3 3",
			"0 runs/000/seed-1 1",
		}, ""},
		{"a key path is named by its last key", []sweep.Axis{axis("limits.max_ticks", "10"), axis("groups.voters.count", "50")}, []uint64{2}, []string{
			"0 runs/000_max_ticks-10_count-50/seed-2 2 limits.max_ticks=10 groups.voters.count=50",
		}, ""},
		{"an indexed key path", []sweep.Axis{axis("groups[0].count", "5")}, []uint64{1}, []string{
			"0 runs/000_count-5/seed-1 1 groups[0].count=5",
		}, ""},
		{"values that are no file names", []sweep.Axis{axis("task", "a/b", "a b", "../x", "a_b")}, []uint64{1}, []string{
			"0 runs/000_task-a_b/seed-1 1 task=a/b",
			"1 runs/001_task-a_b/seed-1 1 task=a b",
			"2 runs/002_task-.._x/seed-1 1 task=../x",
			"3 runs/003_task-a_b/seed-1 1 task=a_b",
		}, ""},
		{"the largest seed", nil, []uint64{18446744073709551615}, []string{
			"0 runs/000/seed-18446744073709551615 18446744073709551615",
		}, ""},
		{"no seeds", []sweep.Axis{axis("peers", "1")}, nil, nil, "no seeds"},
		{"an axis given twice", []sweep.Axis{axis("peers", "1"), axis("radius", "2"), axis("peers", "3")}, []uint64{1}, nil, "--param peers is given twice"},
		{"an axis with no values", []sweep.Axis{axis("peers")}, []uint64{1}, nil, "--param peers has no values"},
		{"too many runs", []sweep.Axis{axis("peers", valuesOf(1000)...)}, valuesOfSeeds(sweep.MaxRuns/1000 + 1), nil, fmt.Sprintf("more than %d runs", sweep.MaxRuns)},
		{"too many points", []sweep.Axis{axis("a", valuesOf(400)...), axis("b", valuesOf(400)...), axis("c", valuesOf(400)...)}, []uint64{1}, nil, fmt.Sprintf("more than %d runs", sweep.MaxRuns)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := sweep.Plan(tt.axes, tt.seeds)
			if tt.err != "" {
				if !errors.Is(err, sweep.ErrSpec) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Plan = %d runs, %v; want an ErrSpec saying %q", len(runs), err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runs {
				got = append(got, runLine(r))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Plan:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// valuesOfSeeds lists the seeds 1..n.
func valuesOfSeeds(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// TestPlanDirs: over grids whose values spell alike once made file names, or whose names run
// past the length a directory name is cut to, every run still has a directory of its own, under
// runs/ and inside the sweep directory.
func TestPlanDirs(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name string
		axes []sweep.Axis
	}{
		{"values that slug alike", []sweep.Axis{axis("v", "a/b", "a_b", "a b", "a?b", "a\\b")}},
		{"names cut to length", []sweep.Axis{axis("p"+long, long+"1", long+"2"), axis("q", "1", "2")}},
		{"two axes of one last key", []sweep.Axis{axis("groups.a.count", "1", "2"), axis("groups.b.count", "1", "2")}},
		{"more than 999 points", []sweep.Axis{axis("a", valuesOf(40)...), axis("b", valuesOf(30)...)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := sweep.Plan(tt.axes, []uint64{1, 2})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]sweep.Run{}
			for _, r := range runs {
				if prev, ok := seen[r.Dir]; ok {
					t.Fatalf("%s and %s share the directory %s", runLine(prev), runLine(r), r.Dir)
				}
				seen[r.Dir] = r
				parts := strings.Split(r.Dir, "/")
				if len(parts) != 3 || parts[0] != "runs" || parts[2] != fmt.Sprint("seed-", r.Seed) || !filepath.IsLocal(r.Dir) {
					t.Errorf("run %s: the directory %q is not runs/<point>/seed-<seed>", runLine(r), r.Dir)
				}
				if !strings.HasPrefix(parts[1], fmt.Sprintf("%03d", r.Cell)) || len(parts[1]) > 80 {
					t.Errorf("run %s: the point's directory %q does not start with its cell number or is longer than 80", runLine(r), parts[1])
				}
			}
		})
	}
}
