package models

import (
	"errors"
	"fmt"
	"strconv"
)

// The scripted kind: models that replay turns written in the scenario (kind = "scripted").
func init() {
	RegisterKind(Kind{
		ID:      KindNamespace + "scripted",
		Summary: "replays the turns written in the scenario, with templates",
		New:     func() KindConfig { return new(ScriptedConfig) },
	})
}

// ScriptedConfig is a scripted model's table in a scenario: [models.<key>] with kind =
// "scripted". Its toml tags are the keys the table accepts besides kind (docs/scenarios.md,
// "Scripted models").
type ScriptedConfig struct {
	// WhenExhausted is what happens once every turn is used: "fail" (the default), "finish"
	// or "repeat_last" (see ParseWhenExhausted).
	WhenExhausted string `toml:"when_exhausted"`
	// Turns are the turns, in the order the run consumes them.
	Turns []ScriptedTurn `toml:"turns"`
}

var _ KindConfig = (*ScriptedConfig)(nil)

// errMissingTool is a scripted call without a tool, reported at the call.
var errMissingTool = errors.New("missing tool: name the tool this call invokes")

// Compile builds the model with NewScripted under env.ID. Problems the table shows at a key (an
// unknown when_exhausted, a call without a tool, a repeat out of range, an agent key that is no
// agent's name) are KeyErrors, all of
// them at once; what NewScripted finds in the turns' templates is an error about the table,
// naming the turn and key path itself.
func (c *ScriptedConfig) Compile(env *KindEnv) (Model, error) {
	var problems KeyErrors
	when := ExhaustedFail
	if c.WhenExhausted != "" {
		w, err := ParseWhenExhausted(c.WhenExhausted)
		if err != nil {
			problems = append(problems, &KeyError{Key: "when_exhausted", Err: err})
		}
		when = w
	}
	for i, t := range c.Turns {
		key := "turns[" + strconv.Itoa(i) + "]"
		for j, call := range t.Calls {
			if call.Tool == "" {
				problems = append(problems, &KeyError{Key: key + ".calls[" + strconv.Itoa(j) + "]", Err: errMissingTool})
			}
		}
		if t.Repeat < 0 || t.Repeat > MaxRepeat {
			problems = append(problems, &KeyError{Key: key + ".repeat",
				Err: fmt.Errorf("%d: a turn repeats 1 to %d times (0 or absent: once)", t.Repeat, MaxRepeat)})
		}
		if err := validAgent(t.Agent); err != nil {
			problems = append(problems, &KeyError{Key: key + ".agent", Err: err})
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	m, err := NewScripted(env.ID, c.Turns, when)
	if err != nil {
		return nil, err
	}
	return m, nil
}
