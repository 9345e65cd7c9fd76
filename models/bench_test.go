package models

import (
	"context"
	"testing"
)

func BenchmarkScriptedTurnConstant(b *testing.B) {
	s := mustScripted(b, []ScriptedTurn{{
		Text:  "reading the task",
		Calls: []ScriptedCall{{Tool: "read_file", Args: map[string]any{"path": "TASK.md", "limit": int64(200)}}},
	}}, ExhaustedRepeatLast)
	v := testView("plan", 3)
	var st State
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Turn(context.Background(), &st, v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScriptedTurnTemplated(b *testing.B) {
	s := mustScripted(b, []ScriptedTurn{{
		Text: "{{.Name}} reading turn {{.Turn}}",
		Calls: []ScriptedCall{{Tool: "write_file", Args: map[string]any{
			"path":    "/work/{{.Name}}/{{.Turn}}.txt",
			"content": "stage {{.Stage}} visit {{.Visit}}",
			"mode":    "overwrite",
		}}},
	}}, ExhaustedRepeatLast)
	v := testView("plan", 3)
	var st State
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Turn(context.Background(), &st, v); err != nil {
			b.Fatal(err)
		}
	}
}
