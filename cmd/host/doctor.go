package main

import (
	"fmt"

	"github.com/warrenhq/warren"
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
	report := warren.CheckSandbox(cfg)
	for _, line := range report.Machine {
		fmt.Fprintln(e.stdout, line)
	}
	ceiling := report.Ceiling
	source := "the built-in default"
	if d.Config != "" {
		source = d.Config
	}
	fmt.Fprintf(e.stdout, "ceiling (%s): %s on_unavailable=%s\n", source, ceiling, ceiling.OnUnavailable)
	switch {
	case report.Refused != nil:
		fmt.Fprintf(e.stdout, "here: commands refused: %v\n", report.Refused)
	case report.Degraded != "":
		fmt.Fprintf(e.stdout, "here: commands run as %s (degraded: %s)\n", report.Effective.Mode, report.Degraded)
	default:
		fmt.Fprintf(e.stdout, "here: commands run as %s, as configured\n", report.Effective.Mode)
	}
	return nil
}
