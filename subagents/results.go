package subagents

import (
	"bytes"
	"encoding/json"
)

// The results the sub-agent tools return are JSON objects built from structs, never maps, so the
// field order is fixed and a golden trace stays byte-identical from run to run. HTML escaping is
// off: a model should read "<" in an output, not "\u003c".

// AgentStatus is what check_agent and wait_for_agent return (and spawn_agent, and list_agents per
// entry): the state of one agent as its ancestors may see it.
type AgentStatus struct {
	// ID is the agent's name, the id tools address it by.
	ID string `json:"id"`
	// Blueprint is the blueprint it runs.
	Blueprint string `json:"blueprint,omitempty"`
	// Depth is 0 for a top-level agent, one more per generation below.
	Depth int `json:"depth"`
	// Status is "running" while it works and "done", "failed" or "killed" once it has ended.
	Status string `json:"status"`
	// Stage is its current (or final) stage.
	Stage string `json:"stage,omitempty"`
	// Reason says why it failed or was killed.
	Reason string `json:"reason,omitempty"`
	// Output is its final answer, once done.
	Output string `json:"output,omitempty"`
	// ModelTurns counts the model turns it has taken.
	ModelTurns int `json:"model_turns"`
	// ToolCalls counts the tool calls it has made.
	ToolCalls int `json:"tool_calls"`
	// LiveChildren counts its children that have not ended.
	LiveChildren int `json:"live_children"`
	// Inbox counts messages queued for it and not yet read.
	Inbox int `json:"inbox,omitempty"`
}

// JSON renders the status as the one-line JSON object the tools return.
func (s AgentStatus) JSON() string { return encode(s) }

// agentList is list_agents' result.
type agentList struct {
	Agents  []AgentStatus `json:"agents"`
	Total   int           `json:"total"`
	Omitted int           `json:"omitted"`
}

// ListJSON renders list_agents' result, {"agents":[...],"total":N,"omitted":M}: the entries shown
// (a caller keeps at most its limit of them), how many agents there are in all (total, never less
// than len(shown)), and how many were left out to keep the result short. An empty list renders as
// "agents":[], never null.
func ListJSON(shown []AgentStatus, total int) string {
	if shown == nil {
		shown = []AgentStatus{}
	}
	total = max(total, len(shown))
	return encode(agentList{Agents: shown, Total: total, Omitted: total - len(shown)})
}

// killReport is kill_agent's result.
type killReport struct {
	Killed []string `json:"killed"`
	Count  int      `json:"count"`
}

// KillJSON renders kill_agent's result, {"killed":[names...],"count":N}, the names in the order
// they were killed (LiveSubtree's: the named agent, then its subtree).
func KillJSON(killed []string) string {
	if killed == nil {
		killed = []string{}
	}
	return encode(killReport{Killed: killed, Count: len(killed)})
}

// sentReport is send_to_agent's result.
type sentReport struct {
	ID     string `json:"id"`
	Queued bool   `json:"queued"`
	Inbox  int    `json:"inbox"`
}

// SentJSON renders send_to_agent's result, {"id":...,"queued":true,"inbox":N}, N being the
// messages now waiting in the recipient's inbox, this one included.
func SentJSON(id string, inbox int) string {
	return encode(sentReport{ID: id, Queued: true, Inbox: inbox})
}

// encode marshals v without HTML escaping and without the encoder's trailing newline. The values
// are plain structs of strings, ints and bools, which always marshal.
func encode(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return `{"error":"cannot encode the result"}`
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
}
