package main

import (
	"fmt"
	"strings"

	"github.com/warrenhq/warren"
)

// launchFlags are the launch overrides `host run` and `host explain` share.
type launchFlags struct {
	Yolo       bool     `help:"Turn every ask into allow (never lifts a deny)."`
	Allow      []string `sep:"none" help:"Turn an ask into allow for this tool or key (repeatable)." placeholder:"TOOL|KEY"`
	Ask        []string `sep:"none" help:"Ask before this tool or key runs, even where a layer allows it (repeatable)." placeholder:"TOOL|KEY"`
	Deny       []string `sep:"none" help:"Deny this tool or key (repeatable)." placeholder:"TOOL|KEY"`
	Unattended bool     `help:"Nobody is watching: human tools are not advertised unless a stage requires them, and asks no grant or --yolo covers are denied."`
}

func (l launchFlags) launch() warren.Launch {
	return warren.Launch{Yolo: l.Yolo, Allow: l.Allow, Ask: l.Ask, Deny: l.Deny}
}

// check reports a misspelled or contradictory override as a usage error.
func (l launchFlags) check() error { return warren.CheckLaunch(l.launch()) }

type explainCmd struct {
	launchFlags
	Config     string   `help:"Host config file (the permission ceiling); with --scenario it replaces the scenario's [host]." placeholder:"FILE"`
	Scenario   string   `help:"Take the host config, launch flags, unattended switch, auto-mode classifier, script and MCP tools from this scenario; --blueprint and --under then name its groups and [spawn] keys." placeholder:"FILE"`
	Blueprint  string   `required:"" help:"The agent: a blueprint file (with --scenario: a group, or a [spawn] key when --under is given)." placeholder:"FILE|KEY"`
	Under      []string `sep:"none" help:"An ancestor of the agent and the stage it was in when it spawned the next one: BLUEPRINT[:STAGE] (repeatable, the top-level agent first; default stage: the entry)." placeholder:"BLUEPRINT[:STAGE]"`
	Stage      string   `help:"Stage the agent is in (default: the blueprint's entry stage)." placeholder:"NAME"`
	SafetyMode string   `help:"Safety mode of the top-level agent: default, read-only or auto (with --scenario: the group's)." enum:",default,read-only,auto" default:"" placeholder:"MODE"`
	PlanFile   string   `help:"The top-level agent is drafting a plan into this workdir file (everything else is read-only)." placeholder:"PATH"`
	Agent      string   `help:"The agent's name, which classifier rules match (default: the top group's first agent, or \"agent\")." placeholder:"NAME"`
	Grant      []string `help:"A grant the agent holds, KEY=stage or KEY=run (repeatable)." placeholder:"KEY=SCOPE"`
	Tool       string   `arg:"" help:"The tool called (shell for a command line)."`
	Args       string   `arg:"" optional:"" help:"The call's arguments as JSON; for shell, the command line itself may be given instead."`
}

func (x *explainCmd) Run(e *env) error {
	if err := x.check(); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	cfg, err := loadHostConfig(e, x.Config)
	if err != nil {
		return err
	}
	explanation, err := warren.Explain(e.ctx, warren.ExplainRequest{Host: cfg, Scenario: x.Scenario,
		Blueprint: x.Blueprint, Under: x.Under, Stage: x.Stage, SafetyMode: x.SafetyMode, PlanFile: x.PlanFile,
		Agent: x.Agent, Grants: x.Grant, Launch: x.launch(), Unattended: x.Unattended, Tool: x.Tool, Args: x.Args})
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	if x.Tool == warren.ShellTool {
		fmt.Fprintf(e.stdout, "command  %s\n", explanation.Command)
	}
	fmt.Fprintf(e.stdout, "agent    %s, stage %s\n", strings.Join(explanation.Line, " > "), explanation.Stage)
	fmt.Fprint(e.stdout, explanation.Gate.String())
	if err := explanation.Err(); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	return nil
}
