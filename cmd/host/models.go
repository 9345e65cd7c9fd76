package main

import (
	"fmt"

	// The fake language-model provider is, like internal/mcpdemo, a test server this binary
	// also serves (host models serve-fake), so that a live scenario can be tried without a key;
	// only cmd/ binaries and tests link it, never the host's own packages.
	"github.com/warrenhq/warren/internal/fakellm"
)

// modelsCmd groups the commands about model back ends. Each is a field with its own struct, as
// in mcpCmd, so another (host models check) is one more field.
type modelsCmd struct {
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
	fmt.Fprintf(e.stdout, "OPENAI_BASE_URL=%s\nANTHROPIC_BASE_URL=%s\n", srv.URL, srv.AnthropicURL)
	fmt.Fprintf(e.stderr, "host: serving a fake provider until interrupted, answering by %s\n", rules)
	<-e.ctx.Done()
	if err := srv.Close(); err != nil {
		return fmt.Errorf("models serve-fake: %w", err)
	}
	return nil
}
