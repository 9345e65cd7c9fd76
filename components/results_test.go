package components

import (
	"strings"
	"testing"
)

// TestWatchResult: a result is filed under each watch of its tool (and agent), matching on
// kind and content; until one matches, the watch counts the calls and keeps the start of the
// last result, bounded and cut at a character boundary; after, it changes no more.
func TestWatchResult(t *testing.T) {
	type result struct {
		agent, tool, content string
		isError              bool
	}
	long := strings.Repeat("é", ResultSnippet) // two bytes a character
	tests := []struct {
		name    string
		watch   ResultWatch
		results []result
		want    []ResultSeen
	}{
		{name: "another tool's results are not filed", watch: ResultWatch{ID: 1, Tool: "read_file"},
			results: []result{{"a", "write_file", "x", false}}},
		{name: "any result of the tool matches an empty watch", watch: ResultWatch{ID: 1, Tool: "read_file"},
			results: []result{{"a", "read_file", "", true}}, want: []ResultSeen{{ID: 1, Matched: true, Calls: 1}}},
		{name: "the content must contain the text", watch: ResultWatch{ID: 2, Tool: "read_file", Contains: "hello"},
			results: []result{{"a", "read_file", "goodbye", false}, {"a", "read_file", "say hello", false}},
			want:    []ResultSeen{{ID: 2, Matched: true, Calls: 2}}},
		{name: "a success is wanted", watch: ResultWatch{ID: 3, Tool: "read_file", Contains: "no such", Want: OKResult},
			results: []result{{"a", "read_file", "no such file", true}},
			want:    []ResultSeen{{ID: 3, Calls: 1, Last: "no such file", LastError: true}}},
		{name: "an error is wanted", watch: ResultWatch{ID: 3, Tool: "read_file", Want: ErrorResult},
			results: []result{{"a", "read_file", "text", false}, {"a", "read_file", "denied", true}},
			want:    []ResultSeen{{ID: 3, Matched: true, Calls: 2}}},
		{name: "a match is final", watch: ResultWatch{ID: 4, Tool: "t"},
			results: []result{{"a", "t", "one", false}, {"a", "t", "two", true}},
			want:    []ResultSeen{{ID: 4, Matched: true, Calls: 1}}},
		{name: "a watch of one agent ignores the others", watch: ResultWatch{ID: 5, Agent: "b", Tool: "t"},
			results: []result{{"a", "t", "x", false}}},
		{name: "the last result is kept bounded", watch: ResultWatch{ID: 6, Tool: "t", Contains: "never"},
			results: []result{{"a", "t", long, false}},
			want:    []ResultSeen{{ID: 6, Calls: 1, Last: long[:ResultSnippet] + "…"}}},
		{name: "the bound never splits a character", watch: ResultWatch{ID: 7, Tool: "t", Contains: "never"},
			results: []result{{"a", "t", "x" + long, false}},
			want:    []ResultSeen{{ID: 7, Calls: 1, Last: "x" + long[:ResultSnippet-2] + "…"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &AgentData{Name: "a"}
			for _, r := range tt.results {
				d.Name = r.agent
				d.WatchResult([]ResultWatch{tt.watch}, r.tool, r.content, r.isError)
			}
			var seen []ResultSeen
			if d.Seen != nil {
				seen = d.Seen.List
			}
			if len(seen) != len(tt.want) {
				t.Fatalf("seen %+v, want %+v", seen, tt.want)
			}
			for i := range seen {
				if seen[i] != tt.want[i] {
					t.Errorf("seen %+v, want %+v", seen[i], tt.want[i])
				}
			}
		})
	}
}
