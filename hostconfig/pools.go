package hostconfig

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/models"
)

// PoolTable is one [[inference_pools]] entry as written (docs/models.md, "Inference pools").
// Pointers tell an absent key (take the default) from an explicit value.
type PoolTable struct {
	Name              string      `toml:"name"`
	Endpoint          *string     `toml:"endpoint"`
	APIKeyEnv         *string     `toml:"api_key_env"`
	API               *string     `toml:"api"`
	Models            []string    `toml:"models"`
	MaxConcurrency    *int64      `toml:"max_concurrency"`
	RequestsPerMinute *int64      `toml:"requests_per_minute"`
	TokensPerMinute   *int64      `toml:"tokens_per_minute"`
	Fallback          *string     `toml:"fallback"`
	Retry             poolRetry   `toml:"retry"`
	Breaker           poolBreaker `toml:"breaker"`
	Prices            poolPrices  `toml:"prices"`
	MaxResponseBytes  *int64      `toml:"max_response_bytes"`
	MaxToolCalls      *int64      `toml:"max_tool_calls"`
	Timeout           *string     `toml:"timeout"`
}

type poolRetry struct {
	MaxAttempts    *int64   `toml:"max_attempts"`
	InitialBackoff *string  `toml:"initial_backoff"`
	MaxBackoff     *string  `toml:"max_backoff"`
	Multiplier     *float64 `toml:"multiplier"`
}

type poolBreaker struct {
	Failures *int64  `toml:"failures"`
	Cooldown *string `toml:"cooldown"`
}

type poolPrices struct {
	Input      *float64 `toml:"input"`
	Output     *float64 `toml:"output"`
	CacheRead  *float64 `toml:"cache_read"`
	CacheWrite *float64 `toml:"cache_write"`
}

// Sentinel errors of [[inference_pools]] entries, besides ErrMissingKey, ErrOutOfRange and
// ErrBadDuration.
var (
	// ErrBadPoolName: a pool name is not 1 to 32 of a-z, 0-9, '_' and '-' starting with a letter.
	ErrBadPoolName = errors.New("invalid pool name")
	// ErrDuplicatePool: two pools share a name, or two pools serve the same model, so which one
	// a turn goes through would be ambiguous.
	ErrDuplicatePool = errors.New("duplicate pool")
	// ErrBadFallback: a fallback names no pool, or the fallbacks loop back to where they started.
	ErrBadFallback = errors.New("invalid fallback")
)

// Limits of [[inference_pools]] settings.
const (
	maxPoolConcurrency = 100_000
	maxPoolPerMinute   = 1_000_000_000
	maxPoolAttempts    = 20
	maxPoolWait        = 24 * time.Hour
	maxPrice           = 10_000.0 // dollars per million tokens
)

// poolNameRule says what a valid pool name is, in messages.
const poolNameRule = `a pool name is 1 to 32 of a-z, 0-9, '_' and '-', starting with a letter (such as "openai" or "local-gpu")`

// pools compiles every [[inference_pools]] entry, keeping the valid ones in file order.
func (c *compiler) pools(entries []PoolTable) []inference.Config {
	out := make([]inference.Config, 0, len(entries))
	nameAt := map[string]string{}
	modelAt := map[string]string{}
	for i := range entries {
		key := "inference_pools[" + strconv.Itoa(i) + "]"
		before := len(c.errs)
		p := c.pool(key, &entries[i])
		if p.Name != "" {
			if first, dup := nameAt[p.Name]; dup {
				line, _, _ := c.doc.Pos(c.path(first))
				c.errorf(key+".name", "%w %q: already declared by %s at line %d; give each pool its own name", ErrDuplicatePool, p.Name, c.path(first), line)
			} else {
				nameAt[p.Name] = key
			}
		}
		for j, m := range p.Models {
			if first, dup := modelAt[m]; dup {
				c.errorf(key+".models["+strconv.Itoa(j)+"]", "%w: model %q is already served by %s; a model goes through one pool (name the other as fallback instead)", ErrDuplicatePool, m, c.path(first))
			} else {
				modelAt[m] = key
			}
		}
		if len(c.errs) == before {
			out = append(out, p)
		}
	}
	for i, p := range out {
		if p.Fallback == "" {
			continue
		}
		key := c.poolKey(entries, p.Name) + ".fallback"
		if _, ok := nameAt[p.Fallback]; !ok {
			c.errorf(key, "%w: no pool is named %q; valid: %s", ErrBadFallback, p.Fallback, strings.Join(poolNames(out), ", "))
			continue
		}
		seen := map[string]bool{p.Name: true}
		for at := p.Fallback; at != ""; at = fallbackOf(out, at) {
			if seen[at] {
				c.errorf(key, "%w: the fallbacks from %q loop back to %q; a chain of fallbacks must end", ErrBadFallback, out[i].Name, at)
				break
			}
			seen[at] = true
		}
	}
	return out
}

// poolKey is the key of the entry named name.
func (c *compiler) poolKey(entries []PoolTable, name string) string {
	for i := range entries {
		if entries[i].Name == name {
			return "inference_pools[" + strconv.Itoa(i) + "]"
		}
	}
	return "inference_pools"
}

func poolNames(pools []inference.Config) []string {
	names := make([]string, len(pools))
	for i, p := range pools {
		names[i] = p.Name
	}
	return names
}

func fallbackOf(pools []inference.Config, name string) string {
	for _, p := range pools {
		if p.Name == name {
			return p.Fallback
		}
	}
	return ""
}

// pool compiles one entry at key.
func (c *compiler) pool(key string, t *PoolTable) inference.Config {
	p := inference.Config{MaxConcurrency: inference.DefaultMaxConcurrency, Retry: inference.DefaultRetry, Breaker: inference.DefaultBreaker}
	switch {
	case t.Name == "" && !c.present(key+".name"):
		c.errorf(key+".name", "%w; %s", ErrMissingKey, poolNameRule)
	case !validPoolName(t.Name):
		c.errorf(key+".name", "%w %q; %s", ErrBadPoolName, t.Name, poolNameRule)
	default:
		p.Name = t.Name
	}
	if t.Endpoint != nil {
		if u, err := url.Parse(*t.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.errorf(key+".endpoint", "%w %q; give the provider's base URL, such as \"http://127.0.0.1:11434/v1\"", ErrBadURL, *t.Endpoint)
		} else {
			p.Endpoint = *t.Endpoint
		}
	}
	if t.APIKeyEnv != nil {
		if !validEnvName(*t.APIKeyEnv) {
			c.errorf(key+".api_key_env", "%w %q; name the environment variable that holds the key, such as \"OPENAI_API_KEY\"", ErrBadEnvName, *t.APIKeyEnv)
		} else {
			p.APIKeyEnv = *t.APIKeyEnv
		}
	}
	if t.API != nil {
		switch *t.API {
		case "openai", "anthropic":
			p.API = *t.API
		default:
			c.errorf(key+".api", "%q: valid wire formats are openai, anthropic (what the endpoint speaks)", *t.API)
		}
	}
	for j, m := range t.Models {
		if strings.TrimSpace(m) == "" {
			c.errorf(key+".models["+strconv.Itoa(j)+"]", "empty model name; list the provider model names the pool serves, such as \"gpt-4o-mini\"")
			continue
		}
		p.Models = append(p.Models, m)
	}
	c.poolInt(key+".max_concurrency", t.MaxConcurrency, 1, maxPoolConcurrency, "requests the pool has in flight at once", func(v int64) { p.MaxConcurrency = int(v) })
	c.poolInt(key+".requests_per_minute", t.RequestsPerMinute, 1, maxPoolPerMinute, "requests the pool sends per minute", func(v int64) { p.RequestsPerMinute = v })
	c.poolInt(key+".tokens_per_minute", t.TokensPerMinute, 1, maxPoolPerMinute, "tokens the pool's requests may use per minute", func(v int64) { p.TokensPerMinute = v })
	if t.Fallback != nil {
		if *t.Fallback == p.Name && p.Name != "" {
			c.errorf(key+".fallback", "%w: a pool cannot be its own fallback", ErrBadFallback)
		} else {
			p.Fallback = *t.Fallback
		}
	}
	c.poolInt(key+".retry.max_attempts", t.Retry.MaxAttempts, 1, maxPoolAttempts, "times one turn is sent, the first included (1: no retries)", func(v int64) { p.Retry.MaxAttempts = int(v) })
	c.poolWait(key+".retry.initial_backoff", t.Retry.InitialBackoff, "the wait before a turn's first retry", &p.Retry.Initial)
	c.poolWait(key+".retry.max_backoff", t.Retry.MaxBackoff, "the longest wait between retries", &p.Retry.Max)
	if m := t.Retry.Multiplier; m != nil {
		if *m < 1 || *m > 10 {
			c.errorf(key+".retry.multiplier", "%w: %v; valid: 1 to 10 (how much longer each retry waits than the one before)", ErrOutOfRange, *m)
		} else {
			p.Retry.Multiplier = *m
		}
	}
	if p.Retry.Max < p.Retry.Initial {
		c.errorf(key+".retry.max_backoff", "%w: %s is shorter than initial_backoff %s", ErrOutOfRange, p.Retry.Max, p.Retry.Initial)
	}
	c.poolInt(key+".breaker.failures", t.Breaker.Failures, 0, 1_000_000, "consecutive failed requests that open the breaker (0: no breaker)", func(v int64) { p.Breaker.Failures = int(v) })
	c.poolWait(key+".breaker.cooldown", t.Breaker.Cooldown, "how long an open breaker stops the pool", &p.Breaker.Cooldown)
	for _, pr := range [...]struct {
		name string
		v    *float64
		to   *float64
	}{{"input", t.Prices.Input, &p.Prices.Input}, {"output", t.Prices.Output, &p.Prices.Output},
		{"cache_read", t.Prices.CacheRead, &p.Prices.CacheRead}, {"cache_write", t.Prices.CacheWrite, &p.Prices.CacheWrite}} {
		if pr.v == nil {
			continue
		}
		if *pr.v < 0 || *pr.v > maxPrice {
			c.errorf(key+".prices."+pr.name, "%w: %v; valid: 0 to %v (US dollars per million tokens)", ErrOutOfRange, *pr.v, maxPrice)
			continue
		}
		*pr.to = *pr.v
	}
	c.poolInt(key+".max_response_bytes", t.MaxResponseBytes, 1024, models.MaxResponseBytes, "bytes of one response body, streamed or not", func(v int64) { p.Caps.ResponseBytes = v })
	c.poolInt(key+".max_tool_calls", t.MaxToolCalls, 1, models.MaxToolCalls, "tool calls of one answer", func(v int64) { p.Caps.ToolCalls = v })
	if t.Timeout != nil {
		if d, err := time.ParseDuration(*t.Timeout); err != nil || d <= 0 || d > maxPoolWait {
			c.errorf(key+".timeout", "%w %q; write a Go duration from 1ms to 24h, such as \"60s\" (one request's bound, the whole stream included)", ErrBadDuration, *t.Timeout)
		} else {
			p.Caps.Timeout = d
		}
	}
	return p
}

func (c *compiler) poolInt(path string, v *int64, lo, hi int64, meaning string, set func(int64)) {
	switch {
	case v == nil:
	case *v < lo || *v > hi:
		c.errorf(path, "%w: %d; valid: %d to %d (%s)", ErrOutOfRange, *v, lo, hi, meaning)
	default:
		set(*v)
	}
}

func (c *compiler) poolWait(path string, raw *string, meaning string, to *time.Duration) {
	if raw == nil {
		return
	}
	d, err := time.ParseDuration(*raw)
	switch {
	case err != nil:
		c.errorf(path, "%w %q; write a Go duration such as \"1s\" or \"2m\" (%s)", ErrBadDuration, *raw, meaning)
	case d < 0 || d > maxPoolWait:
		c.errorf(path, "%w: %q; valid: 0s to 24h (%s)", ErrOutOfRange, *raw, meaning)
	default:
		*to = d
	}
}

// validPoolName reports whether name may name a pool: ^[a-z][a-z0-9_-]{0,31}$.
func validPoolName(name string) bool {
	if name == "" || len(name) > 32 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		if ch := name[i]; !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			return false
		}
	}
	return true
}
