package scripting

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/warrenhq/warren/models"
)

// The js kind: models that are JavaScript policies (kind = "js").
func init() {
	models.RegisterKind(models.Kind{
		ID:      models.KindNamespace + "js",
		Summary: "a JavaScript policy file decides each turn in code",
		New:     func() models.KindConfig { return new(PolicyConfig) },
	})
}

// MaxPolicyTurnTimeout is the longest turn_timeout a js model may set: a policy's turn runs
// inline, on the world's goroutine, and stalls every agent while it runs.
const MaxPolicyTurnTimeout = 10 * time.Second

// PolicyConfig is a js model's table in a scenario: [models.<key>] with kind = "js". Its toml
// tags are the keys the table accepts besides kind (docs/scenarios.md, "JavaScript policies").
type PolicyConfig struct {
	// File is the policy, relative to the scenario. It is named in errors (and so in traces) as
	// written, so that traces do not depend on where the scenario sits on disk.
	File string `toml:"file"`
	// TurnTimeout is the CPU-time budget of one turn, a Go duration from 1ms to
	// MaxPolicyTurnTimeout ("": DefaultPolicyTimeout).
	TurnTimeout string `toml:"turn_timeout"`
}

var _ models.KindConfig = (*PolicyConfig)(nil)

// errNoPolicyFile is a js model table without a file.
var errNoPolicyFile = errors.New(`missing file: a js model names its policy, e.g. file = "policies/voter.js"`)

// Compile reads and compiles the policy once for every agent that runs it (CompilePolicy, under
// env.ID), with the host's script memory budget (a policy's turn has the budget a script call
// has) and the table's turn_timeout, and folds the file's contents into env.Hash.
func (c *PolicyConfig) Compile(env *models.KindEnv) (models.Model, error) {
	if c.File == "" {
		return nil, &models.KeyError{Err: errNoPolicyFile}
	}
	var problems models.KeyErrors
	limits := DefaultPolicyLimits()
	if m := env.Scripting.MaxMemory; m > 0 {
		limits.MaxMemory = m
	}
	if c.TurnTimeout != "" {
		d, err := time.ParseDuration(c.TurnTimeout)
		if err != nil || d < time.Millisecond || d > MaxPolicyTurnTimeout {
			problems = append(problems, &models.KeyError{Key: "turn_timeout", Err: fmt.Errorf(
				"%q is not a duration from 1ms to %v (e.g. \"250ms\"); a policy's turn blocks the world while it runs",
				c.TurnTimeout, MaxPolicyTurnTimeout)})
		}
		limits.CallTimeout = d
	}
	path, src, err := env.ReadFile(c.File)
	if err != nil {
		problems = append(problems, &models.KeyError{Key: "file", Err: fmt.Errorf("%q cannot be read: %w", c.File, err)})
	}
	if len(problems) > 0 {
		return nil, problems
	}
	policy, err := CompilePolicyParams(env.ID, filepath.ToSlash(filepath.Clean(c.File)), src, limits, env.Params)
	if err != nil {
		return nil, &models.KeyError{Key: "file", Err: fmt.Errorf("the policy does not load:\n%w", err)}
	}
	if env.Hash != nil {
		fmt.Fprintf(env.Hash, "\npolicy %s %x\n", env.Key, sha256.Sum256(src))
	}
	policy.source = path
	return policy, nil
}
