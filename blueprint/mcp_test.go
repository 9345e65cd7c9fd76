package blueprint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// mcpTools are testTools plus the tools of three MCP servers: kv, web and kvx (whose name
// starts like kv's, so a prefix match that forgets the separator would grab it).
var mcpTools = append(slices.Clone(testTools), "kv__kv_get", "kv__kv_set", "kv__kv_del", "web__fetch", "kvx__other")

// bpHeader is a valid blueprint's first three lines; MCP entries follow it from line 4.
const bpHeader = "name = \"b\"\n[[stages]]\nname = \"s\"\n"

func TestBlueprintMCPServers(t *testing.T) {
	src := bpHeader + `[[mcp_servers]]
name = "kv"
command = "./kv-server"
args = ["--stdio"]
env = { KV_LEVEL = "debug" }
call_timeout = "5s"
max_concurrency = 2
max_result_bytes = 4096
tools = ["kv_get"]

[[mcp_servers]]
name = "web"
url = "http://127.0.0.1:8080/mcp"
headers = { X-Key = "k" }
`
	file := filepath.Join("agents", "b.toml")
	bp, err := Parse(file, []byte(src), testTools)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("agents")
	if err != nil {
		t.Fatal(err)
	}
	want := []mcpconfig.Server{
		{
			Name: "kv", Command: filepath.Join(dir, "kv-server"), Args: []string{"--stdio"}, Env: map[string]string{"KV_LEVEL": "debug"}, Dir: dir,
			CallTimeout: 5 * time.Second, MaxConcurrency: 2, MaxResultBytes: 4096, Tools: []string{"kv_get"},
			MaxReplyBytes: mcpconfig.DefaultMaxReplyBytes, MaxTools: mcpconfig.DefaultMaxTools, MaxToolSchemaBytes: mcpconfig.DefaultMaxToolSchemaBytes,
			File: file, Line: 4, Key: "mcp_servers[0]", Blueprint: true,
		},
		{
			Name: "web", URL: "http://127.0.0.1:8080/mcp", Headers: map[string]string{"X-Key": "k"}, Dir: dir,
			CallTimeout: mcpconfig.DefaultCallTimeout, MaxConcurrency: mcpconfig.DefaultMaxConcurrency, MaxResultBytes: mcpconfig.DefaultMaxResultBytes,
			MaxReplyBytes: mcpconfig.DefaultMaxReplyBytes, MaxTools: mcpconfig.DefaultMaxTools, MaxToolSchemaBytes: mcpconfig.DefaultMaxToolSchemaBytes,
			File: file, Line: 14, Key: "mcp_servers[1]", Blueprint: true,
		},
	}
	if !reflect.DeepEqual(bp.MCPServers, want) {
		t.Errorf("MCPServers =\n%+v\nwant\n%+v", bp.MCPServers, want)
	}
	if bp, err := Parse(file, []byte(bpHeader), testTools); err != nil || bp.MCPServers != nil {
		t.Errorf("a blueprint without servers: %+v, %v", bp, err)
	}
}

// TestBlueprintMCPServerErrors: every problem of a blueprint's entry is reported at its line and
// key, wrapping the hostconfig sentinel.
func TestBlueprintMCPServerErrors(t *testing.T) {
	tests := []struct {
		name     string
		entry    string // the lines after "[[mcp_servers]]" on line 4
		line     int
		key      string
		sentinel error
	}{
		{"missing name", `command = "kv"`, 4, "mcp_servers[0].name", hostconfig.ErrMissingKey},
		{"bad name", "name = \"k__v\"\ncommand = \"kv\"", 5, "mcp_servers[0].name", hostconfig.ErrBadServerName},
		{"neither command nor url", `name = "kv"`, 4, "mcp_servers[0]", hostconfig.ErrServerTransport},
		{"both command and url", "name = \"kv\"\ncommand = \"kv\"\nurl = \"http://h/\"", 7, "mcp_servers[0].url", hostconfig.ErrServerTransport},
		{"empty command", "name = \"kv\"\ncommand = \"\"", 6, "mcp_servers[0].command", hostconfig.ErrEmptyPath},
		{"args with url", "name = \"kv\"\nurl = \"http://h/\"\nargs = [\"-v\"]", 7, "mcp_servers[0].args", hostconfig.ErrWrongTransport},
		{"env with url", "name = \"kv\"\nurl = \"http://h/\"\nenv = { A = \"1\" }", 7, "mcp_servers[0].env", hostconfig.ErrWrongTransport},
		{"headers with command", "name = \"kv\"\ncommand = \"kv\"\nheaders = { A = \"1\" }", 7, "mcp_servers[0].headers", hostconfig.ErrWrongTransport},
		{"bad url", "name = \"kv\"\nurl = \"localhost:8080\"", 6, "mcp_servers[0].url", hostconfig.ErrBadURL},
		{"bad env name", "name = \"kv\"\ncommand = \"kv\"\nenv = { \"A B\" = \"1\" }", 7, `mcp_servers[0].env."A B"`, hostconfig.ErrBadEnvName},
		{"bad header name", "name = \"kv\"\nurl = \"http://h/\"\nheaders = { \"A:B\" = \"1\" }", 7, `mcp_servers[0].headers."A:B"`, hostconfig.ErrBadHeader},
		{"bad timeout", "name = \"kv\"\ncommand = \"kv\"\ncall_timeout = \"1\"", 7, "mcp_servers[0].call_timeout", hostconfig.ErrBadDuration},
		{"timeout out of range", "name = \"kv\"\ncommand = \"kv\"\ncall_timeout = \"0s\"", 7, "mcp_servers[0].call_timeout", hostconfig.ErrOutOfRange},
		{"concurrency out of range", "name = \"kv\"\ncommand = \"kv\"\nmax_concurrency = -1", 7, "mcp_servers[0].max_concurrency", hostconfig.ErrOutOfRange},
		{"size out of range", "name = \"kv\"\ncommand = \"kv\"\nmax_result_bytes = \"1GiB\"", 7, "mcp_servers[0].max_result_bytes", hostconfig.ErrOutOfRange},
		{"bad size", "name = \"kv\"\ncommand = \"kv\"\nmax_result_bytes = \"lots\"", 7, "mcp_servers[0].max_result_bytes", hostconfig.ErrBadSize},
		{"empty tool", "name = \"kv\"\ncommand = \"kv\"\ntools = [\"\"]", 7, "mcp_servers[0].tools[0]", hostconfig.ErrBadToolList},
		{"duplicate tool", "name = \"kv\"\ncommand = \"kv\"\ntools = [\"a\", \"a\"]", 7, "mcp_servers[0].tools[1]", hostconfig.ErrBadToolList},
		{"duplicate server", "name = \"kv\"\ncommand = \"kv\"\n[[mcp_servers]]\nname = \"kv\"\nurl = \"http://h/\"", 8, "mcp_servers[1].name", hostconfig.ErrDuplicateServer},
		{"unknown key", "name = \"kv\"\ncommand = \"kv\"\ntimeout = \"1s\"", 7, "mcp_servers[0].timeout", tomlfile.ErrUnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bp, err := Parse("b.toml", []byte(bpHeader+"[[mcp_servers]]\n"+tt.entry+"\n"), testTools)
			var errs tomlfile.Errors
			if !errors.As(err, &errs) || len(errs) != 1 || bp != nil {
				t.Fatalf("Parse = %v, %v; want one problem", bp, err)
			}
			if e := errs[0]; e.File != "b.toml" || e.Line != tt.line || e.Key != tt.key || !errors.Is(e, tt.sentinel) {
				t.Errorf("problem %v: want b.toml:%d %s wrapping %v", e, tt.line, tt.key, tt.sentinel)
			}
		})
	}
}

func TestConnectors(t *testing.T) {
	src := `name = "b"
[[stages]]
name = "s"
available_tools = ["read_file", "kv__kv_get"]
connectors = ["web", "kv"]
required_tools = ["kv__kv_set"]
[stages.tool_permissions]
kv__kv_del = "deny"
[[stages]]
name = "plain"
`
	bp, err := Parse("b.toml", []byte(src), mcpTools)
	if err != nil {
		t.Fatal(err)
	}
	st := &bp.Stages[0]
	if want := []string{"kv__kv_del", "kv__kv_get", "kv__kv_set", "read_file", "web__fetch"}; !slices.Equal(st.AvailableTools, want) {
		t.Errorf("AvailableTools = %v, want %v", st.AvailableTools, want)
	}
	if want := []string{"kv", "web"}; !slices.Equal(st.Connectors, want) {
		t.Errorf("Connectors = %v, want %v", st.Connectors, want)
	}
	for _, tool := range st.AvailableTools {
		if !st.Advertises(tool) {
			t.Errorf("stage does not advertise %q", tool)
		}
	}
	if st.Advertises("kvx__other") {
		t.Error("connector kv granted kvx's tool")
	}
	if !slices.Equal(st.RequiredTools, []string{"kv__kv_set"}) {
		t.Errorf("RequiredTools = %v", st.RequiredTools)
	}
	if plain := &bp.Stages[1]; plain.Connectors != nil || plain.Advertises("kv__kv_get") {
		t.Errorf("a stage without connectors got %v %v", plain.Connectors, plain.AvailableTools)
	}
}

func TestConnectorErrors(t *testing.T) {
	tests := []struct {
		name       string
		connectors string
		known      []string
		key        string
		sentinel   error
		says       string
	}{
		{"unknown server", `["kv", "db"]`, mcpTools, "stages[0].connectors[1]", ErrUnknownServer, `unknown MCP server "db"; a connector names a server whose tools the host knows; valid servers: kv, kvx, web`},
		{"no servers known", `["kv"]`, testTools, "stages[0].connectors[0]", ErrUnknownServer, "valid servers: none"},
		{"empty name", `[""]`, mcpTools, "stages[0].connectors[0]", ErrUnknownServer, `""`},
		{"a tool, not a server", `["kv__kv_get"]`, mcpTools, "stages[0].connectors[0]", ErrUnknownServer, `"kv__kv_get"`},
		{"a prefix of a server", `["k"]`, mcpTools, "stages[0].connectors[0]", ErrUnknownServer, `"k"`},
		{"duplicate", `["web", "web"]`, mcpTools, "stages[0].connectors[1]", ErrDuplicateConnector, "list each server once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := bpHeader + "connectors = " + tt.connectors + "\n"
			_, err := Parse("b.toml", []byte(src), tt.known)
			var errs tomlfile.Errors
			if !errors.As(err, &errs) || len(errs) != 1 {
				t.Fatalf("Parse error %v; want one problem", err)
			}
			if e := errs[0]; e.Line != 4 || e.Key != tt.key || !errors.Is(e, tt.sentinel) || !strings.Contains(e.Msg, tt.says) {
				t.Errorf("problem %v: want b.toml:4 %s wrapping %v saying %q", e, tt.key, tt.sentinel, tt.says)
			}
		})
	}
}

// writeBlueprint writes src as b.toml in a fresh temporary folder and returns its path.
func writeBlueprint(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDeclaredServers(t *testing.T) {
	// The rest of the blueprint is not checked: an unknown key, an unknown tool and a connector
	// to the blueprint's own server (whose tools are not known yet) are all fine here.
	path := writeBlueprint(t, `name = "b"
colour = "blue"
[[stages]]
name = "s"
available_tools = ["nope"]
connectors = ["kv"]

[[mcp_servers]]
name = "kv"
command = "kv"
`)
	servers, err := DeclaredServers(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].Name != "kv" || !servers[0].Blueprint || servers[0].Line != 8 || servers[0].File != path ||
		servers[0].Dir != filepath.Dir(path) {
		t.Errorf("servers %+v", servers)
	}
	// With the server's tools known, the connector compiles (the other problems remain).
	_, err = Load(path, append(slices.Clone(testTools), "kv__get"))
	if errors.Is(err, ErrUnknownServer) || !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Load with the server's tools: %v", err)
	}
}

func TestDeclaredServersErrors(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		sentinel error
		want     string // a line of the report, after the file name
	}{
		{"bad entry", bpHeader + "[[mcp_servers]]\nname = \"KV\"\ncommand = \"kv\"\n", hostconfig.ErrBadServerName, `:5:1: mcp_servers[0].name: invalid server name "KV"`},
		{"unknown key in an entry", "colour = 1\n[[mcp_servers]]\nname = \"kv\"\ncomand = \"kv\"\n", tomlfile.ErrUnknownKey, `:4:1: mcp_servers[0].comand: unknown key`},
		{"wrong type", "[[mcp_servers]]\nname = \"kv\"\ncommand = [\"kv\"]\n", tomlfile.ErrType, `:3:11: mcp_servers[0].command: expected string, got array`},
		{"not an array of tables", "mcp_servers = 3\n", tomlfile.ErrType, `:1:15: mcp_servers: expected array of tables, got integer`},
		{"syntax error", "[[mcp_servers]]\nname = \n", tomlfile.ErrSyntax, `:2:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeBlueprint(t, tt.src)
			servers, err := DeclaredServers(path)
			if err == nil || servers != nil {
				t.Fatalf("DeclaredServers = %v, %v; want an error", servers, err)
			}
			if !errors.Is(err, tt.sentinel) || !strings.Contains(err.Error(), path+tt.want) {
				t.Errorf("DeclaredServers error %v; want one wrapping %v containing %q", err, tt.sentinel, path+tt.want)
			}
			if strings.Contains(err.Error(), "colour") {
				t.Errorf("a key outside mcp_servers was reported: %v", err)
			}
		})
	}
	if _, err := DeclaredServers(filepath.Join(t.TempDir(), "absent.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if servers, err := DeclaredServers(writeBlueprint(t, bpHeader)); servers != nil || err != nil {
		t.Errorf("no servers: %v, %v", servers, err)
	}
}

func ExampleDeclaredServers() {
	dir, err := os.MkdirTemp("", "blueprint-mcp-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "notes.toml")
	src := `name = "notes"

[[mcp_servers]]
name = "kv"
command = "mcpserver"

[[stages]]
name = "work"
connectors = ["kv"]
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	// The loader discovers the blueprint's servers first, lists their tools, then compiles.
	servers, err := DeclaredServers(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	known := []string{"read_file"}
	for i := range servers {
		fmt.Println(servers[i].Name, servers[i].Transport(), servers[i].Blueprint)
		known = append(known, mcpconfig.ToolName(servers[i].Name, "kv_get"), mcpconfig.ToolName(servers[i].Name, "kv_set"))
	}
	bp, err := Load(path, known)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(bp.Stages[0].Connectors, bp.Stages[0].AvailableTools)
	// Output:
	// kv stdio true
	// [kv] [kv__kv_get kv__kv_set]
}

func BenchmarkParseConnectors(b *testing.B) {
	known := slices.Clone(testTools)
	for s := range 100 {
		for tool := range 100 {
			known = append(known, fmt.Sprintf("srv%d__tool%d", s, tool))
		}
	}
	var src strings.Builder
	src.WriteString("name = \"b\"\n")
	for i := range 20 {
		fmt.Fprintf(&src, "[[stages]]\nname = \"s%d\"\nconnectors = [\"srv%d\", \"srv%d\"]\n", i, i, i+50)
	}
	data := []byte(src.String())
	tools := newToolSet(known)
	b.ReportAllocs()
	for b.Loop() {
		bp, err := parse("b.toml", data, tools)
		if err != nil || len(bp.Stages[0].AvailableTools) != 200 {
			b.Fatal(err)
		}
	}
}

// TestDeclaredServersReadsOnlyFilesThatMayDeclareThem: a file that never spells mcp_servers
// declares none and is not decoded (its problems, a syntax error included, are Load's); a quoted
// key that spells the name with an escape is still read.
func TestDeclaredServersReadsOnlyFilesThatMayDeclareThem(t *testing.T) {
	if servers, err := DeclaredServers(writeBlueprint(t, "name = \n")); servers != nil || err != nil {
		t.Errorf("a file without servers: %v, %v", servers, err)
	}
	escaped := "[[\"mcp\\u005Fservers\"]]\nname = \"kv\"\ncommand = \"kv\"\n"
	servers, err := DeclaredServers(writeBlueprint(t, escaped))
	if err != nil || len(servers) != 1 || servers[0].Name != "kv" {
		t.Errorf("an escaped key: %v, %v", servers, err)
	}
}
