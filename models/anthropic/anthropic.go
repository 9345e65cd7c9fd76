// Package anthropic is the "anthropic" model kind: a live model reached over the Anthropic
// Messages API through the official SDK (github.com/anthropics/anthropic-sdk-go, major version
// 2, which speaks API version 2026-10-21). With base_url the same kind serves any server that
// speaks the Messages API.
//
// The key comes from the environment variable the table names (api_key_env), read when the
// scenario loads (and when a pool points the model elsewhere, Via); the SDK sends it, and it is
// never written to a trace, a recording, a log or an error. The SDK reads nothing else from the
// environment (no ANTHROPIC_AUTH_TOKEN, profile or custom headers: the table says everything a
// request carries), its own retries are off (retrying is the host's to decide and show), and its
// OpenTelemetry spans are off (the trace is the host's).
//
// Prompt caching (cache = true, the default) puts cache_control breakpoints on the stable prefix
// of every request, the last tool definition and the last system block, and on the last block
// of the conversation, so each turn reads the prefix the previous turn wrote: three of the four
// breakpoints the API allows.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/warrenhq/warren/models"
)

func init() {
	models.RegisterKind(models.Kind{
		ID:      models.KindNamespace + "anthropic",
		Summary: "a live model over the Anthropic Messages API (Claude, or a compatible server: base_url), with prompt caching",
		New:     func() models.KindConfig { return new(Config) },
	})
}

// DefaultBaseURL is where requests go when neither base_url nor ANTHROPIC_BASE_URL says
// otherwise. The SDK adds /v1/messages.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultKeyEnv names the environment variable the key is read from when api_key_env is unset.
const DefaultKeyEnv = "ANTHROPIC_API_KEY"

// DefaultTimeout bounds one request when the table sets no timeout.
const DefaultTimeout = 60 * time.Second

// DefaultMaxTokens caps an answer when the table sets no max_tokens: the Messages API requires a
// cap on every request.
const DefaultMaxTokens = 1024

// SystemPrefix begins the text of a system message met inside the conversation, which the
// Messages API takes as user text: its system prompt is one field before the conversation.
const SystemPrefix = "[system] "

// Config is an anthropic model's table: [models.<key>] with kind = "anthropic".
type Config struct {
	// Model is the provider's model name ("claude-sonnet-5-5"). Required.
	Model string `toml:"model"`
	// BaseURL is the API's base URL, without /v1 (default: $ANTHROPIC_BASE_URL, else
	// DefaultBaseURL).
	BaseURL string `toml:"base_url"`
	// APIKeyEnv names the environment variable holding the key (default DefaultKeyEnv). A local
	// server that needs no key may leave the variable unset.
	APIKeyEnv string `toml:"api_key_env"`
	// SystemPrompt is the first block of the request's system prompt, before the host's.
	SystemPrompt string `toml:"system_prompt"`
	// MaxTokens caps an answer's tokens (default DefaultMaxTokens); it must be positive.
	MaxTokens *int64 `toml:"max_tokens"`
	// Temperature is rejected: API version 2026-10-21, which the SDK speaks, refuses sampling
	// parameters (even at their defaults). The key exists to say so instead of "unknown key".
	Temperature *float64 `toml:"temperature"`
	// Stop is the request's stop sequences.
	Stop []string `toml:"stop"`
	// Stream asks for the answer as server-sent events (assembled before the turn ends).
	Stream bool `toml:"stream"`
	// Timeout bounds one request, the whole stream included, as a Go duration (default
	// DefaultTimeout).
	Timeout string `toml:"timeout"`
	// MaxResponseBytes caps one response body's bytes, streamed or not, and MaxToolCalls one
	// answer's tool calls (0: models.DefaultResponseBytes, models.DefaultToolCalls).
	MaxResponseBytes int64 `toml:"max_response_bytes"`
	MaxToolCalls     int64 `toml:"max_tool_calls"`
	// ContextTokens is the model's context window in tokens (0: unknown, the conversation is
	// never cut for it).
	ContextTokens int64 `toml:"context_tokens"`
	// ContextOverflow is what a conversation that outgrows ContextTokens does:
	// models.ContextDropOldest (the default) or models.ContextFail.
	ContextOverflow string `toml:"context_overflow"`
	// Cache puts prompt-cache breakpoints on the stable prefix and the conversation (default
	// true); see the package doc.
	Cache *bool `toml:"cache"`
}

var _ models.KindConfig = (*Config)(nil)

// checkBaseURL says what is wrong with base as a Messages API base URL: not http(s), or ending in
// /v1, which the SDK adds itself (a base URL copied from an OpenAI table would ask for
// /v1/v1/messages).
func checkBaseURL(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: give an http or https URL, e.g. \"http://127.0.0.1:8089\"", base)
	}
	if p := strings.TrimSuffix(u.Path, "/"); p == "/v1" || strings.HasSuffix(p, "/v1") {
		return fmt.Errorf("%q ends in /v1, which the SDK adds itself (it asks for /v1/messages): give %q", base, strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/v1"))
	}
	return nil
}

// Compile checks the table and builds the model.
func (c *Config) Compile(env *models.KindEnv) (models.Model, error) {
	var problems models.KeyErrors
	bad := func(key string, err error) { problems = append(problems, &models.KeyError{Key: key, Err: err}) }
	if strings.TrimSpace(c.Model) == "" {
		bad("model", errors.New("missing: name the provider's model, e.g. model = \"claude-sonnet-5-5\""))
	}
	base := models.LiveBaseURL(c.BaseURL, "ANTHROPIC_BASE_URL", DefaultBaseURL)
	if err := checkBaseURL(base); err != nil {
		bad("base_url", err)
	}
	timeout, problem := models.LiveTimeout(c.Timeout, DefaultTimeout)
	if problem != nil {
		problems = append(problems, problem)
	}
	maxTokens := int64(DefaultMaxTokens)
	if c.MaxTokens != nil {
		if *c.MaxTokens <= 0 {
			bad("max_tokens", fmt.Errorf("%d: the Messages API needs a positive cap on an answer's tokens (default %d)", *c.MaxTokens, DefaultMaxTokens))
		}
		maxTokens = *c.MaxTokens
	}
	if c.Temperature != nil {
		bad("temperature", errors.New("the Messages API (version 2026-10-21, which this host's SDK speaks) refuses sampling parameters, even at their defaults: remove the key"))
	}
	for i, s := range c.Stop {
		if strings.TrimSpace(s) == "" {
			bad(fmt.Sprintf("stop[%d]", i), errors.New("a stop sequence must have a character other than white space"))
		}
	}
	problems = append(problems, models.ContextProblems(c.ContextTokens, c.ContextOverflow)...)
	problems = append(problems, models.CapsProblems(c.MaxResponseBytes, c.MaxToolCalls)...)
	if len(problems) > 0 {
		return nil, problems
	}
	keyEnv := c.APIKeyEnv
	if keyEnv == "" {
		keyEnv = DefaultKeyEnv
	}
	m := &Model{id: env.ID, cfg: *c, keyEnv: keyEnv, keyNamed: c.APIKeyEnv != "", getenv: env.Getenv, maxTokens: maxTokens,
		cache: c.Cache == nil || *c.Cache, schemas: &models.SchemaCache{},
		caps: models.Caps{ResponseBytes: c.MaxResponseBytes, ToolCalls: c.MaxToolCalls, Timeout: timeout}}
	m.cfg.BaseURL = base
	m.httpClient = env.HTTPClient
	m.client = newClient(base, env.Getenv(keyEnv), m.caps, m.httpClient)
	return m, nil
}

// newClient is an SDK client for base with the key (none: a local server that asks for none),
// reading nothing from the environment, its retries and spans off, each request bounded by
// caps' timeout and every response read through its byte cap.
func newClient(base, key string, caps models.Caps, hc *http.Client) sdk.Client {
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithBaseURL(base), option.WithMaxRetries(0),
		option.WithRequestTimeout(caps.Timeout), option.WithoutOpenTelemetry(), option.WithOpenTelemetryPropagation(false),
		option.WithMiddleware(models.CapResponses(caps.Bytes()))}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return sdk.NewClient(opts...)
}

// Model is a compiled anthropic model, shared by every agent that names it (the SDK client is
// safe for concurrent use).
type Model struct {
	id       string
	cfg      Config
	keyEnv   string
	keyNamed bool
	// getenv reads keyEnv where the scenario was loaded to (models.KindEnv.Getenv), for Via too.
	getenv func(string) string
	// httpClient carries its requests (models.KindEnv.HTTPClient; nil: the SDK's default).
	httpClient *http.Client
	maxTokens  int64
	cache      bool
	// caps are the table's, tightened by the pool's (Via); caps.Timeout is always set.
	caps   models.Caps
	client sdk.Client
	// schemas holds the stage tools' decoded schemas (shared with the models Via makes).
	schemas *models.SchemaCache
}

var (
	_ models.Model = (*Model)(nil)
	_ models.Live  = (*Model)(nil)
)

// ID implements models.Model.
func (m *Model) ID() string { return m.id }

// Live implements models.Live: the answers come from the provider.
func (*Model) Live() bool { return true }

// Spec implements models.Live.
func (m *Model) Spec() models.LiveSpec {
	return models.LiveSpec{Provider: "anthropic", Model: m.cfg.Model, BaseURL: m.cfg.BaseURL, KeyEnv: m.keyEnv, KeyNamed: m.keyNamed, MaxTokens: m.maxTokens,
		ContextTokens: m.cfg.ContextTokens, ContextOverflow: m.cfg.ContextOverflow}
}

// Via implements models.Live: the same model asking ep, with a new client (and the key of ep's
// variable, read now).
func (m *Model) Via(ep models.Endpoint) (models.Live, error) {
	n := *m
	if ep.BaseURL != "" {
		if err := checkBaseURL(ep.BaseURL); err != nil {
			return nil, fmt.Errorf("anthropic: base URL %w", err)
		}
		n.cfg.BaseURL = ep.BaseURL
	}
	if ep.Model != "" {
		n.cfg.Model = ep.Model
	}
	if ep.APIKeyEnv != "" {
		n.keyEnv, n.keyNamed = ep.APIKeyEnv, true
	}
	n.caps = m.caps.Tighter(ep.Caps)
	n.client = newClient(n.cfg.BaseURL, n.getenv(n.keyEnv), n.caps, n.httpClient)
	return &n, nil
}

// Request implements models.Live: the Messages body a turn with v sends, byte for byte (Turn
// sends these bytes), as canonical JSON (object keys sorted, no white space; "stream": true when
// the answer is streamed), so that the same request is the same bytes whatever spacing and key
// order the provider wrote the conversation's tool inputs in.
func (m *Model) Request(v *models.View) ([]byte, error) {
	p, err := m.params(v)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers stay as written
	var body map[string]any
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	if m.cfg.Stream {
		body["stream"] = true // what NewStreaming adds to the body
	}
	return json.Marshal(body)
}

// Turn implements models.Model: one Messages request from the conversation and the stage's
// tools, its answer as the turn's text and calls.
func (m *Model) Turn(ctx context.Context, _ *models.State, v *models.View) (models.Reply, error) {
	body, err := m.Request(v)
	if err != nil {
		return models.Reply{}, err
	}
	// The SDK sends body as it is, in place of what it would encode from params (which keep only
	// what the SDK reads besides: the model and max_tokens, for its non-streaming timeout check):
	// the request a recording hashes is the one sent.
	params := sdk.MessageNewParams{Model: sdk.Model(m.cfg.Model), MaxTokens: m.maxTokens}
	send := option.WithRequestBody("application/json", body)
	var msg *sdk.Message
	maxCalls := m.caps.Calls()
	if m.cfg.Stream {
		stream := m.client.Messages.NewStreaming(ctx, params, send)
		defer stream.Close()
		acc, stopped, calls := sdk.Message{}, false, int64(0)
		for stream.Next() {
			ev := stream.Current()
			if err := acc.Accumulate(ev); err != nil {
				return models.Reply{}, &models.ProviderError{Provider: "anthropic", Message: "the stream is garbled: " + err.Error()}
			}
			stopped = stopped || ev.Type == "message_stop"
			if ev.Type == "content_block_start" && ev.ContentBlock.Type == "tool_use" {
				if calls++; calls > maxCalls {
					return models.Reply{}, models.CapFailure("anthropic", &models.CapError{Key: "max_tool_calls", Limit: maxCalls, Status: http.StatusOK})
				}
			}
		}
		if err := stream.Err(); err != nil {
			return models.Reply{}, requestError(err)
		}
		if !stopped {
			return models.Reply{}, &models.ProviderError{Provider: "anthropic", Message: "the stream ended before the answer did"}
		}
		msg = &acc
	} else {
		msg, err = m.client.Messages.New(ctx, params, send)
		if err != nil {
			return models.Reply{}, requestError(err)
		}
		calls := int64(0)
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				calls++
			}
		}
		if calls > maxCalls {
			return models.Reply{}, models.CapFailure("anthropic", &models.CapError{Key: "max_tool_calls", Limit: maxCalls, Calls: calls, Status: http.StatusOK})
		}
	}
	u := msg.Usage
	reply := models.Reply{Usage: models.Usage{
		Prompt:     u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		Completion: u.OutputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens}}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := slices.Clone(b.Input) // the SDK's values point into the whole response body
			if !isObject(args) {
				args = json.RawMessage("{}") // the gate's schema check reports a call a model garbled
			}
			reply.Calls = append(reply.Calls, models.ToolCall{ID: strings.Clone(b.ID), Name: strings.Clone(b.Name), Args: args})
		}
	}
	reply.Text = text.String()
	return reply, nil
}

// isObject reports whether raw is a JSON object in UTF-8, as a tool_use input must be (a
// recording keeps it as text, which must be UTF-8 to come back the same).
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && utf8.Valid(raw) && json.Valid(raw)
}

// turn is one message of the request being built: a role and its blocks.
type turn struct {
	user   bool
	blocks []sdk.ContentBlockParamUnion
}

// params builds the request of a turn: the system prompt (the table's, then the host's), the
// conversation with adjacent messages of one role merged (the API wants user and assistant to
// alternate, and a turn's tool results in the one user message after its calls), the tools in
// the view's order, and the cache breakpoints.
func (m *Model) params(v *models.View) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.cfg.Model), MaxTokens: m.maxTokens, StopSequences: m.cfg.Stop}
	for _, s := range []string{m.cfg.SystemPrompt, v.System} {
		if s != "" {
			p.System = append(p.System, sdk.TextBlockParam{Text: s})
		}
	}
	var turns []turn
	add := func(user bool, b sdk.ContentBlockParamUnion) {
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, b)
			return
		}
		turns = append(turns, turn{user: user, blocks: []sdk.ContentBlockParamUnion{b}})
	}
	for _, msg := range v.Messages {
		switch msg.Role {
		case models.RoleSystem:
			add(true, sdk.NewTextBlock(SystemPrefix+msg.Content))
		case models.RoleUser:
			if msg.Content != "" { // the API refuses an empty text block
				add(true, sdk.NewTextBlock(msg.Content))
			}
		case models.RoleTool:
			r := sdk.ToolResultBlockParam{ToolUseID: msg.CallID}
			if msg.Content != "" {
				r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: msg.Content}}}
			}
			if msg.IsError {
				r.IsError = sdk.Bool(true)
			}
			add(true, sdk.ContentBlockParamUnion{OfToolResult: &r})
		case models.RoleAssistant:
			if msg.Content != "" {
				add(false, sdk.NewTextBlock(msg.Content))
			}
			for _, c := range msg.Calls {
				args := c.Args
				if !isObject(args) {
					args = json.RawMessage("{}")
				}
				add(false, sdk.NewToolUseBlock(c.ID, args, c.Name))
			}
		}
	}
	for _, t := range turns {
		if t.user {
			p.Messages = append(p.Messages, sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: t.blocks}})
		} else {
			p.Messages = append(p.Messages, sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: t.blocks}})
		}
	}
	for _, t := range v.Tools { // sorted by name: a stable prefix for the prompt cache
		tool := sdk.ToolParam{Name: t.Name}
		if t.Description != "" {
			tool.Description = sdk.String(t.Description)
		}
		var err error
		if tool.InputSchema, err = inputSchema(m.schemas, t.Parameters); err != nil {
			return p, fmt.Errorf("anthropic: tool %s: its parameters are not a JSON object: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	if m.cache {
		markCache(&p)
	}
	return p, nil
}

// inputSchema is a tool's JSON schema as the API's input_schema: properties and required in
// their fields, every other keyword (additionalProperties, $defs, ...) as it is. The type is
// always object, and properties are always sent (empty for a tool without arguments): the API
// requires an input_schema, and the SDK leaves out one that is all zero.
func inputSchema(cache *models.SchemaCache, raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	s := sdk.ToolInputSchemaParam{Properties: map[string]any{}}
	if len(bytes.TrimSpace(raw)) == 0 {
		return s, nil
	}
	schema, err := cache.Decode(raw) // shared and read-only: only its values are placed below
	if err != nil {
		return s, err
	}
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			if v != nil {
				s.Properties = v
			}
		case "required":
			list, _ := v.([]any)
			for _, r := range list {
				if name, ok := r.(string); ok {
					s.Required = append(s.Required, name)
				}
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

// markCache puts the cache breakpoints on p: the last tool (the tools are the prompt's first
// part, stable while the stage is), the last system block (the tools and the system prompt
// together), and the last block of the last message (the whole conversation, which the next
// turn extends, so it reads this prefix back). Three of the four breakpoints the API allows;
// Anthropic caches the longest marked prefix it has seen, so each turn's request both reads
// the previous turn's and writes its own.
func markCache(p *sdk.MessageNewParams) {
	eph := sdk.NewCacheControlEphemeralParam()
	if n := len(p.Tools); n > 0 {
		p.Tools[n-1].OfTool.CacheControl = eph
	}
	if n := len(p.System); n > 0 {
		p.System[n-1].CacheControl = eph
	}
	if n := len(p.Messages); n > 0 {
		var blocks []sdk.ContentBlockParamUnion
		if u := p.Messages[n-1].OfUser; u != nil {
			blocks = u.Content
		} else {
			blocks = p.Messages[n-1].OfAssistant.Content
		}
		if k := len(blocks); k > 0 {
			switch b := blocks[k-1]; {
			case b.OfText != nil:
				b.OfText.CacheControl = eph
			case b.OfToolUse != nil:
				b.OfToolUse.CacheControl = eph
			case b.OfToolResult != nil:
				b.OfToolResult.CacheControl = eph
			}
		}
	}
}

// streamStatus is the HTTP status an error event inside a stream stands for (the stream's own
// status is 200, sent before the failure): what the host's retry policy decides on.
var streamStatus = map[sdk.ErrorType]int{
	sdk.ErrorTypeInvalidRequestError: 400, sdk.ErrorTypeAuthenticationError: 401, sdk.ErrorTypePermissionError: 403,
	sdk.ErrorTypeNotFoundError: 404, sdk.ErrorTypeRateLimitError: 429, sdk.ErrorTypeAPIError: 500,
	sdk.ErrorTypeTimeoutError: 504, sdk.ErrorTypeOverloadedError: 529,
}

// requestError says why a request failed, with the provider's status, message and Retry-After,
// and never the request's headers (the key).
func requestError(err error) error {
	var capped *models.CapError
	if errors.As(err, &capped) {
		return models.CapFailure("anthropic", capped)
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		status := apiErr.StatusCode
		if status == 200 { // an error event after the stream began
			status = streamStatus[apiErr.Type()]
			msg += " (in the stream)"
		}
		pe := &models.ProviderError{Provider: "anthropic", Status: status, Message: msg}
		if apiErr.Response != nil {
			pe.RetryAfter = models.ParseRetryAfter(apiErr.Response.Header)
		}
		return pe
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &models.ProviderError{Provider: "anthropic", Timeout: true, Message: "no answer in time"}
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("anthropic: %w", err)
	}
	return &models.ProviderError{Provider: "anthropic", Message: err.Error()}
}
