package subagents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/warrenhq/warren/tools"
)

// The Parse functions turn a call's arguments into typed values for the sub-agent system. Calls
// on the dispatch path were validated against the tool's schema already; the Parse functions
// still check every field themselves, mirroring the schema rule for rule, so a caller that skips
// validation (a test, a script) gets the same verdict instead of a half-decoded call. Every error
// wraps tools.ErrInvalidArguments and reads like a schema violation:
// `invalid arguments for tool "spawn_agent": at /max_child_depth: must be an integer from 0 to 64 (got 99)`.

// SpawnArgs are spawn_agent's arguments.
type SpawnArgs struct {
	// Blueprint names the blueprint the child runs.
	Blueprint string
	// Task is the child's first user message.
	Task string
	// Wait parks the caller until the child ends.
	Wait bool
	// SeedContext copies the caller's conversation into the child.
	SeedContext bool
	// MaxChildDepth is the child's requested depth budget, or -1 when the call gave none (then the
	// parent's budget and the child blueprint's max_child_depth decide alone; see Tree.CheckSpawn).
	MaxChildDepth int
}

// ParseSpawn decodes spawn_agent's arguments.
func ParseSpawn(args json.RawMessage) (SpawnArgs, error) {
	var raw struct {
		Blueprint     json.RawMessage `json:"blueprint"`
		Task          json.RawMessage `json:"task"`
		Wait          json.RawMessage `json:"wait"`
		SeedContext   json.RawMessage `json:"seed_context"`
		MaxChildDepth json.RawMessage `json:"max_child_depth"`
	}
	if err := decodeObject(NameSpawn, args, &raw); err != nil {
		return SpawnArgs{}, err
	}
	a := SpawnArgs{MaxChildDepth: -1}
	var err error
	if a.Blueprint, err = requiredString(NameSpawn, "blueprint", raw.Blueprint, true, 0); err != nil {
		return SpawnArgs{}, err
	}
	if a.Task, err = requiredString(NameSpawn, "task", raw.Task, false, 0); err != nil {
		return SpawnArgs{}, err
	}
	if a.Wait, err = optionalBool(NameSpawn, "wait", raw.Wait); err != nil {
		return SpawnArgs{}, err
	}
	if a.SeedContext, err = optionalBool(NameSpawn, "seed_context", raw.SeedContext); err != nil {
		return SpawnArgs{}, err
	}
	if a.MaxChildDepth, err = optionalInt(NameSpawn, "max_child_depth", raw.MaxChildDepth, 0, maxChildDepthArg, -1); err != nil {
		return SpawnArgs{}, err
	}
	return a, nil
}

// ParseValidatedSpawn is ParseSpawn for arguments spawn_agent's schema has already accepted, as
// the dispatch path validates every call before the sub-agent system sees it: the schema has
// refused unknown and misspelt keys, nulls and out-of-range depths, so one typed decode gives
// what ParseSpawn would, at about a third of the cost. A document the typed decode cannot take
// (an integral float such as 2.0 for max_child_depth) falls back to ParseSpawn.
func ParseValidatedSpawn(args json.RawMessage) (SpawnArgs, error) {
	var v struct {
		Blueprint     string `json:"blueprint"`
		Task          string `json:"task"`
		Wait          bool   `json:"wait"`
		SeedContext   bool   `json:"seed_context"`
		MaxChildDepth *int   `json:"max_child_depth"`
	}
	if err := json.Unmarshal(args, &v); err != nil || v.Blueprint == "" {
		return ParseSpawn(args)
	}
	a := SpawnArgs{Blueprint: v.Blueprint, Task: v.Task, Wait: v.Wait, SeedContext: v.SeedContext, MaxChildDepth: -1}
	if v.MaxChildDepth != nil {
		if *v.MaxChildDepth < 0 || *v.MaxChildDepth > maxChildDepthArg {
			return ParseSpawn(args)
		}
		a.MaxChildDepth = *v.MaxChildDepth
	}
	return a, nil
}

// ParseTarget decodes the arguments of the tools that name one agent (check_agent,
// wait_for_agent, kill_agent): {"id": "..."}. It returns the id as given; resolving it is
// Tree.Resolve's job.
func ParseTarget(args json.RawMessage) (string, error) {
	var raw struct {
		ID json.RawMessage `json:"id"`
	}
	if err := decodeObject("", args, &raw); err != nil {
		return "", err
	}
	return requiredString("", "id", raw.ID, true, 0)
}

// SendArgs are send_to_agent's arguments.
type SendArgs struct {
	// ID names the recipient.
	ID string
	// Message is the text to queue in its inbox.
	Message string
}

// ParseSend decodes send_to_agent's arguments.
func ParseSend(args json.RawMessage) (SendArgs, error) {
	var raw struct {
		ID      json.RawMessage `json:"id"`
		Message json.RawMessage `json:"message"`
	}
	if err := decodeObject(NameSend, args, &raw); err != nil {
		return SendArgs{}, err
	}
	var a SendArgs
	var err error
	if a.ID, err = requiredString(NameSend, "id", raw.ID, true, 0); err != nil {
		return SendArgs{}, err
	}
	if a.Message, err = requiredString(NameSend, "message", raw.Message, true, maxMessageLength); err != nil {
		return SendArgs{}, err
	}
	return a, nil
}

// FailurePolicy says what a fan-out does when a worker fails. The zero value is no policy, so a
// forgotten setting is visible rather than silently one of the two.
type FailurePolicy uint8

// The fan-out failure policies.
const (
	// FailContinue runs every item whatever happens to the others (the default).
	FailContinue FailurePolicy = iota + 1
	// FailAll stops at the first failed worker: running workers are killed, no more start.
	FailAll
)

// String returns the policy's spelling in arguments and blueprints, or "FailurePolicy(n)".
func (p FailurePolicy) String() string {
	switch p {
	case FailContinue:
		return "continue"
	case FailAll:
		return "fail_all"
	}
	return "FailurePolicy(" + strconv.Itoa(int(p)) + ")"
}

// ParseFailurePolicy parses "continue" or "fail_all"; anything else wraps tools.ErrUnknownValue,
// so blueprints and tool arguments share one spelling and a typo is an error, not a default.
func ParseFailurePolicy(s string) (FailurePolicy, error) {
	switch s {
	case "continue":
		return FailContinue, nil
	case "fail_all":
		return FailAll, nil
	}
	return 0, fmt.Errorf("failure policy %q: %w (want continue or fail_all)", s, tools.ErrUnknownValue)
}

// FanOutArgs are fan_out's arguments.
type FanOutArgs struct {
	// Items are the work items, one worker each, in order; nil when the call gave ItemsFile.
	Items []string
	// ItemsFile is the workdir-relative path of a file holding the items (a JSON array of
	// strings, or one item per non-empty line), "" when the call gave Items. Exactly one of the
	// two is set; reading the file is the caller's job, as it needs the agent's workdir.
	ItemsFile string
	// Blueprint names the blueprint every worker runs.
	Blueprint string
	// MaxWorkers is how many workers may run at once, 0 when the call gave none (the host's
	// setting applies).
	MaxWorkers int
	// OnWorkerFailure is the failure policy, FailContinue when the call gave none.
	OnWorkerFailure FailurePolicy
}

// ParseFanOut decodes fan_out's arguments. An empty item list, or neither items nor items_file,
// wraps ErrNoItems as well as tools.ErrInvalidArguments; giving both is an error too. The host's
// cap on items (ErrTooManyItems) is the caller's to apply.
func ParseFanOut(args json.RawMessage) (FanOutArgs, error) {
	var raw struct {
		Items           json.RawMessage `json:"items"`
		ItemsFile       json.RawMessage `json:"items_file"`
		Blueprint       json.RawMessage `json:"blueprint"`
		MaxWorkers      json.RawMessage `json:"max_workers"`
		OnWorkerFailure json.RawMessage `json:"on_worker_failure"`
	}
	if err := decodeObject(NameFanOut, args, &raw); err != nil {
		return FanOutArgs{}, err
	}
	var a FanOutArgs
	var err error
	switch {
	case len(raw.Items) > 0 && len(raw.ItemsFile) > 0:
		return FanOutArgs{}, argError(NameFanOut, "", "give items or items_file, not both")
	case len(raw.ItemsFile) > 0:
		if a.ItemsFile, err = requiredString(NameFanOut, "items_file", raw.ItemsFile, true, 0); err != nil {
			return FanOutArgs{}, err
		}
	default:
		if a.Items, err = parseItems(raw.Items); err != nil {
			return FanOutArgs{}, err
		}
	}
	if a.Blueprint, err = requiredString(NameFanOut, "blueprint", raw.Blueprint, true, 0); err != nil {
		return FanOutArgs{}, err
	}
	if a.MaxWorkers, err = optionalInt(NameFanOut, "max_workers", raw.MaxWorkers, 1, maxWorkersArg, 0); err != nil {
		return FanOutArgs{}, err
	}
	a.OnWorkerFailure = FailContinue
	if len(raw.OnWorkerFailure) > 0 {
		s, err := requiredString(NameFanOut, "on_worker_failure", raw.OnWorkerFailure, false, 0)
		if err != nil {
			return FanOutArgs{}, err
		}
		if a.OnWorkerFailure, err = ParseFailurePolicy(s); err != nil {
			return FanOutArgs{}, argError(NameFanOut, "/on_worker_failure", fmt.Sprintf("must be \"continue\" or \"fail_all\" (got %q)", s))
		}
	}
	return a, nil
}

// parseItems decodes fan_out's items: a non-empty array of non-empty strings.
func parseItems(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: %w", argError(NameFanOut, "", "missing property 'items' (or 'items_file')"), ErrNoItems)
	}
	if raw[0] != '[' {
		return nil, argError(NameFanOut, "/items", "must be an array of strings, got "+jsonKind(raw))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, argError(NameFanOut, "/items", "cannot decode: "+err.Error())
	}
	if len(elems) == 0 {
		return nil, fmt.Errorf("%w: %w", argError(NameFanOut, "/items", "must hold at least one item"), ErrNoItems)
	}
	items := make([]string, len(elems))
	for i, e := range elems {
		s, err := requiredString(NameFanOut, "items/"+strconv.Itoa(i), e, true, 0)
		if err != nil {
			return nil, err
		}
		items[i] = s
	}
	return items, nil
}

// decodeObject decodes args (empty means {}) into a struct of raw fields, refusing unknown
// fields, non-objects and trailing data the way the schemas' additionalProperties false does.
func decodeObject(tool string, args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return nil
	}
	if args[0] != '{' {
		return argError(tool, "", "the arguments must be a JSON object, got "+jsonKind(args))
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argError(tool, "", "cannot decode the arguments: "+err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return argError(tool, "", "unexpected data after the arguments object")
	}
	return nil
}

// requiredString decodes a string field that must be present, non-empty if nonEmpty and at most
// maxLen characters long (maxLen 0: unbounded). Field names with a slash address array elements.
func requiredString(tool, field string, raw json.RawMessage, nonEmpty bool, maxLen int) (string, error) {
	pointer := "/" + field
	if len(raw) == 0 {
		return "", argError(tool, "", "missing property '"+field+"'")
	}
	if raw[0] != '"' {
		return "", argError(tool, pointer, "must be a string, got "+jsonKind(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", argError(tool, pointer, "cannot decode: "+err.Error())
	}
	if nonEmpty && s == "" {
		return "", argError(tool, pointer, "must not be empty")
	}
	if n := utf8.RuneCountInString(s); maxLen > 0 && n > maxLen {
		return "", argError(tool, pointer, fmt.Sprintf("must be at most %d characters long (got %d)", maxLen, n))
	}
	return s, nil
}

// optionalBool decodes a boolean field, false when absent.
func optionalBool(tool, field string, raw json.RawMessage) (bool, error) {
	switch string(raw) {
	case "":
		return false, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, argError(tool, "/"+field, "must be true or false, got "+jsonKind(raw))
}

// optionalInt decodes an integer field in [lo, hi], def when absent. Like JSON Schema, it counts
// an integral number written as a float (3.0, 1e2) as an integer.
func optionalInt(tool, field string, raw json.RawMessage, lo, hi, def int) (int, error) {
	if len(raw) == 0 {
		return def, nil
	}
	outOfRange := argError(tool, "/"+field, fmt.Sprintf("must be an integer from %d to %d (got %s)", lo, hi, raw))
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, argError(tool, "/"+field, "must be an integer, got "+jsonKind(raw))
	}
	n := json.Number(raw)
	if v, err := n.Int64(); err == nil {
		if v < int64(lo) || v > int64(hi) {
			return 0, outOfRange
		}
		return int(v), nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, outOfRange
	}
	return int(f), nil
}

// jsonKind names the JSON type of a raw value by its first byte, for error messages.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// argError builds an invalid-arguments error in the schema validator's words; pointer "" is the
// arguments object itself. Without a tool name (ParseTarget serves three tools) the message
// names none.
func argError(tool, pointer, msg string) error {
	if tool == "" {
		if pointer == "" {
			return fmt.Errorf("%w: at (root): %s", tools.ErrInvalidArguments, msg)
		}
		return fmt.Errorf("%w: at %s: %s", tools.ErrInvalidArguments, pointer, msg)
	}
	return &tools.ArgumentError{Tool: tool, Problems: []tools.ArgumentProblem{{Pointer: pointer, Message: msg}}}
}
