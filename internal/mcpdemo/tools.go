package mcpdemo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"
)

// Limits on tool arguments. They are declared in each tool's JSON Schema (so a client sees them)
// and enforced by mcp-go's input validation before a handler runs.
const (
	maxSlowMillis = 60_000
	maxBigBytes   = 16 << 20
)

// ExitCrash is the exit code of the crash tool, distinct from kong's usage error (exitUsage) and
// from a Go runtime panic (2), so fault tests can tell a deliberate crash from any other death.
const ExitCrash = 3

// GarbageLine is what the garbage tool puts on the wire in place of a JSON-RPC message. It is
// deliberately not JSON at all, so any parser rejects it.
const GarbageLine = "this is not JSON-RPC <<garbage>>\n"

// ErrNotFound is returned (as a tool error result) by kv_get for a key that was never set.
var ErrNotFound = errors.New("key not found")

// ErrNoGarbageChannel means the garbage tool ran without a transport hook to corrupt; it would
// only happen if a new transport were added without wiring one.
var ErrNoGarbageChannel = errors.New("transport cannot emit garbage")

// garbageKey is the context key under which each transport puts its garbageEmitter.
type garbageKey struct{}

// garbageEmitter corrupts the reply channel of the request whose context carries it: stdio
// writes a non-JSON line to stdout, HTTP replaces the response body.
type garbageEmitter func() error

// withGarbageEmitter returns ctx carrying emit for the garbage tool.
func withGarbageEmitter(ctx context.Context, emit garbageEmitter) context.Context {
	return context.WithValue(ctx, garbageKey{}, emit)
}

// kvStore is the key-value store shared by every client of one server process; a single mutex
// is enough because the values are small strings and the critical sections are map operations.
type kvStore struct {
	mu     sync.RWMutex
	values map[string]string
	// file, when set, keeps every set (openKVStore).
	file *os.File
}

// kvEntry is one pair in kv_list's answer.
type kvEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func newKVStore() *kvStore { return &kvStore{values: make(map[string]string)} }

// openKVStore is a store kept in the append-only file path (one JSON pair a line), so that it
// outlives the process: what a set wrote is on file before the call returns, and a torn last
// line (the process died mid-write) is dropped.
func openKVStore(path string) (*kvStore, error) {
	s := newKVStore()
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var e kvEntry
		if json.Unmarshal(line, &e) == nil {
			s.values[e.Key] = e.Value
		}
	}
	if s.file, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *kvStore) set(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		line, err := json.Marshal(kvEntry{Key: key, Value: value})
		if err != nil {
			return err
		}
		if _, err := s.file.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	s.values[key] = value
	return nil
}

func (s *kvStore) get(key string) (string, error) {
	s.mu.RLock()
	value, ok := s.values[key]
	s.mu.RUnlock()
	if !ok {
		return "", fmt.Errorf("%q: %w", key, ErrNotFound)
	}
	return value, nil
}

// list returns every pair sorted by key, so the answer never depends on map order.
func (s *kvStore) list() []kvEntry {
	s.mu.RLock()
	entries := make([]kvEntry, 0, len(s.values))
	for key, value := range s.values {
		entries = append(entries, kvEntry{Key: key, Value: value})
	}
	s.mu.RUnlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].Key < entries[j].Key })
	return entries
}

// toolSet holds the state the tools share and implements their handlers.
type toolSet struct {
	kv  *kvStore
	log zerolog.Logger
}

// newMCPServer builds the MCP server with every test tool registered. Input validation is on so
// the schema bounds (slow's ms, big's bytes, required keys) are enforced by mcp-go itself and a
// bad call comes back as a tool error result the model can read.
func newMCPServer(name, version string, kv *kvStore, log zerolog.Logger) *server.MCPServer {
	srv := server.NewMCPServer(name, version,
		server.WithToolCapabilities(false),
		server.WithInputSchemaValidation(),
		server.WithStrictInputSchemaDefault(),
		server.WithRecovery(),
	)
	tools := &toolSet{kv: kv, log: log}
	for _, entry := range tools.definitions() {
		srv.AddTool(entry.tool, entry.handler)
	}
	return srv
}

// toolEntry pairs a tool's declaration with its handler.
type toolEntry struct {
	tool    mcp.Tool
	handler server.ToolHandlerFunc
}

// definitions declares every tool: name, description for a model, and argument schema.
func (ts *toolSet) definitions() []toolEntry {
	return []toolEntry{
		{mcp.NewTool("kv_set",
			mcp.WithDescription("Store value under key in the key-value store shared by all clients of this server, replacing any previous value."),
			mcp.WithString("key", mcp.Required(), mcp.Description("Key to write.")),
			mcp.WithString("value", mcp.Required(), mcp.Description("Value to store.")),
			mcp.WithIdempotentHintAnnotation(true),
		), ts.kvSet},
		{mcp.NewTool("kv_get",
			mcp.WithDescription("Return the value stored under key in the shared key-value store; an error result if the key was never set."),
			mcp.WithString("key", mcp.Required(), mcp.Description("Key to read.")),
			mcp.WithReadOnlyHintAnnotation(true),
		), ts.kvGet},
		{mcp.NewTool("kv_list",
			mcp.WithDescription(`List every pair in the shared key-value store as a JSON array of {"key","value"} objects sorted by key.`),
			mcp.WithReadOnlyHintAnnotation(true),
		), ts.kvList},
		{mcp.NewTool("echo",
			mcp.WithDescription("Return text unchanged."),
			mcp.WithString("text", mcp.Required(), mcp.Description("Text to echo back.")),
			mcp.WithReadOnlyHintAnnotation(true),
		), ts.echo},
		{mcp.NewTool("slow",
			mcp.WithDescription(`Sleep ms milliseconds, stopping early if the call is cancelled, then return "slept N ms".`),
			mcp.WithInteger("ms", mcp.Required(), mcp.Min(0), mcp.Max(maxSlowMillis), mcp.Description("Milliseconds to sleep, 0 to 60000.")),
			mcp.WithReadOnlyHintAnnotation(true),
		), ts.slow},
		{mcp.NewTool("crash",
			mcp.WithDescription("Terminate the server process immediately with exit code 3, without answering. For fault-injection tests only."),
			mcp.WithDestructiveHintAnnotation(true),
		), ts.crash},
		{mcp.NewTool("garbage",
			mcp.WithDescription("Corrupt the reply channel: in stdio mode write a line that is not JSON-RPC to stdout before answering; in HTTP mode answer with a non-JSON body. For malformed-reply tests only."),
		), ts.garbage},
		{mcp.NewTool("big",
			mcp.WithDescription("Return a text of exactly bytes bytes (0 to 16 MiB), for oversize-result tests."),
			mcp.WithInteger("bytes", mcp.Required(), mcp.Min(0), mcp.Max(maxBigBytes), mcp.Description("Size of the returned text in bytes, 0 to 16777216.")),
			mcp.WithReadOnlyHintAnnotation(true),
		), ts.big},
	}
}

func (ts *toolSet) kvSet(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	key, err := req.RequireString("key")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	value, err := req.RequireString("value")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if err := ts.kv.set(key, value); err != nil {
		return mcp.NewToolResultError("the store could not keep it: " + err.Error()), nil
	}
	return mcp.NewToolResultText("ok"), nil
}

func (ts *toolSet) kvGet(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	key, err := req.RequireString("key")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	value, err := ts.kv.get(key)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(value), nil
}

func (ts *toolSet) kvList(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	encoded, err := json.Marshal(ts.kv.list())
	if err != nil {
		return nil, fmt.Errorf("encode kv_list: %w", err)
	}
	return mcp.NewToolResultText(string(encoded)), nil
}

func (ts *toolSet) echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(text), nil
}

// slow sleeps on a timer rather than time.Sleep so a cancelled request (HTTP disconnect or a
// stdio notifications/cancelled) frees its worker at once.
func (ts *toolSet) slow(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ms, err := req.RequireInt("ms")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if ms < 0 || ms > maxSlowMillis {
		return mcp.NewToolResultError(fmt.Sprintf("ms must be 0..%d, got %d", maxSlowMillis, ms)), nil
	}
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		return mcp.NewToolResultText(fmt.Sprintf("slept %d ms", ms)), nil
	case <-ctx.Done():
		ts.log.Debug().Int("ms", ms).Msg("slow cancelled")
		return nil, fmt.Errorf("slow cancelled: %w", ctx.Err())
	}
}

func (ts *toolSet) crash(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ts.log.Warn().Int("exit_code", ExitCrash).Msg("crash tool called; exiting")
	os.Exit(ExitCrash)
	return nil, nil // unreachable; os.Exit does not return
}

func (ts *toolSet) garbage(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	emit, ok := ctx.Value(garbageKey{}).(garbageEmitter)
	if !ok {
		return nil, ErrNoGarbageChannel
	}
	if err := emit(); err != nil {
		return nil, fmt.Errorf("emit garbage: %w", err)
	}
	return mcp.NewToolResultText("garbage emitted"), nil
}

func (ts *toolSet) big(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	size, err := req.RequireInt("bytes")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if size < 0 || size > maxBigBytes {
		return mcp.NewToolResultError(fmt.Sprintf("bytes must be 0..%d, got %d", maxBigBytes, size)), nil
	}
	return mcp.NewToolResultText(strings.Repeat("x", size)), nil
}
