package hostconfig_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/mcp/mcpconfig"
)

func ExampleLoadWithTools() {
	dir, err := os.MkdirTemp("", "hostconfig-mcp-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "host.toml")
	src := `[[mcp_servers]]
name = "kv"
command = "mcpserver"
args = ["--transport", "stdio"]
max_result_bytes = "16KiB"

[tool_permissions]
kv__kv_set = "ask"
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	// A real host starts the server and asks for its tools; this one knows them.
	list := func(s *mcpconfig.Server) ([]string, error) {
		return []string{mcpconfig.ToolName(s.Name, "kv_get"), mcpconfig.ToolName(s.Name, "kv_set")}, nil
	}
	cfg, err := hostconfig.LoadWithTools(path, []string{"read_file"}, nil, list)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := cfg.MCPServers[0]
	fmt.Println(s.Name, s.Transport(), s.Command, s.Args, s.CallTimeout, s.MaxConcurrency, s.MaxResultBytes, s.Key)
	fmt.Println(cfg.ToolPermissions["kv__kv_set"])
	// Output:
	// kv stdio mcpserver [--transport stdio] 30s 64 16384 mcp_servers[0]
	// ask
}
