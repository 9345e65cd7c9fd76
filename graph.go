package warren

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/warrenhq/warren/blueprint"
)

// WriteStageGraphs draws the stage graph of each of the scenario's blueprints to w, in key
// order, each after a comment line naming it: format is "dot" (Graphviz) or "mermaid" (a
// flowchart). It is what `host validate --graph` prints, so an embedder draws the same graph.
func WriteStageGraphs(w io.Writer, sc *Scenario, format string) error {
	f, err := blueprint.ParseGraphFormat(format)
	if err != nil {
		return err
	}
	comment := "//"
	if f == blueprint.GraphMermaid {
		comment = "%%"
	}
	for _, key := range slices.Sorted(maps.Keys(sc.Blueprints)) {
		bp := sc.Blueprints[key]
		if _, err := fmt.Fprintf(w, "%s blueprint %s (%s)\n", comment, key, bp.Path); err != nil {
			return err
		}
		if err := bp.WriteGraph(w, f, nil); err != nil {
			return err
		}
	}
	return nil
}
