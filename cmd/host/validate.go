package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/blueprint"
)

type validateCmd struct {
	Files  []string `arg:"" help:"Scenario files to check."`
	Config string   `help:"Host config file to check them under, as host run --config would run them (replaces each scenario's [host])." placeholder:"FILE"`
	Graph  string   `help:"Also print each blueprint's stage graph, as Graphviz DOT (dot) or a Mermaid flowchart (mermaid)." enum:",dot,mermaid" default:"" placeholder:"dot|mermaid"`
}

func (v *validateCmd) Run(e *env) error {
	host, err := loadHostConfig(e, v.Config)
	if err != nil {
		return err
	}
	bad := 0
	for _, f := range v.Files {
		sc, err := warren.LoadUnder(f, host)
		if err != nil {
			bad++
			fmt.Fprintf(e.stderr, "%s: invalid:\n%v\n", f, err)
			continue
		}
		agents := 0
		for _, g := range sc.Groups {
			agents += g.Count
		}
		fmt.Fprintf(e.stdout, "%s: ok (scenario %s, %d groups, %d agents, %d blueprints)\n", f, sc.Name, len(sc.Groups), agents, len(sc.Blueprints))
		if v.Graph != "" {
			if err := printGraphs(e, sc, v.Graph); err != nil {
				return err
			}
		}
	}
	if bad > 0 {
		return errBadInput
	}
	return nil
}

// printGraphs prints the stage graph of each of the scenario's blueprints, in key order, each
// after a comment line naming it.
func printGraphs(e *env, sc *warren.Scenario, format string) error {
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
		fmt.Fprintf(e.stdout, "%s blueprint %s (%s)\n", comment, key, bp.Path)
		if err := bp.WriteGraph(e.stdout, f, nil); err != nil {
			return err
		}
	}
	return nil
}
