package scripting

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/warrenhq/warren/models"
)

// benchGossip is a policy shaped like the shipped gossip voter: it reads its own opinion back
// from its last write_file call, tallies the previous turn's results and picks three peers.
const benchGossip = `
function lastWritten(obs) {
  for (let i = obs.messages.length - 1; i >= 0; i--) {
    const m = obs.messages[i];
    if (m.role !== "assistant") continue;
    for (const c of m.calls) if (c.tool === "write_file") return c.args.content;
  }
  return "red";
}
definePolicy(function decide(obs) {
  const mine = lastWritten(obs);
  let red = mine === "red" ? 1 : 0, blue = 1 - red;
  for (const r of obs.lastResults) {
    if (r.isError) continue;
    if (r.content === "red") red++; else if (r.content === "blue") blue++;
  }
  const opinion = red > blue ? "red" : blue > red ? "blue" : mine;
  const calls = [{ tool: "write_file", args: { path: "opinions/r1/" + obs.agent.name + ".txt", content: opinion } }];
  for (let k = 0; k < 3; k++) {
    const peer = obs.agent.index + 1 + Math.floor(Math.random() * 5);
    calls.push({ tool: "read_file", args: { path: "opinions/r0/voters-" + String(peer).padStart(4, "0") + ".txt" } });
  }
  return { text: obs.agent.name + " leans " + opinion, calls: calls };
});`

// benchView is a gossip agent's view at its third turn: a task, a write, three reads.
func benchView() *models.View {
	return &models.View{
		Agent: models.AgentInfo{ID: 43, Name: "voters-0042", Group: "voters", Index: 42},
		Stage: "gossip", Iteration: 2, Visit: 1, Turn: 2,
		Tools: []models.ToolInfo{{Name: "read_file"}, {Name: "write_file"}},
		Messages: []models.Message{
			{Role: models.RoleUser, Content: "Gossip, then vote red or blue."},
			{Role: models.RoleAssistant, Content: "voters-0042 leans red", Calls: []models.ToolCall{
				{ID: "voters-0042-t0-c0", Name: "write_file", Args: json.RawMessage(`{"path":"opinions/r0/voters-0042.txt","content":"red"}`)},
			}},
			{Role: models.RoleTool, CallID: "voters-0042-t0-c0", Content: `Wrote 3 bytes to "opinions/r0/voters-0042.txt" (new file)`},
			{Role: models.RoleAssistant, Calls: []models.ToolCall{
				{ID: "voters-0042-t1-c0", Name: "read_file", Args: json.RawMessage(`{"path":"opinions/r0/voters-0040.txt"}`)},
				{ID: "voters-0042-t1-c1", Name: "read_file", Args: json.RawMessage(`{"path":"opinions/r0/voters-0043.txt"}`)},
				{ID: "voters-0042-t1-c2", Name: "read_file", Args: json.RawMessage(`{"path":"opinions/r0/voters-0045.txt"}`)},
			}},
			{Role: models.RoleTool, CallID: "voters-0042-t1-c0", Content: "blue"},
			{Role: models.RoleTool, CallID: "voters-0042-t1-c1", Content: "blue"},
			{Role: models.RoleTool, CallID: "voters-0042-t1-c2", Content: "red"},
		},
		Rand: rand.New(rand.NewPCG(1, 2)),
	}
}

// BenchmarkPolicyTurn measures one decide through Policy.Turn, as the dispatch system makes it
// on the world's goroutine: "empty" is the fixed cost (hand-off to the runtime's goroutine, the
// file's top level, the observation); "gossip" a realistic voter turn.
func BenchmarkPolicyTurn(b *testing.B) {
	for _, bc := range []struct{ name, src string }{
		{"empty", `definePolicy(function decide(obs) { return {}; });`},
		{"gossip", benchGossip},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := CompilePolicy("js:bench", "bench.js", []byte(bc.src), Limits{})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			v := benchView()
			st := &models.State{}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Turn(context.Background(), st, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
