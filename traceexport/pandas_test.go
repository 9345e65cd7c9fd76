package traceexport

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/warrenhq/warren/table"
)

// python is the interpreter the pandas test runs: the system's, where Debian's python3-pandas
// installs pandas.
const python = "/usr/bin/python3"

// pandasRun is one loader of docs/analysis.md run on one trace, then the three questions.
type pandasRun struct {
	Name      string           `json:"name"`
	Setup     string           `json:"setup"`
	Questions []pandasQuestion `json:"questions"`
}

// pandasQuestion is one question's code, which leaves its answer in the variable Name.
type pandasQuestion struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// pythonImports reports whether the interpreter imports the modules, and what it said if not.
func pythonImports(modules string) (bool, string) {
	out, err := exec.Command(python, "-c", "import "+modules).CombinedOutput()
	return err == nil, string(out)
}

// TestPandas runs the pandas blocks of docs/analysis.md: each loader (the CSV export, the raw
// trace, and the Parquet export where pyarrow is installed) on each shipped trace, then the three
// questions, checked against the Go answers.
func TestPandas(t *testing.T) {
	if ok, out := pythonImports("pandas"); !ok {
		skipOrFail(t, requirePandas, python+" cannot import pandas (apt-get install python3-pandas): "+out)
	}
	blocks := docBlocks(t, "pandas:load parquet", "pandas:load csv", "pandas:load jsonl", "pandas q1", "pandas q2", "pandas q3")
	loaders := []string{"csv", "jsonl"}
	if ok, out := pythonImports("pyarrow"); ok {
		loaders = append(loaders, "parquet")
	} else {
		// Debian has no python3-pyarrow; pandas reads Parquet only through it (or fastparquet).
		t.Logf("the Parquet loader is not run: %s cannot import pyarrow: %s", python, out)
	}
	traces := exportGolden(t)
	var runs []pandasRun
	for _, e := range traces {
		for _, l := range loaders {
			dir := e.dirs[table.CSV]
			if l == "parquet" {
				dir = e.dirs[table.Parquet]
			}
			r := pandasRun{Name: e.name + "/" + l, Setup: pythonFor(blocks["pandas:load "+l], e.trace, dir)}
			for _, q := range questions {
				r.Questions = append(r.Questions, pandasQuestion{Name: q, Code: blocks["pandas "+q]})
			}
			runs = append(runs, r)
		}
	}
	job, err := json.Marshal(map[string][]pandasRun{"runs": runs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/pandas/run.py")
	cmd.Stdin = bytes.NewReader(job)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s testdata/pandas/run.py: %v\n%s", python, err, stderr.String())
	}
	var got map[string]answer
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("run.py wrote %q: %v", out, err)
	}
	for _, e := range traces {
		t.Run(e.name, func(t *testing.T) {
			for _, q := range questions {
				want := goAnswer(q, e.events)
				for _, l := range loaders {
					if d := compareAnswers(want, got[e.name+"/"+l+"/"+q]); d != "" {
						t.Errorf("%s loaded from %s: %s", q, l, d)
					}
				}
			}
		})
	}
}
