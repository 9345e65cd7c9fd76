package models

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// templateData is what a scripted template sees as dot. Its field names are the
// documented template vocabulary, so renaming one breaks scenarios.
type templateData struct {
	Name      string
	Index     int
	Group     string
	Stage     string
	Turn      int
	Iteration int
	Visit     int
	// Task is the most recent user message: the agent's task until a message from its inbox
	// arrives (a fan-out worker's item, a spawned agent's task).
	Task string
	// Memory is the agent's memory ({{.Memory.rounds}}); a key never set prints "<no value>".
	Memory map[string]any
}

// newTemplateData copies the templated fields out of a view.
func newTemplateData(v *View) templateData {
	return templateData{
		Name:      v.Agent.Name,
		Index:     v.Agent.Index,
		Group:     v.Agent.Group,
		Stage:     v.Stage,
		Turn:      v.Turn,
		Iteration: v.Iteration,
		Visit:     v.Visit,
		Task:      lastUserMessage(v.Messages),
		Memory:    v.Memory,
	}
}

// lastUserMessage is the content of the most recent user message ("" when there is none).
func lastUserMessage(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// templateFuncs are the functions scripted templates may call beyond text/template's
// built-ins: integer arithmetic and ranges, for scripts that number things (a fan-out's items,
// the children a planner spawns).
var templateFuncs = template.FuncMap{
	"add": func(a, b int) int { return a + b },
	"sub": func(a, b int) int { return a - b },
	"mul": func(a, b int) int { return a * b },
	"mod": func(a, b int) (int, error) {
		if b == 0 {
			return 0, errors.New("mod by zero")
		}
		return a % b, nil
	},
	// seq returns the integers from first to last inclusive (at most maxSeq of them).
	"seq": func(first, last int) ([]int, error) {
		if last < first {
			return nil, nil
		}
		if last-first >= maxSeq {
			return nil, fmt.Errorf("seq %d %d: at most %d numbers", first, last, maxSeq)
		}
		out := make([]int, 0, last-first+1)
		for i := first; i <= last; i++ {
			out = append(out, i)
		}
		return out, nil
	},
}

// maxSeq bounds one seq call, so a typo cannot allocate without limit.
const maxSeq = 1_000_000

// dataField names one templateData field for the reflection-free renderer.
type dataField uint8

const (
	fieldNone dataField = iota // the segment is literal text
	fieldName
	fieldIndex
	fieldGroup
	fieldStage
	fieldTurn
	fieldIteration
	fieldVisit
	fieldTask
)

var dataFieldByName = map[string]dataField{
	"Name":      fieldName,
	"Index":     fieldIndex,
	"Group":     fieldGroup,
	"Stage":     fieldStage,
	"Turn":      fieldTurn,
	"Iteration": fieldIteration,
	"Visit":     fieldVisit,
	"Task":      fieldTask,
}

// segment is literal text or one field reference of a simple template.
type segment struct {
	text  string
	field dataField
}

// textTemplate is a compiled scripted string. Exactly one form is used:
//   - literal: the string has no "{{" and is returned as is (no work per call);
//   - segments: the template is only text and {{.Field}} actions, rendered by appending
//     without reflection (what almost every scenario writes);
//   - general: anything else (pipelines, printf, if, ...) runs through text/template.
type textTemplate struct {
	literal  string
	segments []segment
	general  *template.Template
}

// isConstant reports whether rendering never depends on the agent.
func (t *textTemplate) isConstant() bool {
	return t.segments == nil && t.general == nil
}

// compileTemplate parses s once; the caller prefixes errors with the key path.
func compileTemplate(s string) (textTemplate, error) {
	if !strings.Contains(s, "{{") {
		return textTemplate{literal: s}, nil
	}
	tmpl, err := template.New("scripted").Funcs(templateFuncs).Parse(s)
	if err != nil {
		return textTemplate{}, err
	}
	if segs, ok := simpleSegments(tmpl.Tree); ok {
		return textTemplate{segments: segs}, nil
	}
	// Trial-render for a zero-valued agent so unknown fields fail at load time.
	if err := tmpl.Execute(io.Discard, &templateData{}); err != nil {
		return textTemplate{}, err
	}
	return textTemplate{general: tmpl}, nil
}

// simpleSegments flattens a template made only of text and {{.Field}} actions naming a
// known field; ok is false for anything richer.
func simpleSegments(tree *parse.Tree) (segs []segment, ok bool) {
	if tree == nil || tree.Root == nil {
		return nil, false
	}
	segs = make([]segment, 0, len(tree.Root.Nodes))
	for _, node := range tree.Root.Nodes {
		switch n := node.(type) {
		case *parse.TextNode:
			segs = append(segs, segment{text: string(n.Text)})
		case *parse.ActionNode:
			field, ok := simpleField(n)
			if !ok {
				return nil, false
			}
			segs = append(segs, segment{field: field})
		default:
			return nil, false
		}
	}
	return segs, true
}

// simpleField recognises an action that is exactly {{.Field}} of a known field.
func simpleField(n *parse.ActionNode) (dataField, bool) {
	pipe := n.Pipe
	if pipe == nil || len(pipe.Decl) != 0 || len(pipe.Cmds) != 1 || len(pipe.Cmds[0].Args) != 1 {
		return fieldNone, false
	}
	f, ok := pipe.Cmds[0].Args[0].(*parse.FieldNode)
	if !ok || len(f.Ident) != 1 {
		return fieldNone, false
	}
	field, ok := dataFieldByName[f.Ident[0]]
	return field, ok
}

// render appends the template's output for d to buf. It never fails for the literal
// and segment forms; the general form reports text/template execution errors.
func (t *textTemplate) render(buf *bytes.Buffer, d *templateData) error {
	switch {
	case t.general != nil:
		// text/template keeps its data reachable from the heap; copying here keeps
		// the caller's data on its stack for the common, reflection-free forms.
		data := *d
		return t.general.Execute(buf, &data)
	case t.segments != nil:
		for _, s := range t.segments {
			appendField(buf, s, d)
		}
	default:
		buf.WriteString(t.literal)
	}
	return nil
}

// appendField writes one segment exactly as text/template would print it.
func appendField(buf *bytes.Buffer, s segment, d *templateData) {
	switch s.field {
	case fieldNone:
		buf.WriteString(s.text)
	case fieldName:
		buf.WriteString(d.Name)
	case fieldGroup:
		buf.WriteString(d.Group)
	case fieldStage:
		buf.WriteString(d.Stage)
	case fieldIndex:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(d.Index), 10))
	case fieldTurn:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(d.Turn), 10))
	case fieldIteration:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(d.Iteration), 10))
	case fieldVisit:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(d.Visit), 10))
	case fieldTask:
		buf.WriteString(d.Task)
	}
}

// renderString renders the template to a string, using buf as scratch space.
func (t *textTemplate) renderString(buf *bytes.Buffer, d *templateData) (string, error) {
	if t.isConstant() {
		return t.literal, nil
	}
	buf.Reset()
	if err := t.render(buf, d); err != nil {
		return "", err
	}
	return buf.String(), nil
}
