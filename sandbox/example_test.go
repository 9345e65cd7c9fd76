package sandbox_test

import (
	"context"
	"fmt"
	"os"

	"github.com/warrenhq/warren/sandbox"
)

// A manager runs an agent's commands under the boundary of its current stage. Mode none runs on
// the host; namespace and bwrap contain the command (see Capabilities.Report for this machine).
func ExampleManager_Run() {
	workdir, err := os.MkdirTemp("", "warren-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(workdir)
	none := sandbox.ModeNone
	mgr := sandbox.NewManager(workdir, nil, sandbox.Ceiling(sandbox.Spec{Mode: &none}))
	defer mgr.Close()

	o, err := mgr.Run(context.Background(), "echo hello; exit 3")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s(exit %d, mode %s)\n", o.Output, o.ExitCode, o.Boundary.Mode)
	// Output:
	// hello
	// (exit 3, mode none)
}
