// Package openai is the "openai" model kind: a live model reached over the OpenAI Chat
// Completions wire format through the official SDK (github.com/openai/openai-go). With base_url
// the same kind serves OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio and OpenRouter.
//
// The key comes from the environment variable the table names (api_key_env), read when the
// scenario loads; it is sent as a bearer token and never written to a trace, a recording or a log.
// The SDK's own retries are off: retrying is the host's to decide and show.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/warrenhq/warren/models"
)

func init() {
	models.RegisterKind(models.Kind{
		ID:      models.KindNamespace + "openai",
		Summary: "a live model over the OpenAI Chat Completions API (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter: base_url)",
		New:     func() models.KindConfig { return new(Config) },
	})
}

// DefaultBaseURL is where requests go when neither base_url nor OPENAI_BASE_URL says otherwise.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultTimeout bounds one request when the table sets no timeout.
const DefaultTimeout = 60 * time.Second

// Config is an openai model's table: [models.<key>] with kind = "openai".
type Config struct {
	// Model is the provider's model name ("gpt-4o-mini", "llama3.2"). Required.
	Model string `toml:"model"`
	// BaseURL is the API's base URL (default: $OPENAI_BASE_URL, else DefaultBaseURL).
	BaseURL string `toml:"base_url"`
	// APIKeyEnv names the environment variable holding the key (default OPENAI_API_KEY). A local
	// server that needs no key may leave the variable unset.
	APIKeyEnv string `toml:"api_key_env"`
	// SystemPrompt is the conversation's first message.
	SystemPrompt string `toml:"system_prompt"`
	// MaxTokens, Temperature, Seed and Stop are the request's, when set.
	MaxTokens   int64    `toml:"max_tokens"`
	Temperature *float64 `toml:"temperature"`
	Seed        *int64   `toml:"seed"`
	Stop        []string `toml:"stop"`
	// Stream asks for the answer as a stream of chunks (assembled before the turn ends).
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
	// ResponseFormat asks for "text" (the default) or "json_object" answers; ResponseSchema names
	// a JSON schema file the answer must follow (a "json_schema" response format).
	ResponseFormat string `toml:"response_format"`
	ResponseSchema string `toml:"response_schema"`
}

var _ models.KindConfig = (*Config)(nil)

// Compile checks the table and builds the model.
func (c *Config) Compile(env *models.KindEnv) (models.Model, error) {
	var problems models.KeyErrors
	if strings.TrimSpace(c.Model) == "" {
		problems = append(problems, &models.KeyError{Key: "model", Err: errors.New("missing: name the provider's model, e.g. model = \"gpt-4o-mini\"")})
	}
	base := models.LiveBaseURL(c.BaseURL, "OPENAI_BASE_URL", DefaultBaseURL)
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems = append(problems, &models.KeyError{Key: "base_url", Err: fmt.Errorf("%q: give an http or https URL, e.g. \"http://localhost:11434/v1\"", base)})
	}
	keyEnv := c.APIKeyEnv
	if keyEnv == "" {
		keyEnv = "OPENAI_API_KEY"
	}
	timeout, bad := models.LiveTimeout(c.Timeout, DefaultTimeout)
	if bad != nil {
		problems = append(problems, bad)
	}
	if c.MaxTokens < 0 {
		problems = append(problems, &models.KeyError{Key: "max_tokens", Err: fmt.Errorf("%d: give a positive number of tokens", c.MaxTokens)})
	}
	if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 2) {
		problems = append(problems, &models.KeyError{Key: "temperature", Err: fmt.Errorf("%v: a temperature is from 0 to 2", *c.Temperature)})
	}
	problems = append(problems, models.ContextProblems(c.ContextTokens, c.ContextOverflow)...)
	problems = append(problems, models.CapsProblems(c.MaxResponseBytes, c.MaxToolCalls)...)
	var schema map[string]any
	switch c.ResponseFormat {
	case "", "text", "json_object":
		if c.ResponseSchema != "" && c.ResponseFormat != "" {
			problems = append(problems, &models.KeyError{Key: "response_format", Err: fmt.Errorf("%q with response_schema: leave response_format out, a schema means json_schema", c.ResponseFormat)})
		}
	default:
		problems = append(problems, &models.KeyError{Key: "response_format", Err: fmt.Errorf("%q: valid formats are text, json_object (or response_schema for a JSON schema)", c.ResponseFormat)})
	}
	if c.ResponseSchema != "" {
		_, data, err := env.ReadFile(c.ResponseSchema)
		if err == nil {
			err = json.Unmarshal(data, &schema)
			if env.Hash != nil {
				_, _ = env.Hash.Write(data)
			}
		}
		if err != nil {
			problems = append(problems, &models.KeyError{Key: "response_schema", Err: fmt.Errorf("%q: %w", c.ResponseSchema, err)})
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	m := &Model{id: env.ID, cfg: *c, keyEnv: keyEnv, keyNamed: c.APIKeyEnv != "", getenv: env.Getenv, schema: schema, schemas: &models.SchemaCache{},
		caps: models.Caps{ResponseBytes: c.MaxResponseBytes, ToolCalls: c.MaxToolCalls, Timeout: timeout}}
	m.cfg.BaseURL = base
	m.httpClient = env.HTTPClient
	m.client = newClient(base, env.Getenv(keyEnv), m.caps, m.httpClient)
	return m, nil
}

// newClient is an SDK client for base with the key (none: a local server that asks for none),
// its own retries off, each request bounded by caps' timeout and every response read through
// its byte cap.
func newClient(base, key string, caps models.Caps, hc *http.Client) sdk.Client {
	if key == "" {
		key = "none" // the SDK insists on one; a local server ignores it
	}
	// Not sdk.NewClient: it adds what the process environment holds of OPENAI_ORG_ID,
	// OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS to every request, wherever base_url points, and
	// a model sends nothing from the environment but its own key. Only Chat is used.
	opts := []option.RequestOption{option.WithBaseURL(base), option.WithMaxRetries(0), option.WithRequestTimeout(caps.Timeout), option.WithAPIKey(key),
		option.WithMiddleware(models.CapResponses(caps.Bytes()))}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return sdk.Client{Options: opts, Chat: sdk.NewChatService(opts...)}
}

// Model is a compiled openai model, shared by every agent that names it (the SDK client is safe
// for concurrent use).
type Model struct {
	id  string
	cfg Config
	// keyEnv is the variable the key comes from (api_key_env, or OPENAI_API_KEY); getenv reads
	// it where the scenario was loaded to (models.KindEnv.Getenv), for Via too.
	keyEnv   string
	keyNamed bool
	getenv   func(string) string
	// httpClient carries its requests (models.KindEnv.HTTPClient; nil: the SDK's default).
	httpClient *http.Client
	schema     map[string]any
	// caps are the table's, tightened by the pool's (Via); caps.Timeout is always set.
	caps   models.Caps
	client sdk.Client
	// schemas holds the stage tools' decoded schemas (shared with the models Via makes).
	schemas *models.SchemaCache
}

// Spec implements models.Live.
func (m *Model) Spec() models.LiveSpec {
	return models.LiveSpec{Provider: "openai", Model: m.cfg.Model, BaseURL: m.cfg.BaseURL, KeyEnv: m.keyEnv, KeyNamed: m.keyNamed, MaxTokens: m.cfg.MaxTokens,
		ContextTokens: m.cfg.ContextTokens, ContextOverflow: m.cfg.ContextOverflow}
}

// Via implements models.Live: the same model asking ep.
func (m *Model) Via(ep models.Endpoint) (models.Live, error) {
	n := *m
	if ep.BaseURL != "" {
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

var (
	_ models.Model         = (*Model)(nil)
	_ models.Live          = (*Model)(nil)
	_ models.LegacyRequest = (*Model)(nil)
)

// Live implements models.Live: the answers come from the provider.
func (*Model) Live() bool { return true }

// streamKey ends the body of a streamed request: what the SDK's NewStreaming sets
// (option.WithJSONSet("stream", true)) and where, so that its setting it again changes no byte.
const streamKey = `,"stream":true}`

// Request implements models.Live: the Chat Completions body a turn with v sends, byte for byte
// (Turn sends these bytes).
func (m *Model) Request(v *models.View) ([]byte, error) {
	p, err := m.params(v)
	if err != nil {
		return nil, err
	}
	if m.cfg.Stream {
		p.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	if m.cfg.Stream && len(body) > 0 && body[len(body)-1] == '}' {
		body = append(body[:len(body)-1], streamKey...)
	}
	return body, nil
}

// RecordedAs implements models.LegacyRequest: a recording of version 1 hashed a streamed request
// without its "stream" key, which the SDK added as it sent it.
func (m *Model) RecordedAs(version int, body []byte) []byte {
	if version < 2 && m.cfg.Stream && bytes.HasSuffix(body, []byte(streamKey)) {
		return append(bytes.Clone(body[:len(body)-len(streamKey)]), '}')
	}
	return body
}

// ID implements models.Model.
func (m *Model) ID() string { return m.id }

// Turn implements models.Model: one chat completion request from the conversation and the
// stage's tools, its answer as the turn's text and calls.
func (m *Model) Turn(ctx context.Context, _ *models.State, v *models.View) (models.Reply, error) {
	body, err := m.Request(v)
	if err != nil {
		return models.Reply{}, err
	}
	// The SDK sends body as it is, in place of what it would encode from the (empty) params: the
	// request a recording hashes is the one sent.
	send := option.WithRequestBody("application/json", body)
	var msg sdk.ChatCompletionMessage
	var usage sdk.CompletionUsage
	maxCalls := m.caps.Calls()
	if m.cfg.Stream {
		stream := m.client.Chat.Completions.NewStreaming(ctx, sdk.ChatCompletionNewParams{}, send)
		defer stream.Close()
		var acc sdk.ChatCompletionAccumulator
		for stream.Next() {
			// A chunk the accumulator refuses (another answer's id, an index past its bounds) is
			// passed over; those bounds keep a hostile index from allocating.
			acc.AddChunk(stream.Current())
			if len(acc.Choices) > 0 && int64(len(acc.Choices[0].Message.ToolCalls)) > maxCalls {
				return models.Reply{}, models.CapFailure("openai", &models.CapError{Key: "max_tool_calls", Limit: maxCalls, Status: http.StatusOK})
			}
		}
		if err := stream.Err(); err != nil {
			return models.Reply{}, requestError(err)
		}
		if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
			return models.Reply{}, &models.ProviderError{Provider: "openai", Message: "the stream ended before the answer did"}
		}
		msg, usage = acc.Choices[0].Message, acc.Usage
	} else {
		got, err := m.client.Chat.Completions.New(ctx, sdk.ChatCompletionNewParams{}, send)
		if err != nil {
			return models.Reply{}, requestError(err)
		}
		if len(got.Choices) == 0 {
			return models.Reply{}, &models.ProviderError{Provider: "openai", Message: "the answer has no choices"}
		}
		msg, usage = got.Choices[0].Message, got.Usage
		if n := int64(len(msg.ToolCalls)); n > maxCalls {
			return models.Reply{}, models.CapFailure("openai", &models.CapError{Key: "max_tool_calls", Limit: maxCalls, Calls: n, Status: http.StatusOK})
		}
	}
	// The SDK's strings point into the whole response body: the conversation keeps copies, so an
	// agent's history does not pin every answer's raw JSON.
	reply := models.Reply{Text: strings.Clone(msg.Content), Usage: models.Usage{
		Prompt: usage.PromptTokens, Completion: usage.CompletionTokens, CacheRead: usage.PromptTokensDetails.CachedTokens}}
	for _, c := range msg.ToolCalls {
		args := json.RawMessage(c.Function.Arguments)
		if !json.Valid(args) {
			args = json.RawMessage("{}") // the gate's schema check reports a call a model garbled
		}
		reply.Calls = append(reply.Calls, models.ToolCall{ID: strings.Clone(c.ID), Name: strings.Clone(c.Function.Name), Args: args})
	}
	return reply, nil
}

// params builds the request of a turn.
func (m *Model) params(v *models.View) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{Model: shared.ChatModel(m.cfg.Model)}
	if m.cfg.SystemPrompt != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(m.cfg.SystemPrompt))
	}
	if v.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(v.System))
	}
	for _, msg := range v.Messages {
		switch msg.Role {
		case models.RoleSystem:
			p.Messages = append(p.Messages, sdk.SystemMessage(msg.Content))
		case models.RoleUser:
			p.Messages = append(p.Messages, sdk.UserMessage(msg.Content))
		case models.RoleTool:
			p.Messages = append(p.Messages, sdk.ToolMessage(msg.Content, msg.CallID))
		case models.RoleAssistant:
			a := sdk.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" {
				a.Content.OfString = sdk.String(msg.Content)
			}
			for _, c := range msg.Calls {
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Args)}}})
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	for _, t := range v.Tools { // sorted by name: a stable prefix for the provider's prompt cache
		schema, err := m.schemas.Decode(t.Parameters)
		if err != nil {
			return p, fmt.Errorf("openai: tool %s: its parameters are not a JSON object: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: sdk.String(t.Description), Parameters: shared.FunctionParameters(schema)}))
	}
	if m.cfg.MaxTokens > 0 {
		p.MaxTokens = sdk.Int(m.cfg.MaxTokens)
	}
	if m.cfg.Temperature != nil {
		p.Temperature = sdk.Float(*m.cfg.Temperature)
	}
	if m.cfg.Seed != nil {
		p.Seed = sdk.Int(*m.cfg.Seed)
	}
	if len(m.cfg.Stop) > 0 {
		p.Stop = sdk.ChatCompletionNewParamsStopUnion{OfStringArray: m.cfg.Stop}
	}
	switch {
	case m.schema != nil:
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name: "answer", Schema: m.schema, Strict: sdk.Bool(true)}}
	case m.cfg.ResponseFormat == "json_object":
		p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	}
	return p, nil
}

// requestError says why a request failed, with the provider's status, message and Retry-After,
// and never the request's headers (the key).
func requestError(err error) error {
	var capped *models.CapError
	if errors.As(err, &capped) {
		return models.CapFailure("openai", capped)
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		pe := &models.ProviderError{Provider: "openai", Status: apiErr.StatusCode, Message: msg}
		if apiErr.Response != nil {
			pe.RetryAfter = models.ParseRetryAfter(apiErr.Response.Header)
		}
		return pe
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &models.ProviderError{Provider: "openai", Timeout: true, Message: "no answer in time"}
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("openai: %w", err)
	}
	return &models.ProviderError{Provider: "openai", Message: err.Error()}
}
