package tools

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxReportedProblems bounds how many schema violations one validation error lists, so a model
// that sends a wildly wrong object gets a readable message instead of a wall of text.
const maxReportedProblems = 8

// emptyArguments stands in for an empty argument string: models routinely send "" for tools that
// take no arguments, and "" is not JSON.
var emptyArguments = json.RawMessage(`{}`)

// messagePrinter renders jsonschema error kinds in English; one shared printer keeps messages
// identical across runs and machines (they reach the trace).
var messagePrinter = message.NewPrinter(language.English)

// Handle is a registered tool together with its compiled argument schema. Compiling happens once,
// in NewHandle, so validating a call costs one JSON decode and one schema walk. A Handle is
// immutable and safe for concurrent use.
type Handle struct {
	tool   Tool
	spec   Spec
	schema *jsonschema.Schema
	inline bool

	// passed memoizes argument documents known to validate. Validation is a pure function of
	// the schema and the bytes, and agents spawned from one script send the same arguments
	// again and again, so a hit skips decoding and validation entirely. Bounded: once full, new
	// documents are validated every time.
	mu     sync.Mutex
	passed map[string]struct{}
}

// maxPassedMemo bounds the validation memo of one tool, and maxMemoArgs the documents it keeps:
// 4096 entries of at most 4 KiB, so a tool's memo never holds more than 16 MiB (a fan_out with
// 10^5 inline items would otherwise pin its megabytes for the rest of the run).
const (
	maxPassedMemo = 4096
	maxMemoArgs   = 4 << 10
)

// NewHandle checks a tool's spec and compiles its parameters schema. Registries call it on
// Register; it is exported so a caller can compile a tool ahead of time (for example before taking
// a lock). Errors wrap ErrInvalidSpec and name the tool and what is wrong.
func NewHandle(t Tool) (*Handle, error) {
	if t == nil {
		return nil, fmt.Errorf("register tool: %w: tool is nil", ErrInvalidSpec)
	}
	spec := t.Spec()
	if err := checkToolName(spec.Name); err != nil {
		return nil, fmt.Errorf("register tool %q: %w: %w", spec.Name, ErrInvalidSpec, err)
	}
	schema, err := compileParameters(spec.Name, spec.Parameters)
	if err != nil {
		return nil, fmt.Errorf("register tool %q: %w: parameters schema: %w", spec.Name, ErrInvalidSpec, err)
	}
	h := &Handle{tool: t, spec: spec, schema: schema}
	if in, ok := t.(Inline); ok {
		h.inline = in.Inline()
	}
	return h, nil
}

// checkToolName enforces the provider-compatible name rule documented on Spec.Name.
func checkToolName(name string) error {
	if name == "" || len(name) > 64 {
		return errors.New("name must be 1 to 64 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("name may contain only letters, digits, '_' and '-' (found %q)", rune(c))
		}
	}
	return nil
}

// compileParameters compiles a tool's argument schema with no URL loader at all, so a "$ref" to a
// file or a web address fails instead of touching the host.
func compileParameters(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New(`schema is empty (a tool without arguments uses {"type":"object","additionalProperties":false})`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("schema must be a JSON object")
	}
	loc := "mem:///tools/" + url.PathEscape(name) + ".json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// Tool returns the registered tool.
func (h *Handle) Tool() Tool { return h.tool }

// Name returns the tool's name as registered.
func (h *Handle) Name() string { return h.spec.Name }

// Spec returns the spec read at registration (the one the schema was compiled from).
func (h *Handle) Spec() Spec { return h.spec }

// Inline reports whether the tool implements Inline and asked to run inline; the dispatch system
// uses it to choose between running the call in place and handing it to a worker lane.
func (h *Handle) Inline() bool { return h.inline }

// Validate checks a call's arguments against the compiled schema. Empty (or all-whitespace)
// arguments count as {}. The error wraps ErrInvalidArguments and is an *ArgumentError naming each
// failing field by JSON pointer and saying why, in words a model can act on.
func (h *Handle) Validate(args json.RawMessage) error {
	args = normalizeArguments(args)
	h.mu.Lock()
	_, known := h.passed[string(args)]
	h.mu.Unlock()
	if known {
		return nil
	}
	if err := h.validate(args); err != nil {
		return err
	}
	if len(args) > maxMemoArgs {
		return nil // big documents are rare and costly to keep: validate them every time
	}
	h.mu.Lock()
	if len(h.passed) < maxPassedMemo {
		if h.passed == nil {
			h.passed = make(map[string]struct{})
		}
		h.passed[string(args)] = struct{}{}
	}
	h.mu.Unlock()
	return nil
}

// validate decodes args and checks them against the schema.
func (h *Handle) validate(args json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return &ArgumentError{Tool: h.spec.Name, Problems: []ArgumentProblem{{Message: "not valid JSON: " + err.Error()}}}
	}
	err = h.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Tool: h.spec.Name, Problems: []ArgumentProblem{{Message: err.Error()}}}
	}
	problems := schemaProblems(ve)
	argErr := &ArgumentError{Tool: h.spec.Name, Problems: problems}
	if len(problems) > maxReportedProblems {
		argErr.Problems, argErr.Omitted = problems[:maxReportedProblems], len(problems)-maxReportedProblems
	}
	return argErr
}

// Execute validates args and then runs the tool. It does not recover panics: the caller (the
// dispatch system or a worker lane) owns panic isolation, so that it can fail the one agent and
// record the panic in the trace.
func (h *Handle) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	if err := h.Validate(args); err != nil {
		return Result{}, err
	}
	return h.tool.Execute(ec, normalizeArguments(args))
}

// Run executes the tool on arguments the caller has already validated with Validate (the
// dispatch path validates before the permission gate, then runs the call later, possibly on a
// worker lane). Like Execute, it does not recover panics.
func (h *Handle) Run(ec *ExecContext, args json.RawMessage) (Result, error) {
	return h.tool.Execute(ec, normalizeArguments(args))
}

// normalizeArguments maps empty arguments to {} so every tool can json.Unmarshal what it receives.
func normalizeArguments(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return emptyArguments
	}
	return args
}

// ArgumentProblem is one schema violation: where in the arguments object (a JSON pointer, "" for
// the object itself) and what is wrong.
type ArgumentProblem struct {
	Pointer string
	Message string
}

// ArgumentError is the error Validate returns. It wraps ErrInvalidArguments; Problems are sorted by
// pointer, then message, so the text is identical from run to run.
type ArgumentError struct {
	Tool     string
	Problems []ArgumentProblem
	// Omitted counts problems left out of Problems to keep the message short.
	Omitted int
}

// Error renders the problems on one line, e.g.
// `invalid arguments for tool "read_file": at /offset: got string, want integer`.
func (e *ArgumentError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "invalid arguments for tool %q: ", e.Tool)
	for i, p := range e.Problems {
		if i > 0 {
			sb.WriteString("; ")
		}
		if p.Pointer == "" {
			sb.WriteString("at (root): ")
		} else {
			sb.WriteString("at " + p.Pointer + ": ")
		}
		sb.WriteString(p.Message)
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&sb, "; and %d more", e.Omitted)
	}
	return sb.String()
}

// Unwrap makes errors.Is(err, ErrInvalidArguments) true.
func (e *ArgumentError) Unwrap() error { return ErrInvalidArguments }

// schemaProblems flattens a validation error tree to its leaves (the concrete violations), sorted
// and de-duplicated, because the library's order follows map iteration.
func schemaProblems(ve *jsonschema.ValidationError) []ArgumentProblem {
	var problems []ArgumentProblem
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			problems = append(problems, ArgumentProblem{
				Pointer: jsonPointer(e.InstanceLocation),
				Message: e.ErrorKind.LocalizedString(messagePrinter),
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.SortFunc(problems, func(a, b ArgumentProblem) int {
		return cmp.Or(cmp.Compare(a.Pointer, b.Pointer), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(problems)
}

// pointerEscaper escapes one JSON pointer reference token (RFC 6901 section 3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// jsonPointer renders an instance location as an RFC 6901 pointer.
func jsonPointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(pointerEscaper.Replace(t))
	}
	return sb.String()
}

// Registry is the base tool registry: every tool available to a world, keyed by name. Reads are
// lock-free — the registry publishes an immutable snapshot through an atomic pointer and writers
// (Register, Unregister) copy it — because lookups happen on every tool call of every agent while
// registrations happen at load time. The zero value is an empty registry ready to use.
type Registry struct {
	writeMu sync.Mutex // serialises writers; readers never take it
	current atomic.Pointer[registrySnapshot]
}

// registrySnapshot is one immutable state of a Registry.
type registrySnapshot struct {
	byName map[string]*Handle
	sorted []*Handle // by name
}

var emptySnapshot = &registrySnapshot{}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

func (r *Registry) snapshot() *registrySnapshot {
	if s := r.current.Load(); s != nil {
		return s
	}
	return emptySnapshot
}

// Register compiles t's schema and adds it. The error names the tool and what is wrong; a second
// tool with the same name wraps ErrDuplicate (use Unregister first to replace one).
func (r *Registry) Register(t Tool) error {
	h, err := NewHandle(t)
	if err != nil {
		return err
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	old := r.snapshot()
	if _, dup := old.byName[h.Name()]; dup {
		return fmt.Errorf("register tool %q: %w", h.Name(), ErrDuplicate)
	}
	next := &registrySnapshot{byName: maps.Clone(old.byName), sorted: make([]*Handle, 0, len(old.sorted)+1)}
	if next.byName == nil {
		next.byName = make(map[string]*Handle, 1)
	}
	next.byName[h.Name()] = h
	i, _ := slices.BinarySearchFunc(old.sorted, h.Name(), compareHandleName)
	next.sorted = append(next.sorted, old.sorted[:i]...)
	next.sorted = append(next.sorted, h)
	next.sorted = append(next.sorted, old.sorted[i:]...)
	r.current.Store(next)
	return nil
}

func compareHandleName(h *Handle, name string) int { return cmp.Compare(h.Name(), name) }

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	h, ok := r.Lookup(name)
	if !ok {
		return nil, false
	}
	return h.tool, true
}

// Lookup returns the handle (tool plus compiled schema) registered under name. It is lock-free and
// allocation-free.
func (r *Registry) Lookup(name string) (*Handle, bool) {
	h, ok := r.snapshot().byName[name]
	return h, ok
}

// Unregister removes the tool registered under name and returns it.
func (r *Registry) Unregister(name string) (Tool, bool) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	old := r.snapshot()
	h, ok := old.byName[name]
	if !ok {
		return nil, false
	}
	next := &registrySnapshot{byName: maps.Clone(old.byName)}
	delete(next.byName, name)
	next.sorted = slices.DeleteFunc(slices.Clone(old.sorted), func(x *Handle) bool { return x == h })
	r.current.Store(next)
	return h.tool, true
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	s := r.snapshot()
	names := make([]string, len(s.sorted))
	for i, h := range s.sorted {
		names[i] = h.Name()
	}
	return names
}

// Specs returns the registered specs sorted by name, so prompts built from them are byte-identical
// across turns (stable prompt caching) and runs (deterministic traces).
func (r *Registry) Specs() []Spec {
	s := r.snapshot()
	specs := make([]Spec, len(s.sorted))
	for i, h := range s.sorted {
		specs[i] = h.spec
	}
	return specs
}

// Len returns the number of registered tools.
func (r *Registry) Len() int { return len(r.snapshot().sorted) }
