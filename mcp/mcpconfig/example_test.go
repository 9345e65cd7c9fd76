package mcpconfig_test

import (
	"fmt"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

func ExampleToolName() {
	cfg := &mcpconfig.Server{Name: "kv", Command: "mcpserver"}
	fmt.Println(mcpconfig.ToolName(cfg.Name, "kv_get"), cfg.Transport())
	// Output: kv__kv_get stdio
}
