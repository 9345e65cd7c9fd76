package blueprint_test

import (
	"fmt"
	"time"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/sandbox"
)

// A blueprint's [sandbox] and its stages' [stages.sandbox] tighten the host's ceiling; the
// commands of an agent run under the boundary of its current stage.
func ExampleBlueprint_StageBoundary() {
	src := `name = "reviewer"
[sandbox]
hidden = ["/home"]
[sandbox.limits]
timeout = "30s"

[[stages]]
name = "build"
available_tools = ["shell"]

[[stages]]
name = "review"
available_tools = ["shell"]
[stages.sandbox]
writable = []
limits.timeout = "5s"
limits.output_bytes = "8KiB"
`
	bp, err := blueprint.Parse("reviewer.toml", []byte(src), []string{"shell"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The host's ceiling, as hostconfig.Config.SandboxCeiling gives it.
	host := sandbox.Ceiling(sandbox.Spec{Writable: []string{"/srv/cache"}, Hidden: []string{"/root"}})
	fmt.Println("ceiling check:", bp.CheckSandboxCeiling(host))
	for i, st := range bp.Stages {
		fmt.Printf("%s: %v\n", st.Name, bp.StageBoundary(host, i))
	}

	// Under a host whose commands may only run for 10s, the blueprint's 30s loosens it.
	strict := sandbox.Ceiling(sandbox.Spec{Limits: sandbox.Limits{Timeout: 10 * time.Second}})
	fmt.Println(bp.CheckSandboxCeiling(strict))
	fmt.Println("build:", bp.StageBoundary(strict, 0).Limits.Timeout)
	// Output:
	// ceiling check: <nil>
	// build: namespace network=off writable=[/srv/cache] hidden=[/home /root] timeout=30s cpu=60s as=4294967296 nofile=1024 nproc=256 output=65536 tmp=268435456 fsize=1073741824
	// review: namespace network=off writable=[] hidden=[/home /root] timeout=5s cpu=60s as=4294967296 nofile=1024 nproc=256 output=8192 tmp=268435456 fsize=1073741824
	// reviewer.toml:5:1: sandbox.limits.timeout: blueprint [sandbox] loosens the host's sandbox: limits.timeout above the outer layer's
	// build: 10s
}
