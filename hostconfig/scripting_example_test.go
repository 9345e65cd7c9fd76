package hostconfig_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warrenhq/warren/hostconfig"
)

// A host opts its scripts into http_get, lets them read two variables and tightens their call
// budget; a relative tools_dir is found beside the config file.
func ExampleLoad_scripting() {
	dir, err := os.MkdirTemp("", "hostconfig-scripting")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "host.toml")
	src := `[tool_script_permissions]
http_get = "allow"

[scripting]
tools_dir = "tools"
allow_env = ["LANG", "HOME"]
call_timeout = "500ms"
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := hostconfig.Load(path, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := cfg.Scripting
	fmt.Println(cfg.ScriptPermissions, s.ToolsDir == filepath.Join(dir, "tools"), s.AllowEnv, s.CallTimeout, s.MaxCallStack, s.HTTPTimeout, s.MaxHTTPResponseBytes)

	if err := os.WriteFile(path, []byte("[tool_script_permissions]\nhttp_get = \"inherit\"\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	_, err = hostconfig.Load(path, nil)
	fmt.Println(strings.TrimPrefix(err.Error(), dir+string(filepath.Separator)))
	// Output:
	// map[http_get:allow] true [HOME LANG] 500ms 256 10s 1048576
	// host.toml:2:1: tool_script_permissions.http_get: invalid script permission: inherit is not valid for http_get, which has no built-in tool of the same name to inherit from; valid: allow, deny
}
