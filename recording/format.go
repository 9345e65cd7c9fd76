package recording

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Format and Version identify a recording in its header; Version changes whenever the meaning of
// a field does, so a replay never misreads an old recording.
//
// Version 2 keeps a live model's tool call arguments as the provider wrote them (a model call's
// raw, when they are not already compact) and hashes a live request as the exact body sent. A
// version 1 recording still replays: its calls have no raw (its arguments are the compact ones),
// and a back end whose requests version 1 hashed in another form says how (models.LegacyRequest).
const (
	Format  = "warren-recording"
	Version = 2
	// MinVersion is the oldest version this host reads.
	MinVersion = 1
)

// Entry kinds, the "kind" field of every line after the header.
const (
	// KindTool is one tool call that ran on the tool lane, with its whole result.
	KindTool = "tool"
	// KindBackground is the report of a command a call sent to the background.
	KindBackground = "background"
	// KindMCP is the lifecycle events of the MCP sessions that one tick wrote into the trace.
	KindMCP = "mcp"
	// KindItems is the items a fan-out read from a file of the agent's workdir.
	KindItems = "items"
	// KindDynamic is what a scan of an agent's dynamic tools folder read when it found a change.
	KindDynamic = "dynamic"
	// KindModelLimit is a model turn that a real-time limit ended (a JS policy's wall-clock
	// backstop).
	KindModelLimit = "model_limit"
	// KindPass is one pass of a wall-clock run's scheduler: its tick and the time Now read.
	KindPass = "pass"
	// KindHanded is one lane result a wall-clock run handed over: at which pass, in which place.
	KindHanded = "handed"
	// KindModel is one turn of a live model (models.Live): the request's hash and the answer.
	KindModel = "model"
	// KindAnswer is an answer to a prompt given by the embedder's answerer (a person).
	KindAnswer = "answer"
	// KindOperator is one thing a person did to the run (operator.Command): an answer, a kill, a
	// cancel, with the tick the world applied it at.
	KindOperator = "operator"
	// KindEnd closes a complete recording.
	KindEnd = "end"
)

// Tool entry statuses.
const (
	// StatusDone: the call ran and its result was filed.
	StatusDone = "done"
	// StatusUnfinished: the call was still running when the run ended; nothing of it reached the
	// trace, and a replay gives it no result either.
	StatusUnfinished = "unfinished"
)

// Errors a caller tests with errors.Is.
var (
	// ErrBadRecording: the input is not a complete recording of this format and version.
	ErrBadRecording = errors.New("not a valid recording")
	// ErrDivergence: a replay asked for an input the recording does not have as asked.
	ErrDivergence = errors.New("replay diverged from the recording")
)

// Header is the first line of a recording: everything host replay needs to run the recorded
// scenario again the way it was run.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Host is the Warren version that recorded the run.
	Host string `json:"host"`
	// Note is what the recorder wrote about the run (host run --record-note: what it was made
	// against, why), shown by host replay.
	Note string `json:"note,omitempty"`
	// Scenario is the scenario's name; ScenarioFile its file. This and the other files of the
	// header (ConfigFile, TraceFile) are relative to the recording's folder when the recording was
	// written to a file (ReadFile makes them absolute again), else absolute.
	Scenario     string `json:"scenario"`
	ScenarioFile string `json:"scenario_file"`
	// ScenarioHash is the recorded trace's scenario_hash: the scenario's content and what the
	// command line changed.
	ScenarioHash string `json:"scenario_hash"`
	// ConfigFile is the --config host config file ("" when the scenario's own [host] was used).
	ConfigFile string `json:"config_file,omitempty"`
	// TraceFile is the trace written alongside, for host replay --check to compare with.
	TraceFile string `json:"trace_file,omitempty"`
	// Recording is this recording's own path as the command line gave it: the recorded trace's
	// header names it so, and a replay's trace must too.
	Recording string `json:"recording,omitempty"`
	// Answerer is true when the run had an answerer of its embedder's (a person) behind the
	// scenario's scripted answers: its answers are KindAnswer entries.
	Answerer bool `json:"answerer,omitempty"`
	// People is true when people watched the run (a served or --interactive run): the prompts its
	// scripted answers left open waited for them, and what they did is KindOperator entries.
	People bool `json:"people,omitempty"`
	// Clock is the run's clock mode (virtual or wall).
	Clock string `json:"clock"`
	// Seed is the run's seed (after --seed); Agents the --agents rescale (0: the file's counts).
	Seed   uint64 `json:"seed"`
	Agents int    `json:"agents,omitempty"`
	// Launch is the command line's launch overrides; Unattended its --unattended.
	Launch     Launch `json:"launch"`
	Unattended bool   `json:"unattended,omitempty"`
	// FaultsSeed is --faults-seed, when given.
	FaultsSeed *uint64 `json:"faults_seed,omitempty"`
	// MCPTools is what each MCP server listed when the scenario loaded: the replay loads the
	// scenario with these instead of starting the servers.
	MCPTools []MCPTool `json:"mcp_tools,omitempty"`
}

// Launch is the launch overrides of a run's command line (host run --yolo, --allow, --ask,
// --deny).
type Launch struct {
	Yolo  bool     `json:"yolo,omitempty"`
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// MCPTool is one tool an MCP server listed.
type MCPTool struct {
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Effects     uint8           `json:"effects"`
}

// Call identifies one tool call of a run and what it asked: the key a replay looks it up by, and
// the request it must match.
type Call struct {
	// Agent is the calling agent's name; Turn its 0-based model turn; Index the call's place in
	// the turn; ID the call id (which the trace shows).
	Agent string
	Turn  uint64
	Index int
	ID    string
	// Tool and Args are the request.
	Tool string
	Args json.RawMessage
}

// Note is one tool_note a call produced (tools.Note in the recording's terms).
type Note struct {
	Fn   string `json:"fn"`
	Text string `json:"text"`
	OK   bool   `json:"ok"`
	Err  string `json:"err,omitempty"`
}

// Result is a call's whole outcome as the world filed it.
type Result struct {
	OK      bool
	Content string
	Notes   []Note
	// Detached is true when the call sent work to the background (its report is a KindBackground
	// entry).
	Detached bool
	// Panic is the tool's panic message, when it panicked.
	Panic string
	// Ops are the requests a script tool made of the world outside (a replay runs the script
	// again and answers them from here).
	Ops []Op
}

// ToolEntry is a tool line read back.
type ToolEntry struct {
	Kind     string          `json:"kind"`
	Tick     uint64          `json:"tick"`
	Agent    string          `json:"agent"`
	Turn     uint64          `json:"turn"`
	Index    int             `json:"call"`
	ID       string          `json:"call_id"`
	Tool     string          `json:"tool"`
	Request  string          `json:"request"`
	Args     json.RawMessage `json:"args"`
	Status   string          `json:"status"`
	OK       bool            `json:"ok"`
	Content  string          `json:"content"`
	Notes    []Note          `json:"notes,omitempty"`
	Detached bool            `json:"detached,omitempty"`
	Panic    string          `json:"panic,omitempty"`
	Ops      []Op            `json:"ops,omitempty"`
}

// Result returns the entry's outcome.
func (e *ToolEntry) Result() Result {
	return Result{OK: e.OK, Content: e.Content, Notes: e.Notes, Detached: e.Detached, Panic: e.Panic, Ops: e.Ops}
}

// MCPEvent is one lifecycle event of an MCP session (mcp.Event in the recording's terms).
type MCPEvent struct {
	Server    string `json:"server"`
	Event     string `json:"event"`
	Session   uint64 `json:"session"`
	Transport string `json:"transport"`
	Reason    string `json:"reason"`
}

// Answer is one answer the embedder's answerer gave (or declined to give: OK false), in the order
// the prompts were put to it.
type Answer struct {
	// N counts the answerer's prompts from 1.
	N      uint64 `json:"n"`
	Agent  string `json:"agent"`
	Tool   string `json:"tool"`
	Answer string `json:"answer"`
	Delay  uint64 `json:"delay"`
	OK     bool   `json:"ok"`
}

// Operator is one thing a person did (operator.Command), at the tick the world applied it.
type Operator struct {
	Tick   uint64 `json:"tick"`
	Op     string `json:"op"`
	CallID string `json:"call_id,omitempty"`
	Answer string `json:"answer,omitempty"`
	Agent  string `json:"agent,omitempty"`
	By     string `json:"by"`
}

// Items is what a fan-out read from its items file: the items, or why it could not.
type Items struct {
	Agent  string   `json:"agent"`
	CallID string   `json:"call_id"`
	File   string   `json:"file"`
	Items  []string `json:"items"`
	Err    string   `json:"err,omitempty"`
}

// Dynamic is what one scan of an agent's tools/ folder (dynamic_tools) read: every *.js file in
// it, in name order, its source or why it could not be read.
type Dynamic struct {
	Agent string `json:"agent"`
	// Turn is the model turn the scan came before.
	Turn  uint64        `json:"turn"`
	Files []DynamicFile `json:"files"`
}

// DynamicFile is one file a dynamic-tools scan read.
type DynamicFile struct {
	Name   string `json:"name"`
	Source string `json:"source,omitempty"`
	Err    string `json:"err,omitempty"`
}

// Handed is one lane hand-over of a wall-clock run (ecs.Journal.Handed).
type Handed struct {
	Lane    string `json:"lane"`
	Agent   uint64 `json:"agent"`
	Index   int    `json:"index"`
	Started uint64 `json:"started"`
	Handed  uint64 `json:"handed"`
	Rank    int    `json:"rank"`
}

// Pass is one pass of a wall-clock run's scheduler.
type Pass struct {
	Tick uint64 `json:"tick"`
	// Now is the time Now read during the pass, in Unix nanoseconds.
	Now int64 `json:"now"`
}

// ModelTurn is one attempt at a turn of a live model as recorded: the request it was asked (its
// hash) and what it answered (text, calls and usage, or the error with what the host's retry
// policy decided on: its status, Retry-After and whether it timed out).
type ModelTurn struct {
	Agent string `json:"agent"`
	Turn  uint64 `json:"turn"`
	// Attempt is the 1-based attempt at the turn (a retry after a 429 is attempt 2).
	Attempt uint32 `json:"attempt,omitempty"`
	// Model is the id of the scenario's model table ("openai:live"); Pool the inference pool that
	// sent the request.
	Model   string      `json:"model,omitempty"`
	Pool    string      `json:"pool,omitempty"`
	Request string      `json:"request"`
	Text    string      `json:"text"`
	Calls   []ModelCall `json:"calls,omitempty"`
	Usage   *Usage      `json:"usage,omitempty"`
	Err     string      `json:"err,omitempty"`
	// Status, RetryAfterMS and Timeout describe a failed attempt (models.ProviderError).
	Status       int   `json:"status,omitempty"`
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
	Timeout      bool  `json:"timeout,omitempty"`
}

// Usage is the tokens an answer cost (models.Usage).
type Usage struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

// ModelCall is one tool call a live model asked for. Args are the arguments exactly as the
// provider wrote them, which is what the conversation sends back on the next turn, so a replay
// asks the model exactly what the recorded run asked. On a line they are written compact under
// "args" (for jq and people) and, when the provider's bytes differ from that (spaces after ':',
// new lines, indentation), also whole under "raw", a JSON string (MarshalJSON, UnmarshalJSON).
type ModelCall struct {
	ID   string
	Name string
	Args json.RawMessage
}

// modelCallLine is a ModelCall as a line holds it.
type modelCallLine struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	Raw  *string         `json:"raw,omitempty"`
}

// splitArgs is how arguments are written: compact under "args", and the bytes themselves as raw
// when they are not that (nil when they are). Arguments that are not JSON at all are written as
// args null with the bytes as raw.
func splitArgs(args json.RawMessage) (compact json.RawMessage, raw *string) {
	if len(args) == 0 {
		return json.RawMessage("null"), nil
	}
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		s := string(args)
		return json.RawMessage("null"), &s
	}
	if bytes.Equal(b.Bytes(), args) {
		return args, nil
	}
	s := string(args)
	return b.Bytes(), &s
}

// MarshalJSON writes the call as a line holds it (see ModelCall).
func (c ModelCall) MarshalJSON() ([]byte, error) {
	args, raw := splitArgs(c.Args)
	return json.Marshal(modelCallLine{ID: c.ID, Name: c.Name, Args: args, Raw: raw})
}

// UnmarshalJSON reads a call as a line holds it, strictly: an unknown key, or a raw that is not
// the arguments args says in another spacing, is an error naming the key.
func (c *ModelCall) UnmarshalJSON(data []byte) error {
	var l modelCallLine
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return fmt.Errorf("calls: %w", explain(err, &l))
		}
		return err
	}
	*c = ModelCall{ID: l.ID, Name: l.Name, Args: l.Args}
	if l.Raw == nil {
		if len(l.Args) == 0 {
			return errors.New("calls: args: missing (write the call's arguments, {} for none)")
		}
		return nil
	}
	raw := json.RawMessage(*l.Raw)
	compact, again := splitArgs(raw)
	switch {
	case again == nil:
		return errors.New("calls: raw: the arguments are already compact, so args alone says them")
	case !bytes.Equal(compact, l.Args):
		return fmt.Errorf("calls: raw: not the arguments args holds (args %.60s, raw compacted %.60s)", l.Args, compact)
	}
	c.Args = raw
	return nil
}

// End is the last line of a complete recording.
type End struct {
	// Entries counts the lines between the header and this one.
	Entries uint64 `json:"entries"`
	// Status is how the run ended (the trace's end status); Stop why its scheduler stopped
	// (fixed_point, max_ticks, cancelled), which the replay of a wall-clock run ends with.
	Status string `json:"status"`
	Stop   string `json:"stop,omitempty"`
}

// RequestHash is the hash a call's request is recorded and matched by: the tool's name and its
// arguments compacted (so whitespace a model added does not count as a change).
func RequestHash(tool string, args json.RawMessage) string {
	return requestHash(tool, compactArgs(args))
}

// ModelRequestHash is the hash a live model's turn is recorded and matched by: the model's id
// and the request's body exactly as sent (models.Live.Request). A version 1 recording hashed
// the body compacted, which the bodies the back ends send already are.
func ModelRequestHash(modelID string, body []byte) string {
	h := sha256.New()
	h.Write([]byte("model:" + modelID))
	h.Write([]byte{0})
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// requestHash is RequestHash of arguments already compacted.
func requestHash(tool string, compact []byte) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(compact)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// compactArgs is args on one line, or args as given when it is not valid JSON.
func compactArgs(args json.RawMessage) []byte {
	if len(args) == 0 {
		return []byte("null")
	}
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return args
	}
	return b.Bytes()
}
