package models

import "bytes"

// Prompt is a templated prompt, a blueprint's system_prompt or a stage's prompt, written in the
// vocabulary of scripted templates ({{.Name}}, {{.Group}}, {{.Index}}, {{.Stage}}, {{.Visit}},
// {{.Iteration}}, {{.Turn}}, {{.Task}} and the add, sub, mul, mod and seq functions), compiled once
// when its file loads and rendered for each live turn.
type Prompt struct {
	src string
	t   textTemplate
}

// CompilePrompt parses s; an error says what text/template found wrong, for the loader to place
// at its key.
func CompilePrompt(s string) (*Prompt, error) {
	t, err := compileTemplate(s)
	if err != nil {
		return nil, err
	}
	return &Prompt{src: s, t: t}, nil
}

// Source is the prompt as written.
func (p *Prompt) Source() string { return p.src }

// Render is the prompt for a turn with v.
func (p *Prompt) Render(v *View) (string, error) {
	if p.t.isConstant() {
		return p.t.literal, nil
	}
	d := newTemplateData(v)
	var buf bytes.Buffer
	if err := p.t.render(&buf, &d); err != nil {
		return "", err
	}
	return buf.String(), nil
}
