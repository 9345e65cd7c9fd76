package sweep

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/warrenhq/warren"
)

// resultsSkip are the columns of a run's metrics/run.csv that the results table has already or
// that are the same for every run: the scenario and clock are the sweep's, and the seed and
// status lead every row.
var resultsSkip = []string{"scenario", "seed", "status", "clock"}

// WriteResults writes the sweep's results table (results.csv): a row per run of the plan, in plan
// order, with its directory, status, seed and parameter values, then the columns of its run
// metrics table (metrics/run.csv) as that table names them. A run that has not finished has its
// status (or "missing") and no metrics. After them come the agents' memory, from each run's
// memory table (metrics/memory.csv): memory.<key>.mean, the mean of the numbers and booleans
// (true as 1) the run's agents hold under key at the end, over every group; the columns are
// sorted by key. The table is made again from the run directories each time, so it always says
// what the directory holds.
func WriteResults(dir string, m Manifest, runs []Run) error {
	type row struct {
		status string
		values map[string]string
	}
	rows := make([]row, len(runs))
	var metricCols, memoryCols []string
	for i, r := range runs {
		runDir := filepath.Join(dir, r.Dir)
		st, _, ok := finishedRun(runDir)
		if st == "" {
			st = "missing"
		}
		rows[i].status = st
		if !ok {
			continue
		}
		header, values, err := readRunMetrics(filepath.Join(runDir, warren.RunMetricsDir, "run.csv"))
		if err != nil {
			return err
		}
		for _, c := range header {
			if !slices.Contains(resultsSkip, c) && !slices.Contains(metricCols, c) {
				metricCols = append(metricCols, c)
			}
		}
		means, err := memoryMeans(filepath.Join(runDir, warren.RunMetricsDir, "memory.csv"))
		if err != nil {
			return err
		}
		for k, v := range means {
			values[k] = v
			if !slices.Contains(memoryCols, k) {
				memoryCols = append(memoryCols, k)
			}
		}
		rows[i].values = values
	}
	slices.Sort(memoryCols)
	metricCols = append(metricCols, memoryCols...)
	f, err := os.Create(filepath.Join(dir, ResultsFile))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	header := []string{"run", "status", "seed"}
	for _, a := range m.Params {
		header = append(header, a.Name)
	}
	if err := w.Write(append(header, metricCols...)); err != nil {
		f.Close()
		return err
	}
	for i, r := range runs {
		rec := []string{r.Dir, rows[i].status, fmt.Sprint(r.Seed)}
		for _, p := range r.Params {
			rec = append(rec, p.Value)
		}
		for _, c := range metricCols {
			rec = append(rec, rows[i].values[c])
		}
		if err := w.Write(rec); err != nil {
			f.Close()
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readRunMetrics reads a run's one-row run table: its header and the row's values by column.
func readRunMetrics(path string) ([]string, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rec, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: line 2: %w", path, err)
	}
	if _, err := r.Read(); !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("%s: the run table has one row", path)
	}
	values := make(map[string]string, len(header))
	for i, c := range header {
		values[c] = rec[i]
	}
	return header, values, nil
}

// memoryMeans reads a run's memory table and gives, per key, the mean of its numeric values over
// every group, as column memory.<key>.mean; no table (a run of no memory) gives none.
func memoryMeans(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no header", path)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	ki, ni, mi := col["key"], col["numbers"], col["mean"]
	if _, ok := col["key"]; !ok || col["numbers"] == 0 || col["mean"] == 0 {
		return nil, fmt.Errorf("%s: the memory table lacks key, numbers or mean", path)
	}
	type acc struct{ sum, n float64 }
	by := map[string]*acc{}
	var keys []string
	for line, rec := range recs[1:] {
		n, err1 := strconv.ParseFloat(rec[ni], 64)
		if err1 != nil || n == 0 {
			continue
		}
		mean, err2 := strconv.ParseFloat(rec[mi], 64)
		if err2 != nil {
			return nil, fmt.Errorf("%s: line %d: mean %q is not a number", path, line+2, rec[mi])
		}
		a := by[rec[ki]]
		if a == nil {
			a = &acc{}
			by[rec[ki]] = a
			keys = append(keys, rec[ki])
		}
		a.sum += mean * n
		a.n += n
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out["memory."+k+".mean"] = strconv.FormatFloat(by[k].sum/by[k].n, 'g', 6, 64)
	}
	return out, nil
}

// ReadManifest reads a sweep directory's manifest.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return m, nil
}
