package scenarios

import (
	"path/filepath"
	"strconv"
)

// Input is one file a scenario's load read: what a run's outputs must never overwrite.
type Input struct {
	// Path is the file as the load opened it: relative to the working directory when the
	// scenario's path was, absolute for blueprints (the blueprint cache names them so).
	Path string
	// What names it for a message: "the scenario", `blueprint "worker"`, `script tool "shout"`,
	// `the policy of model "voter"`, "the host config".
	What string
}

// inputFiler is a model compiled from files of its own (a js model's policy), which it lists.
type inputFiler interface{ InputFiles() []string }

// Inputs lists the files the scenario's load read, each once, in a fixed order: the scenario
// file, its blueprints (by key), its script tools (by name, those of a host config's tools_dir
// included), the files of its models (a js model's policy; for the models its groups and
// [spawn] entries run), and the host config file it was compiled under when it came from a file
// of its own (host run --config). They are the run's inputs, whose hash the trace header
// carries: host run refuses an output path (--trace) that names one of them, which would
// overwrite the scenario it runs.
func (sc *Scenario) Inputs() []Input {
	var out []Input
	seen := map[string]bool{}
	add := func(path, what string) {
		key, err := filepath.Abs(path)
		if err != nil {
			key = filepath.Clean(path)
		}
		if path == "" || seen[key] {
			return
		}
		seen[key] = true
		out = append(out, Input{Path: path, What: what})
	}
	add(sc.Path, "the scenario")
	for _, key := range sortedKeys(sc.Blueprints) {
		add(sc.Blueprints[key].Path, "blueprint "+strconv.Quote(key))
	}
	for _, s := range sc.Scripts {
		add(s.File, "script tool "+strconv.Quote(s.Name))
	}
	models := func(key string, m any) {
		if f, ok := m.(inputFiler); ok {
			for _, path := range f.InputFiles() {
				add(path, "the policy of model "+strconv.Quote(key))
			}
		}
	}
	for i := range sc.Groups {
		if in := sc.Groups[i].Inputs; in != nil {
			for _, f := range in.Files {
				add(filepath.Join(in.CorpusDir, filepath.FromSlash(f.Rel)), "the corpus of group "+strconv.Quote(sc.Groups[i].Name))
			}
			add(in.ItemsFile, "the items of group "+strconv.Quote(sc.Groups[i].Name))
		}
	}
	for i := range sc.Groups {
		models(sc.Groups[i].ModelKey, sc.Groups[i].Model)
		for _, sm := range sc.Groups[i].StageModels {
			models(sm.ModelKey, sm.Model)
		}
	}
	for _, key := range sortedKeys(sc.Spawn) {
		models(sc.Spawn[key].ModelKey, sc.Spawn[key].Model)
		for _, sm := range sc.Spawn[key].StageModels {
			models(sm.ModelKey, sm.Model)
		}
	}
	if h := sc.Host; h != nil && h.Hash != "" {
		add(h.Path, "the host config")
	}
	return out
}
