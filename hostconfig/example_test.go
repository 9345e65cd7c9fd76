package hostconfig_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warrenhq/warren/hostconfig"
)

func ExampleLoad() {
	dir, err := os.MkdirTemp("", "hostconfig-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "host.toml")
	src := "[subagents]\nmax_depth = 4\ninbox = 16\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := hostconfig.Load(path, []string{"read_file"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", cfg.Subagents)

	if err := os.WriteFile(path, []byte("[subagents]\nmax_depth = 0\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	_, err = hostconfig.Load(path, nil)
	fmt.Println(strings.TrimPrefix(err.Error(), dir+string(filepath.Separator)))
	// Output:
	// {MaxDepth:4 MaxChildren:256 MaxAgents:1000000 Inbox:16 MaxFanOutItems:100000}
	// host.toml:2:1: subagents.max_depth: out of range: 0; valid: 1 to 64 (the deepest any agent tree may grow)
}
