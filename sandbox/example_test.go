package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// A contained command whose boundary hides a path inside its workdir (or inside a writable path)
// is refused before anything runs: it could rename the hidden path's parent folder, and the next
// command would see the secret where it was moved.
func ExampleManager_Start_hiddenInWritable() {
	workdir, err := os.MkdirTemp("", "warren-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(workdir)
	namespace := sandbox.ModeNamespace
	b := sandbox.Ceiling(sandbox.Spec{Mode: &namespace, Hidden: []string{filepath.Join(workdir, "conf", ".env")}})
	// A machine offering every mechanism: the refusal comes before the sandbox is set up.
	caps := &sandbox.Capabilities{Shell: sandbox.Support{Available: true}, Namespaces: sandbox.Support{Available: true}, Landlock: sandbox.Support{Available: true},
		Seccomp: sandbox.Support{Available: true}}
	mgr := sandbox.NewManager(workdir, caps, b)
	defer mgr.Close()

	_, err = mgr.Start(context.Background(), "cat conf/.env")
	fmt.Println(errors.Is(err, sandbox.ErrHiddenInWritable))
	// Output:
	// true
}
