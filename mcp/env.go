package mcp

import (
	"os"
	"slices"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// inheritedEnv lists the only host variables a stdio server inherits (mcpconfig.InheritedEnv).
var inheritedEnv = mcpconfig.InheritedEnv

// childEnv builds a stdio server's environment: PATH, HOME, LANG and TZ as lookup finds them on
// the host, then extra (which wins on a clash), as sorted "KEY=value" pairs so the child's
// environment never depends on map order.
func childEnv(lookup func(string) (string, bool), extra map[string]string) []string {
	merged := make(map[string]string, len(inheritedEnv)+len(extra))
	for _, key := range inheritedEnv {
		if value, ok := lookup(key); ok {
			merged[key] = value
		}
	}
	for key, value := range extra {
		merged[key] = value
	}
	keys := make([]string, 0, len(merged))
	for key := range merged {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	env := make([]string, len(keys))
	for i, key := range keys {
		env[i] = key + "=" + merged[key]
	}
	return env
}

// hostEnv is childEnv's lookup outside tests.
var hostEnv = os.LookupEnv
