package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"

	"github.com/warrenhq/warren/tools"
)

// Tool is a script tool as the host registers it: a compiled Script run by an Engine with the
// host functions of each call's agent. One Tool serves every agent of a world.
type Tool struct {
	Script *Script
	Engine *Engine
	// Funcs configures the host functions every call gets: HTTP limits and the environment
	// variables scripts may read (the rest comes from each call's ExecContext).
	HTTP HTTPConfig
	Env  map[string]string
}

var (
	_ tools.Tool        = (*Tool)(nil)
	_ tools.HostUser    = (*Tool)(nil)
	_ tools.CommandUser = (*Tool)(nil)
)

// Spec implements tools.Tool: the script's own name, description and parameters.
func (t *Tool) Spec() tools.Spec {
	return tools.Spec{Name: t.Script.Name, Description: t.Script.Description, Parameters: t.Script.Parameters}
}

// UsesHost implements tools.HostUser: a script's host functions need Layer 3 and call_tool.
func (t *Tool) UsesHost() bool { return true }

// UsesCommands implements tools.CommandUser: host.shell runs through the agent's sandbox.
func (t *Tool) UsesCommands() bool { return true }

// Execute implements tools.Tool: it runs the script for the agent of ec, with host functions
// confined to ec's workdir and gated by ec.ScriptPermit, Date at ec.Now and Math.random drawn
// from ec.Seed. A script's failure (exception, timeout, limit) is an error result naming the
// file, line and column; what it logged and every host function it called come back as notes.
func (t *Tool) Execute(ec *tools.ExecContext, args json.RawMessage) (tools.Result, error) {
	cfg := FuncsConfig{Tool: t.Script.Name, Exec: ec, HTTP: t.HTTP, Env: t.Env}
	if ec != nil {
		cfg.Permit = ec.ScriptPermit
		if ec.CallTool != nil {
			call := ec.CallTool
			cfg.CallTool = func(ctx context.Context, name string, args json.RawMessage) (string, error) {
				res, err := call(ctx, name, args)
				if err != nil {
					return "", err
				}
				if res.IsError {
					return "", errors.New(res.Content)
				}
				return res.Content, nil
			}
		}
	}
	if ec != nil && ec.Commands != nil {
		commands := ec.Commands
		cfg.Shell = func(ctx context.Context, line string) (string, error) {
			proc, err := commands.Start(ctx, line)
			if err != nil {
				return "", err
			}
			out := proc.Wait()
			text := tools.DescribeOutcome(out, false)
			if out.ExitCode != 0 {
				return "", errors.New(text)
			}
			return text, nil
		}
	}
	if cfg.Permit == nil {
		cfg.Permit = func(fn string) error { return errNoPermissions }
	}
	funcs := NewFuncs(cfg)
	env := CallEnv{}
	if ec != nil {
		src := rand.New(rand.NewPCG(ec.Seed, ec.Seed^0x9e3779b97f4a7c15))
		env = CallEnv{Now: ec.Now, Rand: src.Float64}
	}
	out, err := t.Engine.Run(ec.Context(), t.Script, args, funcs, env)
	res := tools.Result{Content: out}
	if n := funcs.Notes(); len(n) > 0 {
		res.Notes = n
	}
	if err != nil {
		res.Content, res.IsError = err.Error(), true
		if se := (*Error)(nil); errors.As(err, &se) && se.WallClock {
			res.Notes = append(res.Notes, tools.RealTimeNote("script wall-clock limit"))
		}
	}
	return res, nil
}

// errNoPermissions refuses every host function of a call made without the host's Layer 3 (a
// bare context): nothing says what the script may do, so it may do nothing.
var errNoPermissions = errors.New("this call has no script permissions (run it through the host)")
