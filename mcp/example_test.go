package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/tools"
)

// A Manager against Warren's own test server: discover the tools, lease the server for one
// agent, call a tool, reap the agent and read the lifecycle events.
func ExampleManager() {
	cfg := &mcpconfig.Server{Name: "kv", Command: mcpserverPath, Args: []string{"--log-level", "error"}, Tools: []string{"kv_set", "kv_get"}}
	infos, err := mcp.Discover(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := mcp.NewManager(mcp.Options{})
	defer m.Close()
	if err := m.Add(cfg); err != nil {
		fmt.Println(err)
		return
	}
	m.Lease("kv")
	ec := tools.NewExecContext(context.Background(), "call-1", 1, tools.AgentRef{ID: 1}, "")
	calls := map[string]string{"kv_set": `{"key":"greeting","value":"hello"}`, "kv_get": `{"key":"greeting"}`}
	for _, info := range slices.Backward(infos) { // kv_set, then kv_get
		res, err := m.Tool(info).Execute(ec, json.RawMessage(calls[info.Tool]))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %q %+v\n", info.Name, res.Content, res.Notes[0])
	}
	m.Release("kv")
	for _, ev := range m.Drain() {
		fmt.Println(strings.TrimSpace(fmt.Sprint(ev.Kind, " ", ev.Session, " ", ev.Reason)))
	}
	// Output:
	// kv__kv_set: "ok" {Fn:mcp Text:kv/kv_set session 1 OK:true Err:}
	// kv__kv_get: "hello" {Fn:mcp Text:kv/kv_get session 1 OK:true Err:}
	// start 1
	// stop 1 no agent holds a lease
}
