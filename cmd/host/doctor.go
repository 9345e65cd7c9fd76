package main

import (
	"fmt"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/sandbox"
)

// doctorCmd reports what this machine supports for containing agents' commands, and what the
// host config's sandbox will do here.
type doctorCmd struct {
	Config string `help:"Host config whose [sandbox] ceiling to check (default: the built-in one)." placeholder:"FILE"`
}

func (d *doctorCmd) Run(e *env) error {
	cfg, err := loadHostConfig(e, d.Config)
	if err != nil {
		return err
	}
	if cfg == nil {
		cfg = hostconfig.Default()
	}
	caps := sandbox.Probe()
	for _, line := range caps.Report() {
		fmt.Fprintln(e.stdout, line)
	}
	ceiling := cfg.SandboxCeiling()
	source := "the built-in default"
	if d.Config != "" {
		source = d.Config
	}
	fmt.Fprintf(e.stdout, "ceiling (%s): %s on_unavailable=%s\n", source, ceiling, ceiling.OnUnavailable)
	effective, warning, err := caps.Effective(ceiling)
	switch {
	case err != nil:
		fmt.Fprintf(e.stdout, "here: commands refused: %v\n", err)
	case warning != "":
		fmt.Fprintf(e.stdout, "here: commands run as %s (degraded: %s)\n", effective.Mode, warning)
	default:
		fmt.Fprintf(e.stdout, "here: commands run as %s, as configured\n", effective.Mode)
	}
	return nil
}
