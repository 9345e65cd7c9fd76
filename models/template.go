package models

import (
	"bytes"
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
	}
}

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
)

var dataFieldByName = map[string]dataField{
	"Name":      fieldName,
	"Index":     fieldIndex,
	"Group":     fieldGroup,
	"Stage":     fieldStage,
	"Turn":      fieldTurn,
	"Iteration": fieldIteration,
	"Visit":     fieldVisit,
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
	tmpl, err := template.New("scripted").Parse(s)
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
