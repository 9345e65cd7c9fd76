package warren

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/models"
)

// PoolCheck is what CheckPools found of one inference pool: the model it asked, how long the
// answer took, what it used, and whether the model called the tool it was asked to call.
type PoolCheck struct {
	Pool, API, Model string
	// Latency is the request's wall time (a check is not a run: nothing here reaches a trace).
	Latency time.Duration
	Usage   models.Usage
	// Text is the answer's text; ToolCalls reports that it called the ping tool as asked.
	Text      string
	ToolCalls bool
	// Err is why the pool could not be checked or did not answer.
	Err error
}

// CheckRequestTimeout bounds each request CheckPools sends.
const CheckRequestTimeout = 30 * time.Second

// ErrUncheckable is a pool CheckPools cannot ask: it lists no models and no pool falls back to it.
var ErrUncheckable = errors.New("nothing to check the pool with")

// CheckPools sends one tiny request to each of host's [[inference_pools]], in order, through the
// kind its api names (openai when it names none): the pool's first model, or for a pool that
// serves only as a fallback, the first model of a pool that falls back to it; to the pool's
// endpoint with its key. The request offers a ping tool and asks for it to be called, so the
// check says whether tool calls work. The SDKs' retries are off, as in a run: a check shows what
// one request gets.
func CheckPools(ctx context.Context, host *hostconfig.Config) []PoolCheck {
	out := make([]PoolCheck, 0, len(host.Pools))
	for _, p := range host.Pools {
		out = append(out, checkPool(ctx, p, host.Pools))
	}
	return out
}

func checkPool(ctx context.Context, p inference.Config, pools []inference.Config) PoolCheck {
	c := PoolCheck{Pool: p.Name, API: p.API}
	if c.API == "" {
		c.API = "openai"
	}
	if len(p.Models) > 0 {
		c.Model = p.Models[0]
	}
	for _, q := range pools {
		if c.Model == "" && q.Fallback == p.Name && len(q.Models) > 0 {
			c.Model = q.Models[0]
		}
	}
	if c.Model == "" {
		c.Err = fmt.Errorf("%w: it lists no models and no pool falls back to it", ErrUncheckable)
		return c
	}
	kind, ok := models.LookupKind(models.KindNamespace + c.API)
	if !ok {
		c.Err = fmt.Errorf("this host has no %s kind", c.API)
		return c
	}
	table := "model = " + strconv.Quote(c.Model) + "\nmax_tokens = 64\ntimeout = " + strconv.Quote(CheckRequestTimeout.String()) + "\n"
	if p.Endpoint != "" {
		table += "base_url = " + strconv.Quote(p.Endpoint) + "\n"
	}
	if p.APIKeyEnv != "" {
		table += "api_key_env = " + strconv.Quote(p.APIKeyEnv) + "\n"
	}
	cfg := kind.New()
	if _, err := tomlfile.Decode("inference_pools."+p.Name, []byte(table), cfg); err != nil {
		c.Err = err
		return c
	}
	m, err := cfg.Compile(&models.KindEnv{Key: p.Name, Path: "inference_pools", ID: c.API + ":check-" + p.Name})
	if err != nil {
		c.Err = err
		return c
	}
	v := &models.View{Agent: models.AgentInfo{Name: "check"}, Stage: "check",
		Messages: []models.Message{{Role: models.RoleUser, Content: "This is a connection check. Call the tool ping, with no arguments, and say nothing else."}},
		Tools:    []models.ToolInfo{{Name: "ping", Description: "Answers pong: call it to show that tool calls work.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}}
	start := time.Now()
	reply, err := m.Turn(ctx, &models.State{}, v)
	c.Latency = time.Since(start)
	c.Text, c.Usage, c.Err = reply.Text, reply.Usage, err
	c.ToolCalls = slices.ContainsFunc(reply.Calls, func(call models.ToolCall) bool { return call.Name == "ping" })
	return c
}
