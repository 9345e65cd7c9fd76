package models

import (
	"reflect"
	"testing"
)

// TestScriptedPlan: Plan lists the turns as written, a repeated turn once, with the keys a loader
// reports them at; a failing turn keeps its stage and calls nothing.
func TestScriptedPlan(t *testing.T) {
	tests := []struct {
		name  string
		turns []ScriptedTurn
		want  []PlannedTurn
	}{
		{name: "no turns"},
		{name: "stages and calls", turns: []ScriptedTurn{
			{Stage: "draft", Calls: []ScriptedCall{{Tool: "write_file"}, {Tool: "read_file"}}},
			{Text: "done"},
		}, want: []PlannedTurn{
			{Key: "turns[0]", Stage: "draft", Calls: []PlannedCall{{Key: "turns[0].calls[0].tool", Tool: "write_file"}, {Key: "turns[0].calls[1].tool", Tool: "read_file"}}},
			{Key: "turns[1]"},
		}},
		{name: "a repeated turn is listed once", turns: []ScriptedTurn{
			{Stage: "a", Repeat: 3, Calls: []ScriptedCall{{Tool: "x"}}},
			{Stage: "a", Repeat: 2},
		}, want: []PlannedTurn{
			{Key: "turns[0]", Stage: "a", Calls: []PlannedCall{{Key: "turns[0].calls[0].tool", Tool: "x"}}},
			{Key: "turns[1]", Stage: "a"},
		}},
		{name: "a failing turn", turns: []ScriptedTurn{{Stage: "b", Error: "overloaded"}},
			want: []PlannedTurn{{Key: "turns[0]", Stage: "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewScripted("scripted:plan", tt.turns, ExhaustedFinish)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Plan(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Plan() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
