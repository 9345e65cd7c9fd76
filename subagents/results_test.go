package subagents

import (
	"encoding/json"
	"testing"
)

func TestResultJSON(t *testing.T) {
	statuses := []AgentStatus{
		{ID: "p/1", Blueprint: "coder", Depth: 1, Status: "done", Stage: "report", Output: "a < b & c", ModelTurns: 3, ToolCalls: 2},
		{ID: "p/2", Depth: 1, Status: "running", LiveChildren: 1, Inbox: 2},
		{ID: "p/3", Depth: 1, Status: "killed", Reason: "killed by p"},
	}
	cases := []struct {
		name, got, want string
	}{
		{"full status keeps field order and does not escape HTML", statuses[0].JSON(),
			`{"id":"p/1","blueprint":"coder","depth":1,"status":"done","stage":"report","output":"a < b & c","model_turns":3,"tool_calls":2,"live_children":0}`},
		{"running status with inbox", statuses[1].JSON(),
			`{"id":"p/2","depth":1,"status":"running","model_turns":0,"tool_calls":0,"live_children":1,"inbox":2}`},
		{"list under the limit", ListJSON(statuses[2:], len(statuses[2:])),
			`{"agents":[{"id":"p/3","depth":1,"status":"killed","reason":"killed by p","model_turns":0,"tool_calls":0,"live_children":0}],"total":1,"omitted":0}`},
		{"list over the limit", ListJSON(statuses[:1], len(statuses)),
			`{"agents":[` + statuses[0].JSON() + `],"total":3,"omitted":2}`},
		{"a total below the entries shown counts them", ListJSON(statuses[:2], 0),
			`{"agents":[` + statuses[0].JSON() + `,` + statuses[1].JSON() + `],"total":2,"omitted":0}`},
		{"empty list", ListJSON(nil, 0), `{"agents":[],"total":0,"omitted":0}`},
		{"kill", KillJSON([]string{"p/1", "p/1/1"}), `{"killed":["p/1","p/1/1"],"count":2}`},
		{"kill of nothing", KillJSON(nil), `{"killed":[],"count":0}`},
		{"sent", SentJSON("p/1", 3), `{"id":"p/1","queued":true,"inbox":3}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got  %s\nwant %s", tc.got, tc.want)
			}
			if !json.Valid([]byte(tc.got)) {
				t.Errorf("not valid JSON: %s", tc.got)
			}
		})
	}
}
