package hostconfig_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/warrenhq/warren/hostconfig"
)

// The [sandbox] table is the ceiling every command runs under; what it leaves out takes the
// defaults.
func ExampleConfig_SandboxCeiling() {
	dir, err := os.MkdirTemp("", "hostconfig-sandbox-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "host.toml")
	src := `[sandbox]
writable = ["/srv/cache"]
hidden = ["/root", "/home"]
[sandbox.limits]
timeout = "30s"
address_space = "2GiB"
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
	fmt.Println(cfg.SandboxCeiling())
	fmt.Println(hostconfig.Default().SandboxCeiling())
	// Output:
	// namespace network=off writable=[/srv/cache] hidden=[/home /root] timeout=30s cpu=60s as=2147483648 nofile=1024 nproc=256 output=65536 tmp=268435456 fsize=1073741824
	// namespace network=off writable=[] hidden=[/etc/gshadow /etc/shadow /etc/ssh /home /root /run /var/run] timeout=1m0s cpu=60s as=4294967296 nofile=1024 nproc=256 output=65536 tmp=268435456 fsize=1073741824
}
