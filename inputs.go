package warren

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/scenarios"
)

// copyCorpora copies every group's corpus ([groups.inputs] corpus) into the workdir of each of its
// agents, once per distinct workdir (a group whose agents share one gets one copy), under the
// work root root. It works through os.Root: nothing in a work root kept from an earlier run (a
// link an agent planted) can take a write outside it, and what lies at the corpus's place is
// removed first, so the agents start from the corpus as shipped.
func copyCorpora(sc *Scenario, counts []int, profiles []*components.Profile, root string) error {
	var r *os.Root
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	for i := range sc.Groups {
		g := &sc.Groups[i]
		in, p := g.Inputs, profiles[i]
		if in == nil || len(in.Files) == 0 || p == nil || p.Workdir == nil {
			continue
		}
		if r == nil {
			var err error
			if r, err = os.OpenRoot(root); err != nil {
				return fmt.Errorf("the work root: %w", err)
			}
		}
		name := g.Namer(counts[i])
		done := map[string]bool{}
		for index := range counts[i] {
			dir := p.Workdir(name(index), index)
			if dir == "" || done[dir] {
				continue
			}
			done[dir] = true
			if err := copyCorpus(r, root, dir, in); err != nil {
				return fmt.Errorf("group %q: the corpus %s into %s: %w", g.Name, in.CorpusDir, dir, err)
			}
		}
	}
	return nil
}

// copyCorpus writes in's files under the workdir dir (absolute, under root) at in.At.
func copyCorpus(r *os.Root, root, dir string, in *scenarios.GroupInputs) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("the workdir is not under the work root")
	}
	at := filepath.ToSlash(filepath.Join(rel, in.At))
	if err := r.RemoveAll(at); err != nil {
		return err
	}
	for _, f := range in.Files {
		target := path.Join(at, f.Rel)
		if err := r.MkdirAll(path.Dir(target), 0o755); err != nil {
			return err
		}
		if err := r.WriteFile(target, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
