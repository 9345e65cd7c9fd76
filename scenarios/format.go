package scenarios

import "github.com/warrenhq/warren/hostconfig"

// The TOML shape of a scenario file. These types mirror the file one to one; Load validates them
// and compiles them into a Scenario. docs/scenarios.md documents every key.

type fileScenario struct {
	Name        string            `toml:"name"`
	Description string            `toml:"description"`
	Seed        int64             `toml:"seed"`
	Limits      fileLimits        `toml:"limits"`
	Clock       fileClock         `toml:"clock"`
	Lanes       fileLanes         `toml:"lanes"`
	Blueprints  map[string]string `toml:"blueprints"`
	// Models holds each model's table untyped: its keys are its kind's, so compileModels
	// decodes it again into its kind's own table type (models.Kind).
	Models map[string]map[string]any `toml:"models"`
	Groups []fileGroup               `toml:"groups"`
	// Spawn names the blueprints agents may spawn as sub-agents, with the model each runs.
	Spawn     map[string]fileSpawn `toml:"spawn"`
	Expect    []fileExpect         `toml:"expect"`
	ExpectRun *fileExpectRun       `toml:"expect_run"`
	// Host embeds a host config (the permission ceiling and security switches).
	Host *hostconfig.File `toml:"host"`
	// Launch holds the launch overrides a run of this scenario starts with.
	Launch fileLaunch `toml:"launch"`
	// Interactions script the answers to prompts and questions.
	Interactions []fileInteraction `toml:"interactions"`
	// Classifier scripts the auto-mode classifier.
	Classifier []fileClassifierRule `toml:"classifier"`
	// Faults injects failures from a seed.
	Faults *fileFaults `toml:"faults"`
	// Params are the scenario's parameters with their default values.
	Params map[string]any `toml:"params"`
}

type fileSpawn struct {
	Model string `toml:"model"`
	// StageModels gives stages of the blueprint a model of their own: stage name = model key.
	StageModels map[string]string `toml:"stage_models"`
}

type fileLaunch struct {
	Yolo       bool     `toml:"yolo"`
	Allow      []string `toml:"allow"`
	Ask        []string `toml:"ask"`
	Deny       []string `toml:"deny"`
	Unattended bool     `toml:"unattended"`
}

type fileInteraction struct {
	Agent   string `toml:"agent"`
	Tool    string `toml:"tool"`
	Key     string `toml:"key"`
	Approve string `toml:"approve"`
	Reply   string `toml:"reply"`
	Delay   *int64 `toml:"delay"`
	Times   int64  `toml:"times"`
}

type fileClassifierRule struct {
	Agent    string `toml:"agent"`
	Tool     string `toml:"tool"`
	Key      string `toml:"key"`
	Decision string `toml:"decision"`
	Reason   string `toml:"reason"`
}

type fileLimits struct {
	// Pointers tell a key left out (the default) from one written 0 (refused).
	MaxTicks         *int64 `toml:"max_ticks"`
	MaxTurnsPerAgent *int64 `toml:"max_turns_per_agent"`
	// Budgets of live model turns (docs/models.md, "Tokens, cost and budgets").
	MaxTokensPerAgent *int64   `toml:"max_tokens_per_agent"`
	MaxTokensPerRun   *int64   `toml:"max_tokens_per_run"`
	MaxCostUSD        *float64 `toml:"max_cost_usd"`
}

type fileClock struct {
	Mode          string           `toml:"mode"`
	Tick          string           `toml:"tick"`
	ModelLatency  *int64           `toml:"model_latency"`
	ToolLatency   *int64           `toml:"tool_latency"`
	ToolLatencies map[string]int64 `toml:"tool_latencies"`
}

type fileLanes struct {
	ModelCapacity int `toml:"model_capacity"`
	ToolCapacity  int `toml:"tool_capacity"`
	ToolWorkers   int `toml:"tool_workers"`
}

type fileGroup struct {
	Name      string `toml:"name"`
	Blueprint string `toml:"blueprint"`
	Model     string `toml:"model"`
	// StageModels gives stages of the blueprint a model of their own: stage name = model key.
	StageModels map[string]string `toml:"stage_models"`
	Count       int               `toml:"count"`
	AgentName   string            `toml:"agent_name"`
	Workdir     string            `toml:"workdir"`
	Task        string            `toml:"task"`
	// SafetyMode is default, read-only or auto; PlanFile, when set, puts the group in plan
	// mode: read-only except that one file.
	SafetyMode string `toml:"safety_mode"`
	PlanFile   string `toml:"plan_file"`
	// Inputs gives the group's agents files from outside the run: a corpus folder copied into
	// each workdir, one item per agent from a JSON Lines file.
	Inputs *fileInputs `toml:"inputs"`
}

type fileInputs struct {
	Corpus string `toml:"corpus"`
	At     string `toml:"at"`
	Items  string `toml:"items"`
}

type fileExpect struct {
	Group      string         `toml:"group"`
	Agent      string         `toml:"agent"`
	Status     string         `toml:"status"`
	Stage      string         `toml:"stage"`
	Reason     string         `toml:"reason"`
	ModelTurns *int           `toml:"model_turns"`
	ToolCalls  map[string]int `toml:"tool_calls"`
	ToolErrors *int           `toml:"tool_errors"`
	// Results are [[expect.results]]: some call of the tool returned such a result.
	Results []fileResult `toml:"results"`
	// Memory are keys the agent's memory must hold at the end, with their values.
	Memory map[string]any `toml:"memory"`
}

type fileResult struct {
	Tool     string `toml:"tool"`
	Contains string `toml:"contains"`
	OK       *bool  `toml:"ok"`
}

type fileExpectRun struct {
	Status     map[string]any `toml:"status"`
	ToolCalls  *int           `toml:"tool_calls"`
	ToolErrors *int           `toml:"tool_errors"`
}
