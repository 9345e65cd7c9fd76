package main

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/warrenhq/warren"

	// The fake language-model provider is, like internal/mcpdemo, a test server this binary
	// also serves (host models serve-fake), so that a live scenario can be tried without a key;
	// only cmd/ binaries and tests link it, never the host's own packages.
	"github.com/warrenhq/warren/internal/fakellm"
)

// modelsCmd groups the commands about model back ends. Each is a field with its own struct, as
// in mcpCmd, so another (host models check) is one more field.
type modelsCmd struct {
	Check     modelsCheckCmd     `cmd:"" help:"Send one tiny request to each inference pool of a host config (or a scenario's [host] table) and print the model, latency, token usage and whether tool calls work."`
	ServeFake modelsServeFakeCmd `cmd:"" name:"serve-fake" help:"Serve a fake language-model provider on loopback, speaking both the OpenAI Chat Completions and the Anthropic Messages API, answering by a rules file (or \"I have nothing to add.\"), until interrupted."`
}

// modelsServeFakeCmd serves internal/fakellm with a rules file's answers.
type modelsServeFakeCmd struct {
	Listen string `default:"127.0.0.1:8089" placeholder:"ADDR" help:"Loopback address to listen on (127.0.0.1, ::1 or localhost; port 0 picks a free one; default ${default})."`
	Rules  string `placeholder:"FILE" type:"path" help:"TOML file of [[reply]] rules, first match wins (see docs/models.md); without it every request is answered \"I have nothing to add.\"."`
}

// Run prints the base URL of each wire format on stdout, as the variables the SDKs (and the
// live kinds' defaults) read, so a shell can eval them; then it serves until the command's
// context ends (SIGINT, SIGTERM, SIGHUP).
func (s *modelsServeFakeCmd) Run(e *env) error {
	rules, err := fakellm.LoadRules(s.Rules)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	srv, err := fakellm.Listen(s.Listen, rules.Reply)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	srv.Forget() // a long-running server must not grow with every request it answers
	fmt.Fprintf(e.stdout, "OPENAI_BASE_URL=%s\nANTHROPIC_BASE_URL=%s\n", srv.URL, srv.AnthropicURL)
	fmt.Fprintf(e.stderr, "host: serving a fake provider until interrupted, answering by %s\n", rules)
	<-e.ctx.Done()
	if err := srv.Close(); err != nil {
		return fmt.Errorf("models serve-fake: %w", err)
	}
	return nil
}

// modelsCheckCmd checks each configured pool with one request.
type modelsCheckCmd struct {
	Scenario string `arg:"" optional:"" type:"path" help:"Scenario whose [host] table's pools to check."`
	Config   string `placeholder:"FILE" help:"Host config whose [[inference_pools]] to check; with a scenario, it replaces the scenario's [host] table."`
}

// Run prints one line per pool and exits 1 when a pool did not answer.
func (c *modelsCheckCmd) Run(e *env) error {
	if c.Scenario == "" && c.Config == "" {
		fmt.Fprintln(e.stderr, "host: models check needs a host config (--config FILE) or a scenario with a [host] table")
		return errBadInput
	}
	host, err := loadHostConfig(e, c.Config)
	if err != nil {
		return err
	}
	if host == nil {
		sc, err := warren.Load(c.Scenario)
		if err != nil {
			fmt.Fprintf(e.stderr, "host: %s is not a valid scenario:\n%v\n", c.Scenario, err)
			return errBadInput
		}
		host = sc.Host
	}
	if len(host.Pools) == 0 {
		fmt.Fprintln(e.stderr, "host: no [[inference_pools]] to check (a live model no pool lists gets a pool of its own when it runs)")
		return errBadInput
	}
	checks := warren.CheckPools(e.ctx, host)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tAPI\tMODEL\tLATENCY\tTOKENS\tTOOL CALLS\tRESULT")
	failed := false
	for _, ch := range checks {
		result, tools := "ok", "no"
		if ch.ToolCalls {
			tools = "yes"
		}
		if ch.Err != nil {
			failed, result, tools = true, ch.Err.Error(), "-"
		} else if !ch.ToolCalls {
			result = fmt.Sprintf("ok, but it answered %q instead of calling ping", firstChars(ch.Text, 60))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d+%d\t%s\t%s\n", ch.Pool, ch.API, ch.Model, ch.Latency.Round(time.Millisecond), ch.Usage.Prompt, ch.Usage.Completion, tools, result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed {
		return fmt.Errorf("%w: a pool did not answer", errPoolsFailed)
	}
	return nil
}

// errPoolsFailed marks a check some pool failed (exit 1).
var errPoolsFailed = errors.New("models check")

// firstChars is s cut to n bytes at a rune boundary, with "…" when cut.
func firstChars(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
