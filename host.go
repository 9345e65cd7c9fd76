package warren

import (
	"fmt"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/sandbox"
)

// Init runs the re-exec entry point this process was started as, and exits: a sandboxed
// command's helper (pid 1 of its namespace, its exec trampoline, none mode's reaper), or any
// other entry the binary links, such as the demo MCP server an "@demo" entry starts (registered
// by internal/mcpdemo, which cmd/host links). Otherwise it marks the descriptors the process
// inherited close-on-exec and returns. The sandbox and "@demo" re-execute the running binary,
// so every binary that runs a world calls Init first thing in main (and tests that run commands,
// in TestMain); one that does not would start its own main again where a helper was expected.
func Init() { sandbox.Init() }

// HostConfig is the host's own configuration (a host config file, or a scenario's [host]): the
// permission ceiling, the sandbox ceiling, safe commands, security switches, MCP servers and
// script settings. It is named here because every command that takes --config passes one.
type HostConfig = hostconfig.Config

// DefaultHostConfig is the built-in host config, what a run without a host config of its own
// runs under; a fresh value each call, so a caller may change it.
func DefaultHostConfig() *HostConfig { return hostconfig.Default() }

// Status is an agent's status (active, waiting, done, failed, killed). Summary.ByStatus and
// Summary.Tree are indexed by it, and its String is the name reports print.
type Status = components.StatusKind

// Launch holds the launch overrides of a run (host run --yolo, --allow, --ask, --deny), the
// outermost permission layer, so that a command line can adjust a scenario's permissions
// without editing it (Options.Launch, ExplainRequest.Launch).
type Launch = policy.Launch

// CheckLaunch reports launch overrides a run would get wrong: a name in Allow, Ask or Deny that
// is neither a known tool (KnownTools) nor a shell key, since a misspelt one would silently
// change nothing, and a name given two verdicts. Check them before loading anything, so the
// mistake is reported first; the errors name the flags of host run.
func CheckLaunch(l Launch) error {
	for _, f := range [...]struct {
		flag  string
		names []string
	}{{"--allow", l.Allow}, {"--ask", l.Ask}, {"--deny", l.Deny}} {
		for _, name := range f.names {
			if err := policy.CheckName(name, KnownTools()); name != "" && err != nil {
				return fmt.Errorf("%s: %w", f.flag, err)
			}
		}
	}
	return l.Validate()
}
