package main

import (
	"fmt"

	"github.com/warrenhq/warren"
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
			if err := warren.WriteStageGraphs(e.stdout, sc, v.Graph); err != nil {
				return err
			}
		}
	}
	if bad > 0 {
		return errBadInput
	}
	return nil
}
