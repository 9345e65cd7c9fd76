package components

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/warrenhq/warren/blueprint"
)

// StageOutput is what an agent's stage visits produced that its blueprint's conditions read
// (blueprint.Reads): the last tool result and the model's last text of the current visit, and
// the last result of each tool a condition names, over the run. Only an agent whose blueprint
// reads one of them keeps a StageOutput (AgentData.Output), so every other agent pays a nil
// pointer.
type StageOutput struct {
	// Result is the content of the visit's last tool result, HasResult whether there was one,
	// ResultError whether it was an error result.
	Result                 string
	HasResult, ResultError bool
	// Text is what the model's last turn of the visit said.
	Text string
	// Tools are the last results of the tools the conditions name, sorted by tool.
	Tools []ToolOutput
}

// ToolOutput is the last result of one tool.
type ToolOutput struct {
	Tool, Content string
	IsError       bool
}

// FileResult notes one filed tool result, keeping what reads asks for.
func (o *StageOutput) FileResult(reads *blueprint.Reads, tool, content string, isError bool) {
	if reads.Result {
		o.Result, o.HasResult, o.ResultError = content, true, isError
	}
	if _, named := slices.BinarySearch(reads.Tools, tool); !named {
		return
	}
	i, found := slices.BinarySearchFunc(o.Tools, tool, func(t ToolOutput, name string) int { return strings.Compare(t.Tool, name) })
	if !found {
		o.Tools = slices.Insert(o.Tools, i, ToolOutput{Tool: tool})
	}
	o.Tools[i].Content, o.Tools[i].IsError = content, isError
}

// EnterStage forgets what the previous visit produced: result and text are the visit's own,
// named tools' results are kept.
func (o *StageOutput) EnterStage() {
	o.Result, o.HasResult, o.ResultError, o.Text = "", false, false, ""
}

// Image returns the output as data sharing nothing with o.
func (o *StageOutput) Image() *StageOutput {
	if o == nil {
		return nil
	}
	img := *o
	img.Tools = slices.Clone(o.Tools)
	return &img
}

// ResultValue is how a condition sees a tool result's content: its JSON value when the content
// is one JSON value (an object, an array, a string, a number, true, false or null), else the
// text itself.
func ResultValue(content string) any {
	s := strings.TrimSpace(content)
	if s == "" {
		return content
	}
	switch c := s[0]; {
	case c == '{' || c == '[' || c == '"' || c == '-' || c >= '0' && c <= '9' || s == "true" || s == "false" || s == "null":
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			return v
		}
	}
	return content
}
