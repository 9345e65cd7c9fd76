package blueprint

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/memory"
)

// Conditions on transitions (`when`) and the values of their `set` actions are expressions in
// expr (github.com/expr-lang/expr), compiled once per blueprint against ConditionEnv, so a name
// that does not exist, a field the environment lacks or a comparison of mismatched types is a
// load error with its position, not a surprise at tick 10^5. docs/decisions.md ("Conditions:
// expr over CEL") has the measurements that chose expr.

var (
	// ErrBadCondition: a transition's when, or a value of its set, is not a valid expression
	// over what a condition can read (docs/blueprints.md, "Conditions").
	ErrBadCondition = errors.New("invalid condition")
	// ErrNoFallback: a stage's conditional transitions can all fail to hold for an outcome
	// with no transition after them that fires without a condition, so an agent could be left
	// with no transition the graph names.
	ErrNoFallback = errors.New("conditional transitions without a fallback")
	// ErrConditionFailed is wrapped by a condition's or set value's evaluation error at run
	// time (a field of a result that is not an object, arithmetic on a missing memory key):
	// the agent fails with it, naming the transition.
	ErrConditionFailed = errors.New("condition failed")
)

// ConditionEnv is what a transition's condition (and each value of its set) reads: what the
// stage visit produced and the agent's state when the visit ended. The expr tags are the
// documented names (docs/blueprints.md, "Conditions"), so renaming one breaks blueprints.
// The host fills only the fields its blueprint's conditions read (Blueprint.Reads).
type ConditionEnv struct {
	// Outcome is how the visit ended: "done", "error" or "max_iterations".
	Outcome string `expr:"outcome"`
	// Stage is the stage's name.
	Stage string `expr:"stage"`
	// Visit counts the agent's visits of the stage, this one included (1 on the first);
	// Iteration is the model turns this visit took.
	Visit     int `expr:"visit"`
	Iteration int `expr:"iteration"`
	// Result is the last tool result of the visit: its JSON value when the content is JSON,
	// else its text; nil when the visit called no tool. ResultError says it was an error.
	Result      any  `expr:"result"`
	ResultError bool `expr:"result_error"`
	// Text is the model's final text of the visit (what its last turn said).
	Text string `expr:"text"`
	// Tools holds, by tool name, the last result (decoded as Result is) of each tool the
	// blueprint's conditions name (tools.review), over the agent's whole run; a tool not called
	// yet is absent (nil). A tool whose result schema the blueprint declares ([result_schemas])
	// holds nil unless its last result matches it and is not an error result
	// (Blueprint.ToolValue).
	Tools map[string]any `expr:"tools"`
	// Counters are the agent's counts over its whole run.
	Counters ConditionCounters `expr:"counters"`
	// Inbox holds the messages waiting for the agent (sent to it, or a child's end), oldest
	// first.
	Inbox []string `expr:"inbox"`
	// Memory is the agent's key-value memory (memory_set, set actions); a key never set reads
	// as nil.
	Memory map[string]any `expr:"memory"`
	// Name, Group and Index identify the agent.
	Name  string `expr:"name"`
	Group string `expr:"group"`
	Index int    `expr:"index"`
}

// ConditionCounters are the agent's run-wide counts a condition reads as counters.*.
type ConditionCounters struct {
	Turns       int `expr:"turns"`
	ToolCalls   int `expr:"tool_calls"`
	ToolErrors  int `expr:"tool_errors"`
	Transitions int `expr:"transitions"`
}

// Reads says which of ConditionEnv's costly fields a blueprint's conditions read, so the host
// keeps and fills only those: an agent whose blueprint reads no result keeps none.
type Reads struct {
	// Result: result or result_error; Text: text; Inbox: inbox; Memory: memory.
	Result, Text, Inbox, Memory bool
	// Tools are the tools named through tools.<name> (sorted, no repeats).
	Tools []string
}

// Any reports whether anything is read that the host must keep for it.
func (r *Reads) Any() bool { return r.Result || r.Text || len(r.Tools) > 0 }

// Expression is one compiled expression of a transition: its condition or a set value.
type Expression struct {
	// Source is the expression as written, for traces and messages.
	Source string
	// At is where it was written ("stages[2].transitions[0].when"), for run-time errors.
	At      string
	program *vm.Program
}

// Assignment is one key of a transition's set: the memory key and the value's expression.
type Assignment struct {
	Key   string
	Value Expression
}

// conditionOptions are the compile options of every expression: the environment's types, and
// no builtin whose answer depends on the wall clock, the local time zone or map order
// (determinism: docs/decisions.md).
var conditionOptions = append([]expr.Option{expr.Env(ConditionEnv{})}, conditionRules...)

// conditionRules are the compile options of every expression but its environment.
var conditionRules = []expr.Option{
	expr.DisableBuiltin("now"),
	expr.DisableBuiltin("date"),
	expr.DisableBuiltin("timezone"),
	expr.DisableBuiltin("keys"),
	expr.DisableBuiltin("values"),
	expr.DisableBuiltin("toPairs"),
}

// conditionVocabulary is named in error messages: what an expression may read.
const conditionVocabulary = "outcome, stage, visit, iteration, result, result_error, text, tools.<tool>, counters.{turns,tool_calls,tool_errors,transitions}, inbox, memory.<key>, name, group, index"

// compileExpression compiles src (at path) as a condition (asBool) or a set value, recording
// what it reads in reads; known are the tools a tools.<name> may name. ok is false after an
// error was reported.
func (c *compiler) compileExpression(path, src string, asBool bool, known func(string) bool, reads *Reads) (Expression, bool) {
	if strings.TrimSpace(src) == "" {
		c.errorf(path, "%w: the expression is empty; write one over %s", ErrBadCondition, conditionVocabulary)
		return Expression{}, false
	}
	opts := conditionOptions
	if asBool {
		opts = append(slices.Clip(opts), expr.AsBool())
	}
	program, err := expr.Compile(src, opts...)
	if err != nil {
		msg := describeExprError(err)
		if strings.Contains(msg, "unknown name") || strings.Contains(msg, "has no field") {
			msg += "; an expression reads " + conditionVocabulary
		}
		c.errorf(path, "%w: %s", ErrBadCondition, msg)
		return Expression{}, false
	}
	v := &readsVisitor{reads: reads}
	node := program.Node()
	ast.Walk(&node, v)
	for _, p := range v.problems {
		c.errorf(path, "%w: %s", ErrBadCondition, p)
	}
	for _, tool := range v.tools {
		if !known(tool) {
			c.errorf(path, "%w: tools.%s names a tool no stage of the blueprint offers, so it would never have a result; tools the stages offer: %s", ErrBadCondition, tool, c.offeredTools)
			v.problems = append(v.problems, tool)
		}
	}
	if len(v.problems) == 0 && !c.typeCheck(path, src, asBool, v.tools) {
		return Expression{}, false
	}
	return Expression{Source: src, At: path, program: program}, len(v.problems) == 0
}

// typeCheck compiles src again with tools.<tool> of its declared result type, for the tools it
// names that have one (the program that runs is the one compiled against ConditionEnv), and
// reports a misuse of a declared type at path. It reports whether src passed.
func (c *compiler) typeCheck(path, src string, asBool bool, named []string) bool {
	var typed []string
	for _, tool := range named {
		if c.results[tool] != nil && !slices.Contains(typed, tool) {
			typed = append(typed, tool)
		}
	}
	if len(typed) == 0 {
		return true
	}
	if c.typedEnv == nil {
		c.typedEnv = conditionTypes(c.results)
	}
	opts := append([]expr.Option{expr.Env(c.typedEnv)}, conditionRules...)
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	if _, err := expr.Compile(src, opts...); err != nil {
		slices.Sort(typed)
		for i, tool := range typed {
			typed[i] = "result_schemas." + tool
		}
		c.errorf(path, "%w: %s, against the result schema the blueprint declares (%s)", ErrBadCondition, describeExprError(err), strings.Join(typed, ", "))
		return false
	}
	return true
}

// describeExprError turns expr's error, whose text spans lines (a snippet with a caret), into
// one line: the message and where in the expression.
func describeExprError(err error) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		msg := strings.ReplaceAll(fe.Message, "type blueprint.ConditionCounters", "counters")
		if fe.Line > 0 {
			msg += " (line " + strconv.Itoa(fe.Line) + ", column " + strconv.Itoa(fe.Column+1) + " of the expression)"
		}
		return msg
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// readsVisitor records what an expression reads, and which tools it names.
type readsVisitor struct {
	reads    *Reads
	tools    []string
	problems []string
}

// Visit implements ast.Visitor.
func (v *readsVisitor) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		switch n.Value {
		case "result", "result_error":
			v.reads.Result = true
		case "text":
			v.reads.Text = true
		case "inbox":
			v.reads.Inbox = true
		case "memory":
			v.reads.Memory = true
		}
	case *ast.MemberNode:
		id, ok := n.Node.(*ast.IdentifierNode)
		if !ok || id.Value != "tools" {
			return
		}
		name, ok := n.Property.(*ast.StringNode)
		if !ok {
			v.problems = append(v.problems, "tools must be indexed by a tool's name written out (tools.review or tools[\"review\"]), so the host knows at load which results to keep")
			return
		}
		v.tools = append(v.tools, name.Value)
		if i, found := slices.BinarySearch(v.reads.Tools, name.Value); !found {
			v.reads.Tools = slices.Insert(v.reads.Tools, i, name.Value)
		}
	}
}

// Holds evaluates a condition against env. An error (a field of a value that is not an
// object, arithmetic on nil) wraps ErrConditionFailed and names where the condition was
// written.
func (x *Expression) Holds(machine *vm.VM, env *ConditionEnv) (bool, error) {
	out, err := x.Eval(machine, env)
	if err != nil {
		return false, err
	}
	b, _ := out.(bool) // AsBool at compile time makes every result a bool
	return b, nil
}

// Eval evaluates the expression against env on machine (a VM the caller reuses, so an
// evaluation allocates only what the expression builds).
func (x *Expression) Eval(machine *vm.VM, env *ConditionEnv) (any, error) {
	out, err := machine.Run(x.program, env)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %s", ErrConditionFailed, x.At, x.Source, describeExprError(err))
	}
	return out, nil
}

// pendingCondition is a transition whose when and set wait to be compiled: stage and
// transition index it in the blueprint, path where it was written.
type pendingCondition struct {
	stage, transition int
	path              string
	raw               *fileTransition
}

// offeredTools lists the tools the blueprint's stages offer, sorted.
func offeredTools(bp *Blueprint) []string {
	offered := map[string]bool{}
	for i := range bp.Stages {
		for _, t := range bp.Stages[i].AvailableTools {
			offered[t] = true
		}
	}
	return slices.Sorted(maps.Keys(offered))
}

// conditions compiles the when and set of every pending transition, against the tools the
// blueprint's stages offer (what tools.<name> may name) and their declared result schemas, and
// records what they read.
func (c *compiler) conditions(bp *Blueprint) {
	if len(c.pending) == 0 {
		return
	}
	offered := offeredTools(bp)
	c.offeredTools = listOrNone(offered)
	c.results = bp.resultSchemas
	known := func(tool string) bool { _, ok := slices.BinarySearch(offered, tool); return ok }
	for _, p := range c.pending {
		st := &bp.Stages[p.stage]
		t := &st.Transitions[p.transition]
		st.conditional = true
		if p.raw.When != nil {
			if x, ok := c.compileExpression(p.path+".when", *p.raw.When, true, known, &bp.Reads); ok {
				t.When = &x
			} else {
				c.badGraph = true
			}
		}
		for _, key := range slices.Sorted(maps.Keys(p.raw.Set)) {
			at := tomlfile.JoinKey(p.path+".set", key)
			if err := memory.CheckKey(key); err != nil {
				c.errorf(at, "%w", err)
				continue
			}
			if x, ok := c.compileExpression(at, p.raw.Set[key], false, known, &bp.Reads); ok {
				t.Set = append(t.Set, Assignment{Key: key, Value: x})
			}
		}
	}
}

// checkFallbacks reports every stage outcome that conditional transitions catch with no
// transition after them that fires on it without a condition: when none of the conditions
// holds the agent would be left with no transition, which the graph should say outright.
func (c *compiler) checkFallbacks(bp *Blueprint) {
	for i := range bp.Stages {
		st := &bp.Stages[i]
		if !st.conditional {
			continue
		}
		var lacking []string
		last := -1
		for _, o := range st.outcomes() {
			cands := st.candidates(o)
			if len(cands) == 0 || st.Transitions[cands[len(cands)-1]].When == nil {
				continue
			}
			lacking = append(lacking, o.String())
			last = max(last, cands[len(cands)-1])
		}
		if len(lacking) == 0 {
			continue
		}
		path := tomlfile.JoinIndex(tomlfile.JoinIndex("stages", i)+".transitions", last)
		c.errorf(path, "%w: when stage %q ends %s and no condition of its transitions holds, no transition is left for the agent; add a transition after this one with no when, on = \"always\" (or on %s), to a stage or with end = \"done\"",
			ErrNoFallback, st.Name, orList(lacking), orList(lacking))
	}
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
