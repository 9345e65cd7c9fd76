package hostconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/models"
)

func TestPoolsEveryKey(t *testing.T) {
	cfg, errs := compileSrc(t, `[[inference_pools]]
name = "openai"
endpoint = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
models = ["gpt-4o-mini", "gpt-4o"]
max_concurrency = 16
requests_per_minute = 500
tokens_per_minute = 200000
fallback = "local"
retry = { max_attempts = 5, initial_backoff = "500ms", max_backoff = "1m", multiplier = 3 }
breaker = { failures = 10, cooldown = "1m" }
prices = { input = 0.15, output = 0.6, cache_read = 0.075, cache_write = 0.1875 }
max_response_bytes = 4194304
max_tool_calls = 32
timeout = "90s"

[[inference_pools]]
name = "local"
endpoint = "http://127.0.0.1:11434/v1"
`, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := []inference.Config{{
		Name: "openai", Endpoint: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY", Models: []string{"gpt-4o-mini", "gpt-4o"},
		MaxConcurrency: 16, RequestsPerMinute: 500, TokensPerMinute: 200000, Fallback: "local",
		Retry:   inference.Retry{MaxAttempts: 5, Initial: 500 * time.Millisecond, Max: time.Minute, Multiplier: 3},
		Breaker: inference.Breaker{Failures: 10, Cooldown: time.Minute},
		Prices:  inference.Prices{Input: 0.15, Output: 0.6, CacheRead: 0.075, CacheWrite: 0.1875},
		Caps:    models.Caps{ResponseBytes: 4 << 20, ToolCalls: 32, Timeout: 90 * time.Second},
	}, {
		Name: "local", Endpoint: "http://127.0.0.1:11434/v1", MaxConcurrency: inference.DefaultMaxConcurrency,
		Retry: inference.DefaultRetry, Breaker: inference.DefaultBreaker,
	}}
	if !reflect.DeepEqual(cfg.Pools, want) {
		t.Fatalf("pools\n%+v\nwant\n%+v", cfg.Pools, want)
	}
}

func TestPoolErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string
		is   error
	}{
		{"no name", "[[inference_pools]]\nmax_concurrency = 2\n", []string{"host.toml:1", "inference_pools[0].name", "missing required key"}, ErrMissingKey},
		{"bad name", "[[inference_pools]]\nname = \"Big Pool\"\n", []string{"host.toml:2", "invalid pool name \"Big Pool\"", "such as \"openai\""}, ErrBadPoolName},
		{"duplicate", "[[inference_pools]]\nname = \"a\"\n[[inference_pools]]\nname = \"a\"\n", []string{"host.toml:4", "already declared by inference_pools[0] at line 1"}, ErrDuplicatePool},
		{"model twice", "[[inference_pools]]\nname = \"a\"\nmodels = [\"m\"]\n[[inference_pools]]\nname = \"b\"\nmodels = [\"m\"]\n", []string{"host.toml:6", "inference_pools[1].models[0]", "already served by inference_pools[0]"}, ErrDuplicatePool},
		{"unknown fallback", "[[inference_pools]]\nname = \"a\"\nfallback = \"z\"\n", []string{"host.toml:3", "no pool is named \"z\"; valid: a"}, ErrBadFallback},
		{"own fallback", "[[inference_pools]]\nname = \"a\"\nfallback = \"a\"\n", []string{"host.toml:3", "its own fallback"}, ErrBadFallback},
		{"fallback loop", "[[inference_pools]]\nname = \"a\"\nfallback = \"b\"\n[[inference_pools]]\nname = \"b\"\nfallback = \"a\"\n", []string{"host.toml:3", "loop back"}, ErrBadFallback},
		{"concurrency", "[[inference_pools]]\nname = \"a\"\nmax_concurrency = 0\n", []string{"host.toml:3", "inference_pools[0].max_concurrency", "valid: 1 to 100000"}, ErrOutOfRange},
		{"duration", "[[inference_pools]]\nname = \"a\"\nretry = { initial_backoff = \"soon\" }\n", []string{"host.toml:3", "retry.initial_backoff", "Go duration"}, ErrBadDuration},
		{"backoff order", "[[inference_pools]]\nname = \"a\"\nretry = { initial_backoff = \"10s\", max_backoff = \"1s\" }\n", []string{"retry.max_backoff", "shorter than initial_backoff"}, ErrOutOfRange},
		{"price", "[[inference_pools]]\nname = \"a\"\nprices = { input = -1.0 }\n", []string{"prices.input", "US dollars per million tokens"}, ErrOutOfRange},
		{"response bytes", "[[inference_pools]]\nname = \"a\"\nmax_response_bytes = 12\n", []string{"host.toml:3", "inference_pools[0].max_response_bytes", "valid: 1024 to 1073741824"}, ErrOutOfRange},
		{"tool calls", "[[inference_pools]]\nname = \"a\"\nmax_tool_calls = 0\n", []string{"inference_pools[0].max_tool_calls", "valid: 1 to 100000 (tool calls of one answer)"}, ErrOutOfRange},
		{"timeout", "[[inference_pools]]\nname = \"a\"\ntimeout = \"0s\"\n", []string{"inference_pools[0].timeout", "from 1ms to 24h"}, ErrBadDuration},
		{"endpoint", "[[inference_pools]]\nname = \"a\"\nendpoint = \"localhost:8080\"\n", []string{"host.toml:3", "inference_pools[0].endpoint"}, ErrBadURL},
		{"key env", "[[inference_pools]]\nname = \"a\"\napi_key_env = \"MY KEY\"\n", []string{"host.toml:3", "api_key_env"}, ErrBadEnvName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := compileSrc(t, tc.src, nil)
			if len(errs) == 0 {
				t.Fatal("no error")
			}
			msg := errs.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if !errors.Is(errs.Err(), tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", errs, tc.is)
			}
		})
	}
}

func TestPoolUnknownKey(t *testing.T) {
	path := writeConfig(t, "[[inference_pools]]\nname = \"a\"\nmax_conncurrency = 4\n")
	_, err := Load(path, knownTools)
	if err == nil || !strings.Contains(err.Error(), "max_conncurrency") || !strings.Contains(err.Error(), "max_concurrency") {
		t.Fatalf("err = %v, want the unknown key and the valid ones", err)
	}
}
