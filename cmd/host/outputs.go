package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/warrenhq/warren"
)

// output is a file a command writes, with the flag that named it.
type output struct {
	flag, path string
}

// checkOutputs refuses outputs that would overwrite an input of the run (the scenario file, a
// blueprint, a script tool, a policy file, the --config file: whatever the load read) or each
// other, before anything is created or truncated: os.Create on the scenario would leave the user
// without the file they ran. A path names an input when both exist and are the same file
// (os.SameFile: a link, a hard link, another spelling of the path) or when their cleaned absolute
// paths are equal. outputs with an empty path are skipped, so callers list every output flag.
func checkOutputs(inputs []warren.Input, outputs ...output) error {
	type known struct {
		abs    string
		info   os.FileInfo
		what   string
		output bool
	}
	resolve := func(path, what string) known {
		k := known{abs: filepath.Clean(path), what: what}
		if abs, err := filepath.Abs(path); err == nil {
			k.abs = abs
		}
		k.info, _ = os.Stat(path)
		return k
	}
	same := func(a, b known) bool {
		if a.info != nil && b.info != nil {
			return os.SameFile(a.info, b.info)
		}
		return a.abs == b.abs
	}
	var taken []known
	for _, in := range inputs {
		taken = append(taken, resolve(in.Path, in.What+" ("+in.Path+")"))
	}
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		k := resolve(o.path, o.flag+" "+o.path)
		for _, t := range taken {
			switch {
			case !same(k, t):
			case t.output:
				return fmt.Errorf("%s %s names the same file as %s: give each output a path of its own", o.flag, o.path, t.what)
			default:
				return fmt.Errorf("%s %s names %s, which the run reads: writing it there would overwrite it; give a path that no input of the run has", o.flag, o.path, t.what)
			}
		}
		k.output = true
		taken = append(taken, k)
	}
	return nil
}
