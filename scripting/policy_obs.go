package scripting

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/warrenhq/warren/models"
)

// turnInput is what a turn reads of the View, copied on the caller's goroutine before the
// runtime starts: the runtime never touches the View, which the host reuses once Turn returns
// (even while an abandoned runtime is still running).
type turnInput struct {
	agent                              models.AgentInfo
	stage                              string
	stageIndex, iteration, visit, turn int
	tools                              []string
	window                             []models.Message  // the latest PolicyWindow messages
	windowCalls                        []models.ToolCall // per window message: the call a tool message answers
	results                            []models.Message  // the tool messages after the last assistant message
	resultCalls                        []models.ToolCall // per result: the call it answers
	inbox                              []string          // the user messages after the last assistant message
	memory                             map[string]any    // the agent's memory: the host's, never changed once made
}

// capture copies what the observation needs from v into in's reused buffers.
func (in *turnInput) capture(v *models.View) {
	in.agent, in.stage = v.Agent, v.Stage
	in.stageIndex, in.iteration, in.visit, in.turn = v.StageIndex, v.Iteration, v.Visit, v.Turn
	in.memory = v.Memory
	for i := range v.Tools {
		in.tools = append(in.tools, v.Tools[i].Name)
	}
	msgs := v.Messages
	last := len(msgs) - 1
	for last >= 0 && msgs[last].Role != models.RoleAssistant {
		last--
	}
	for i := last + 1; i < len(msgs); i++ {
		switch m := &msgs[i]; m.Role {
		case models.RoleTool:
			in.results = append(in.results, *m)
			in.resultCalls = append(in.resultCalls, answeredCall(msgs, i))
		case models.RoleUser:
			in.inbox = append(in.inbox, m.Content)
		}
	}
	for i := max(0, len(msgs)-PolicyWindow); i < len(msgs); i++ {
		in.window = append(in.window, msgs[i])
		var call models.ToolCall
		if msgs[i].Role == models.RoleTool {
			call = answeredCall(msgs, i)
		}
		in.windowCalls = append(in.windowCalls, call)
	}
}

// release empties the buffers, dropping their references to the agent's conversation.
func (in *turnInput) release() {
	in.agent, in.stage, in.memory = models.AgentInfo{}, "", nil
	in.tools = clearSlice(in.tools)
	in.window = clearSlice(in.window)
	in.windowCalls = clearSlice(in.windowCalls)
	in.results = clearSlice(in.results)
	in.resultCalls = clearSlice(in.resultCalls)
	in.inbox = clearSlice(in.inbox)
}

// clearSlice zeroes s and returns it empty, keeping its array for the next turn.
func clearSlice[T any](s []T) []T {
	clear(s)
	return s[:0]
}

// answeredCall is the call the tool message msgs[i] answers: the call with its id in the closest
// assistant message before it (none when nothing matches).
func answeredCall(msgs []models.Message, i int) models.ToolCall {
	id := msgs[i].CallID
	for j := i - 1; j >= 0; j-- {
		if msgs[j].Role != models.RoleAssistant {
			continue
		}
		for _, c := range msgs[j].Calls {
			if c.ID == id {
				return c
			}
		}
		return models.ToolCall{}
	}
	return models.ToolCall{}
}

// The observation is a read-only host object (goja's dynamic objects) rather than plain objects
// built property by property: building plain objects cost about 50 µs a turn, most of a turn;
// a dynamic object costs an allocation and converts only what decide reads. Its keys enumerate
// in a fixed order, so JSON.stringify(obs) is deterministic; assigning to it throws a TypeError
// (decide copies what it wants to change).
var (
	obsKeys       = []string{"agent", "stage", "stageIndex", "iteration", "visit", "turn", "tools", "messages", "lastResults", "inbox", "memory"}
	agentKeys     = []string{"id", "name", "group", "index"}
	messageKeys   = []string{"role", "content"}
	assistantKeys = []string{"role", "content", "calls"}
	toolKeys      = []string{"role", "content", "callId", "name", "isError"}
	callKeys      = []string{"id", "tool", "args"}
	resultKeys    = []string{"id", "name", "args", "content", "isError"}
)

// observation is decide's argument for the turn being served:
//
//	{agent: {id, name, group, index}, stage, stageIndex, iteration, visit, turn,
//	 tools: [names], messages: [the latest PolicyWindow], lastResults: [...], inbox: [texts],
//	 memory: {key: value}}
//
// A message is {role, content}, plus calls: [{id, tool, args}] for an assistant message and
// callId, name, isError for a tool message; a result is {id, name, args, content, isError}, args
// being the arguments of the call it answers.
func (rt *policyRuntime) observation() *goja.Object {
	return rt.w.vm.NewDynamicObject(&obsObject{rt: rt})
}

// readOnly is the write half of the observation's dynamic objects and arrays: every change is
// refused (a TypeError in the script's strict mode).
type readOnly struct{}

func (readOnly) Set(string, goja.Value) bool { return false }
func (readOnly) Delete(string) bool          { return false }
func (readOnly) SetLen(int) bool             { return false }

// obsObject is the observation's root; its parts are built on first access and kept, so that
// obs.messages === obs.messages.
type obsObject struct {
	readOnly
	rt                                             *policyRuntime
	agent, tools, messages, results, inbox, memory goja.Value
}

// Get implements goja.DynamicObject.
func (o *obsObject) Get(key string) goja.Value {
	rt, in := o.rt, &o.rt.in
	vm := rt.w.vm
	switch key {
	case "agent":
		if o.agent == nil {
			o.agent = rt.record(agentKeys, vm.ToValue(in.agent.ID), vm.ToValue(in.agent.Name), vm.ToValue(in.agent.Group), vm.ToValue(in.agent.Index))
		}
		return o.agent
	case "stage":
		return vm.ToValue(in.stage)
	case "stageIndex":
		return vm.ToValue(in.stageIndex)
	case "iteration":
		return vm.ToValue(in.iteration)
	case "visit":
		return vm.ToValue(in.visit)
	case "turn":
		return vm.ToValue(in.turn)
	case "tools":
		if o.tools == nil {
			o.tools = vm.NewDynamicArray(&lazyList{n: len(in.tools), item: func(i int) goja.Value { return vm.ToValue(in.tools[i]) }})
		}
		return o.tools
	case "inbox":
		if o.inbox == nil {
			o.inbox = vm.NewDynamicArray(&lazyList{n: len(in.inbox), item: func(i int) goja.Value { return vm.ToValue(in.inbox[i]) }})
		}
		return o.inbox
	case "messages":
		if o.messages == nil {
			o.messages = vm.NewDynamicArray(&lazyList{n: len(in.window), item: rt.messageObject})
		}
		return o.messages
	case "memory":
		if o.memory == nil {
			o.memory = rt.memoryObject()
		}
		return o.memory
	case "lastResults":
		if o.results == nil {
			o.results = vm.NewDynamicArray(&lazyList{n: len(in.results), item: rt.resultObject})
		}
		return o.results
	}
	return nil
}

// Has implements goja.DynamicObject.
func (o *obsObject) Has(key string) bool { return slices.Contains(obsKeys, key) }

// Keys implements goja.DynamicObject.
func (o *obsObject) Keys() []string { return obsKeys }

// lazyList is a read-only array whose items are built on first access and kept.
type lazyList struct {
	readOnly
	n     int
	items []goja.Value
	item  func(i int) goja.Value
}

// Len implements goja.DynamicArray.
func (l *lazyList) Len() int { return l.n }

// Get implements goja.DynamicArray.
func (l *lazyList) Get(i int) goja.Value {
	if i < 0 || i >= l.n {
		return nil
	}
	if l.items == nil {
		l.items = make([]goja.Value, l.n)
	}
	if l.items[i] == nil {
		l.items[i] = l.item(i)
	}
	return l.items[i]
}

// Set implements goja.DynamicArray (refused).
func (l *lazyList) Set(int, goja.Value) bool { return false }

// recordObject is a small read-only object: values[i] is the value of keys[i]; a nil value is
// computed on first access by fill.
type recordObject struct {
	readOnly
	keys   []string
	values []goja.Value
	fill   func(key string) goja.Value
}

// record builds a read-only object of the given keys and values.
func (rt *policyRuntime) record(keys []string, values ...goja.Value) *goja.Object {
	return rt.w.vm.NewDynamicObject(&recordObject{keys: keys, values: values})
}

// Get implements goja.DynamicObject.
func (r *recordObject) Get(key string) goja.Value {
	i := slices.Index(r.keys, key)
	if i < 0 {
		return nil
	}
	if r.values[i] == nil && r.fill != nil {
		r.values[i] = r.fill(key)
	}
	return r.values[i]
}

// Has implements goja.DynamicObject.
func (r *recordObject) Has(key string) bool { return slices.Contains(r.keys, key) }

// Keys implements goja.DynamicObject.
func (r *recordObject) Keys() []string { return r.keys }

// messageObject is obs.messages[i]; an assistant message's calls are built on first access.
func (rt *policyRuntime) messageObject(i int) goja.Value {
	vm := rt.w.vm
	m := &rt.in.window[i]
	role, content := vm.ToValue(m.Role.String()), vm.ToValue(m.Content)
	switch m.Role {
	case models.RoleAssistant:
		return vm.NewDynamicObject(&recordObject{keys: assistantKeys, values: []goja.Value{role, content, nil},
			fill: func(string) goja.Value {
				return vm.NewDynamicArray(&lazyList{n: len(m.Calls), item: func(j int) goja.Value { return rt.callObject(&m.Calls[j]) }})
			}})
	case models.RoleTool:
		return rt.record(toolKeys, role, content, vm.ToValue(m.CallID), vm.ToValue(rt.in.windowCalls[i].Name), vm.ToValue(m.IsError))
	}
	return rt.record(messageKeys, role, content)
}

// callObject is one call of an assistant message: {id, tool, args}, args parsed on first access.
func (rt *policyRuntime) callObject(c *models.ToolCall) goja.Value {
	vm := rt.w.vm
	return vm.NewDynamicObject(&recordObject{keys: callKeys, values: []goja.Value{vm.ToValue(c.ID), vm.ToValue(c.Name), nil},
		fill: func(string) goja.Value { return rt.parseArgs(c.Args) }})
}

// resultObject is obs.lastResults[i]: {id, name, args, content, isError}.
func (rt *policyRuntime) resultObject(i int) goja.Value {
	vm := rt.w.vm
	m, call := &rt.in.results[i], &rt.in.resultCalls[i]
	return vm.NewDynamicObject(&recordObject{keys: resultKeys,
		values: []goja.Value{vm.ToValue(m.CallID), vm.ToValue(call.Name), nil, vm.ToValue(m.Content), vm.ToValue(m.IsError)},
		fill:   func(string) goja.Value { return rt.parseArgs(call.Args) }})
}

// parseArgs is a call's arguments as a (plain, mutable) object; {} when there are none, and
// the text itself if it is not JSON.
func (rt *policyRuntime) parseArgs(args []byte) goja.Value {
	vm := rt.w.vm
	text := vm.ToValue("{}")
	if len(args) > 0 {
		text = vm.ToValue(string(args))
	}
	parsed, err := rt.w.jsonParse(goja.Undefined(), text)
	if err != nil {
		return text
	}
	return parsed
}

// readReply converts what decide returned into a models.Reply: undefined or null is an empty
// reply; otherwise an object with only text (a string) and calls (an array of {tool, args}).
func (rt *policyRuntime) readReply(value goja.Value) (models.Reply, error) {
	if goja.IsUndefined(value) || goja.IsNull(value) {
		return models.Reply{}, nil
	}
	obj, ok := plainObject(value)
	if !ok {
		return models.Reply{}, rt.replyError("decide must return {text, calls} or nothing, not " + jsType(value))
	}
	if err := rt.onlyKeys(obj, "decide's reply", "text", "calls"); err != nil {
		return models.Reply{}, err
	}
	var reply models.Reply
	if text := obj.Get("text"); text != nil && !goja.IsUndefined(text) {
		s, ok := text.(goja.String)
		if !ok {
			return models.Reply{}, rt.replyError("text must be a string, not " + jsType(text))
		}
		var err error
		if reply.Text, err = rt.capped(s, "text", rt.w.limits.MaxResultBytes); err != nil {
			return models.Reply{}, err
		}
	}
	calls := obj.Get("calls")
	if calls == nil || goja.IsUndefined(calls) || goja.IsNull(calls) {
		return reply, nil
	}
	list, ok := calls.(*goja.Object)
	if !ok || list.ClassName() != "Array" {
		return models.Reply{}, rt.replyError("calls must be an array of {tool, args}, not " + jsType(calls))
	}
	n := list.Get("length").ToInteger()
	if n > MaxPolicyCalls {
		return models.Reply{}, rt.replyError(fmt.Sprintf("decide returned %d calls, over the %d a turn may make", n, MaxPolicyCalls))
	}
	if n == 0 {
		return reply, nil
	}
	reply.Calls = make([]models.ToolCall, n)
	for i := range reply.Calls {
		call, err := rt.readCall(list.Get(strconv.Itoa(i)), i)
		if err != nil {
			return models.Reply{}, err
		}
		reply.Calls[i] = call
	}
	return reply, nil
}

// maxToolName bounds a tool name a policy returns (tool names are short; a huge one is a bug).
const maxToolName = 256

// readCall converts calls[i]: {tool: a name, args: an object (JSON-encoded; absent means {})}.
// The id is left empty for the host to assign.
func (rt *policyRuntime) readCall(value goja.Value, i int) (models.ToolCall, error) {
	where := "calls[" + strconv.Itoa(i) + "]"
	obj, ok := plainObject(value)
	if !ok {
		return models.ToolCall{}, rt.replyError(where + " must be {tool, args}, not " + jsType(value))
	}
	if err := rt.onlyKeys(obj, where, "tool", "args"); err != nil {
		return models.ToolCall{}, err
	}
	name, ok := obj.Get("tool").(goja.String)
	if !ok || name.Length() == 0 || name.Length() > maxToolName {
		return models.ToolCall{}, rt.replyError(where + ".tool must be the name of a tool, as a string")
	}
	call := models.ToolCall{Name: name.String(), Args: emptyArgs}
	args := obj.Get("args")
	if args == nil || goja.IsUndefined(args) {
		return call, nil
	}
	if _, ok := plainObject(args); !ok {
		return models.ToolCall{}, rt.replyError(where + ".args must be an object, not " + jsType(args))
	}
	encoded, err := rt.w.jsonStringify(goja.Undefined(), args)
	rt.w.must(err)
	text, ok := encoded.(goja.String)
	if !ok {
		return models.ToolCall{}, rt.replyError(where + ".args cannot be encoded as JSON")
	}
	s, err := rt.capped(text, where+".args", rt.w.limits.MaxArgBytes)
	if err != nil {
		return models.ToolCall{}, err
	}
	if s[0] != '{' { // an object with toJSON may encode as anything
		return models.ToolCall{}, rt.replyError(where + ".args must encode as a JSON object, not " + truncateUTF8(s, 32))
	}
	call.Args = []byte(s)
	return call, nil
}

// emptyArgs is the arguments of a call that gives none; shared, since the host never modifies
// a call's Args.
var emptyArgs = []byte("{}")

// onlyKeys refuses an object with an own enumerable key other than the valid ones, so a typo
// ("call", "argument") is an error rather than a silently empty reply.
func (rt *policyRuntime) onlyKeys(obj *goja.Object, what string, valid ...string) error {
	for _, key := range obj.Keys() {
		if !slices.Contains(valid, key) {
			return rt.replyError(fmt.Sprintf("%s has an unknown key %q (valid: %s)", what, key, strings.Join(valid, ", ")))
		}
	}
	return nil
}

// capped converts a string of the reply, with ErrTooLarge over limit bytes.
func (rt *policyRuntime) capped(s goja.String, what string, limit int) (string, error) {
	n, unit := s.Length(), "characters" // a UTF-16 unit is at least one UTF-8 byte
	out := ""
	if n <= limit {
		out = s.String()
		n, unit = len(out), "bytes"
	}
	if n > limit {
		return "", newError(rt.code.script.File, rt.code.defined, ErrTooLarge, fmt.Sprintf("%s is %d %s, over the %d-byte cap", what, n, unit, limit))
	}
	return out, nil
}

// plainObject is v as an object that is neither an array nor a function.
func plainObject(v goja.Value) (*goja.Object, bool) {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return nil, false
	}
	return obj, true
}

// jsType names a value's type for an error message, as a script author would say it.
func jsType(v goja.Value) string {
	obj, isObject := v.(*goja.Object)
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	case isObject && isFunction(obj):
		return "a function"
	case isObject && obj.ClassName() == "Array":
		return "an array"
	case isObject:
		return "an object"
	}
	switch v.ExportType().Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int64, reflect.Float64:
		return "a number"
	}
	return "a " + v.ExportType().String()
}

// memoryObject is obs.memory: the agent's memory as JSON.parse would give it, a plain object
// that is the script's own copy (in key order, as json.Marshal sorts them), so nothing the
// script does reaches the host's memory.
func (rt *policyRuntime) memoryObject() goja.Value {
	vm := rt.w.vm
	if len(rt.in.memory) == 0 {
		return vm.NewObject()
	}
	text, err := json.Marshal(rt.in.memory)
	if err != nil { // not reached: every value was decoded from JSON
		panic(vm.NewTypeError("memory: " + err.Error()))
	}
	v, err := rt.w.jsonParse(goja.Undefined(), vm.ToValue(string(text)))
	rt.w.must(err)
	return v
}
