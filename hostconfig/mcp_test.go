package hostconfig

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/policy"
)

// compileSrc decodes src as a host config named host.toml and compiles it with CompileWith.
func compileSrc(t *testing.T, src string, servers ServerTools) (*Config, tomlfile.Errors) {
	t.Helper()
	var f File
	doc, err := tomlfile.Decode("host.toml", []byte(src), &f)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return CompileWith(doc, "", &f, knownTools, servers)
}

func TestMCPServersEveryKey(t *testing.T) {
	src := `[mcp]
allow_blueprint_servers = true

[[mcp_servers]]
name = "kv"
command = "bin/mcpserver"
args = ["--transport", "stdio"]
env = { LEVEL = "info", KV_DIR = "/srv/kv" }
call_timeout = "1m30s"
max_concurrency = 8
max_result_bytes = "128KiB"
max_reply_bytes = "1MiB"
max_tools = 50
max_tool_schema_bytes = "8KiB"
tools = ["kv_set", "kv_get"]

[[mcp_servers]]
name = "search-2"
url = "https://search.example/mcp"
headers = { Authorization = "Bearer x", X-Trace = "1" }
max_result_bytes = "8MiB"
tools = []

[[mcp_servers]]
name = "git"
command = "git-mcp"

[[mcp_servers]]
name = "abs"
command = "/usr/local/bin/../bin/abs-mcp"
`
	path := writeConfig(t, src)
	dir := filepath.Dir(path)
	cfg, err := Load(path, knownTools)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.AllowBlueprintServers {
		t.Error("AllowBlueprintServers = false, want true")
	}
	want := []mcpconfig.Server{
		{
			Name: "kv", Command: filepath.Join(dir, "bin", "mcpserver"), Args: []string{"--transport", "stdio"},
			Env: map[string]string{"LEVEL": "info", "KV_DIR": "/srv/kv"}, Dir: dir,
			CallTimeout: 90 * time.Second, MaxConcurrency: 8, MaxResultBytes: 128 << 10, Tools: []string{"kv_get", "kv_set"},
			MaxReplyBytes: 1 << 20, MaxTools: 50, MaxToolSchemaBytes: 8 << 10,
			File: path, Line: 4, Key: "mcp_servers[0]",
		},
		{
			Name: "search-2", URL: "https://search.example/mcp", Headers: map[string]string{"Authorization": "Bearer x", "X-Trace": "1"}, Dir: dir,
			CallTimeout: mcpconfig.DefaultCallTimeout, MaxConcurrency: mcpconfig.DefaultMaxConcurrency, MaxResultBytes: 8 << 20, Tools: []string{},
			// A result longer than the default reply bound raises it.
			MaxReplyBytes: 8 << 20, MaxTools: mcpconfig.DefaultMaxTools, MaxToolSchemaBytes: mcpconfig.DefaultMaxToolSchemaBytes,
			File: path, Line: 17, Key: "mcp_servers[1]",
		},
		{
			Name: "git", Command: "git-mcp", Dir: dir,
			CallTimeout: mcpconfig.DefaultCallTimeout, MaxConcurrency: mcpconfig.DefaultMaxConcurrency, MaxResultBytes: mcpconfig.DefaultMaxResultBytes,
			MaxReplyBytes: mcpconfig.DefaultMaxReplyBytes, MaxTools: mcpconfig.DefaultMaxTools, MaxToolSchemaBytes: mcpconfig.DefaultMaxToolSchemaBytes,
			File: path, Line: 24, Key: "mcp_servers[2]",
		},
		{
			Name: "abs", Command: "/usr/local/bin/abs-mcp", Dir: dir,
			CallTimeout: mcpconfig.DefaultCallTimeout, MaxConcurrency: mcpconfig.DefaultMaxConcurrency, MaxResultBytes: mcpconfig.DefaultMaxResultBytes,
			MaxReplyBytes: mcpconfig.DefaultMaxReplyBytes, MaxTools: mcpconfig.DefaultMaxTools, MaxToolSchemaBytes: mcpconfig.DefaultMaxToolSchemaBytes,
			File: path, Line: 28, Key: "mcp_servers[3]",
		},
	}
	if !reflect.DeepEqual(cfg.MCPServers, want) {
		t.Errorf("MCPServers =\n%+v\nwant\n%+v", cfg.MCPServers, want)
	}
	if got := cfg.MCPServers[1].Origin(); got != path+":17: mcp_servers[1]" {
		t.Errorf("Origin = %q", got)
	}
	if !filepath.IsAbs(cfg.MCPServers[0].Dir) {
		t.Errorf("Dir %q is not absolute", cfg.MCPServers[0].Dir)
	}
}

func TestMCPServersDefaults(t *testing.T) {
	cfg, errs := compileSrc(t, "[[mcp_servers]]\nname = \"kv\"\ncommand = \"kv\"\n", nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	s := cfg.MCPServers[0]
	if s.CallTimeout != mcpconfig.DefaultCallTimeout || s.MaxConcurrency != mcpconfig.DefaultMaxConcurrency || s.MaxResultBytes != mcpconfig.DefaultMaxResultBytes ||
		s.Tools != nil || s.Args != nil || s.Env != nil || s.Blueprint || s.Transport() != "stdio" {
		t.Errorf("defaults not applied: %+v", s)
	}
	if cfg.AllowBlueprintServers {
		t.Error("AllowBlueprintServers defaults to true")
	}
	if def := Default(); def.MCPServers != nil || def.AllowBlueprintServers {
		t.Errorf("Default() has servers: %+v", def)
	}
}

// TestMCPServerErrors: every problem of an entry is reported at its line and key, wrapping its
// sentinel.
func TestMCPServerErrors(t *testing.T) {
	tests := []struct {
		name     string
		entry    string // the lines after "[[mcp_servers]]" on line 1
		line     int
		key      string
		sentinel error
		says     string
	}{
		{"missing name", `command = "kv"`, 1, "mcp_servers[0].name", ErrMissingKey, "a server name is 1 to 32"},
		{"empty name", "name = \"\"\ncommand = \"kv\"", 2, "mcp_servers[0].name", ErrBadServerName, `""`},
		{"upper-case name", "name = \"KV\"\ncommand = \"kv\"", 2, "mcp_servers[0].name", ErrBadServerName, `"KV"`},
		{"name starting with a digit", "name = \"1kv\"\ncommand = \"kv\"", 2, "mcp_servers[0].name", ErrBadServerName, "starting with a letter"},
		{"name with a double underscore", "name = \"k__v\"\ncommand = \"kv\"", 2, "mcp_servers[0].name", ErrBadServerName, `no "__"`},
		{"name ending with an underscore", "name = \"kv_\"\ncommand = \"kv\"", 2, "mcp_servers[0].name", ErrBadServerName, "not ending with '_'"},
		{"name too long", "name = \"" + strings.Repeat("a", 33) + "\"\ncommand = \"kv\"", 2, "mcp_servers[0].name", ErrBadServerName, "1 to 32"},
		{"name with a dot", "name = \"k.v\"\ncommand = \"kv\"", 2, "mcp_servers[0].name", ErrBadServerName, `"k.v"`},
		{"neither command nor url", `name = "kv"`, 1, "mcp_servers[0]", ErrServerTransport, "neither is given"},
		{"both command and url", "name = \"kv\"\ncommand = \"kv\"\nurl = \"http://h/mcp\"", 4, "mcp_servers[0].url", ErrServerTransport, "both are given"},
		{"empty command", "name = \"kv\"\ncommand = \" \"", 3, "mcp_servers[0].command", ErrEmptyPath, "looked up in PATH"},
		{"args with url", "name = \"kv\"\nurl = \"http://h/mcp\"\nargs = []", 4, "mcp_servers[0].args", ErrWrongTransport, "use command"},
		{"env with url", "name = \"kv\"\nurl = \"http://h/mcp\"\nenv = {}", 4, "mcp_servers[0].env", ErrWrongTransport, "drop env"},
		{"headers with command", "name = \"kv\"\ncommand = \"kv\"\nheaders = { A = \"b\" }", 4, "mcp_servers[0].headers", ErrWrongTransport, "use url"},
		{"relative url", "name = \"kv\"\nurl = \"/mcp\"", 3, "mcp_servers[0].url", ErrBadURL, "absolute http or https"},
		{"url of another scheme", "name = \"kv\"\nurl = \"ftp://h/mcp\"", 3, "mcp_servers[0].url", ErrBadURL, `"ftp://h/mcp"`},
		{"url without a host", "name = \"kv\"\nurl = \"http:///mcp\"", 3, "mcp_servers[0].url", ErrBadURL, "http://127.0.0.1:8080/mcp"},
		{"url that does not parse", "name = \"kv\"\nurl = \"http://h:port/\"", 3, "mcp_servers[0].url", ErrBadURL, `"http://h:port/"`},
		{"empty url", "name = \"kv\"\nurl = \"\"", 3, "mcp_servers[0].url", ErrBadURL, `""`},
		{"env name with a dash", "name = \"kv\"\ncommand = \"kv\"\nenv = { A-B = \"1\" }", 4, "mcp_servers[0].env.A-B", ErrBadEnvName, "letters, digits and '_'"},
		{"env name starting with a digit", "name = \"kv\"\ncommand = \"kv\"\n[mcp_servers.env]\n1A = \"x\"", 5, "mcp_servers[0].env.1A", ErrBadEnvName, `"1A"`},
		{"env value with a NUL", "name = \"kv\"\ncommand = \"kv\"\nenv = { A = \"x\\u0000y\" }", 4, "mcp_servers[0].env.A", ErrBadEnvName, "NUL"},
		{"header name with a space", "name = \"kv\"\nurl = \"http://h/mcp\"\nheaders = { \"X Key\" = \"1\" }", 4, `mcp_servers[0].headers."X Key"`, ErrBadHeader, "HTTP token"},
		{"header value with a line break", "name = \"kv\"\nurl = \"http://h/mcp\"\nheaders = { A = \"1\\r\\nB: 2\" }", 4, "mcp_servers[0].headers.A", ErrBadHeader, "line break"},
		{"timeout not a duration", "name = \"kv\"\ncommand = \"kv\"\ncall_timeout = \"soon\"", 4, "mcp_servers[0].call_timeout", ErrBadDuration, `"soon"`},
		{"timeout too short", "name = \"kv\"\ncommand = \"kv\"\ncall_timeout = \"999us\"", 4, "mcp_servers[0].call_timeout", ErrOutOfRange, "1ms to 1h"},
		{"timeout too long", "name = \"kv\"\ncommand = \"kv\"\ncall_timeout = \"61m\"", 4, "mcp_servers[0].call_timeout", ErrOutOfRange, "1ms to 1h"},
		{"concurrency zero", "name = \"kv\"\ncommand = \"kv\"\nmax_concurrency = 0", 4, "mcp_servers[0].max_concurrency", ErrOutOfRange, "1 to 10000"},
		{"concurrency too high", "name = \"kv\"\ncommand = \"kv\"\nmax_concurrency = 10001", 4, "mcp_servers[0].max_concurrency", ErrOutOfRange, "10001"},
		{"result size too small", "name = \"kv\"\ncommand = \"kv\"\nmax_result_bytes = 1023", 4, "mcp_servers[0].max_result_bytes", ErrOutOfRange, "1KiB to 16MiB"},
		{"result size too large", "name = \"kv\"\ncommand = \"kv\"\nmax_result_bytes = \"17MiB\"", 4, "mcp_servers[0].max_result_bytes", ErrOutOfRange, `"17MiB"`},
		{"result size misspelled", "name = \"kv\"\ncommand = \"kv\"\nmax_result_bytes = \"64K\"", 4, "mcp_servers[0].max_result_bytes", ErrBadSize, "KiB, MiB"},
		{"result size of the wrong type", "name = \"kv\"\ncommand = \"kv\"\nmax_result_bytes = 1.5", 4, "mcp_servers[0].max_result_bytes", tomlfile.ErrType, "got float"},
		{"reply size too small", "name = \"kv\"\ncommand = \"kv\"\nmax_reply_bytes = 1000", 4, "mcp_servers[0].max_reply_bytes", ErrOutOfRange, "1KiB to 1GiB"},
		{"reply size too large", "name = \"kv\"\ncommand = \"kv\"\nmax_reply_bytes = \"2GiB\"", 4, "mcp_servers[0].max_reply_bytes", ErrOutOfRange, `"2GiB"`},
		{"reply size under the result size", "name = \"kv\"\ncommand = \"kv\"\nmax_result_bytes = \"1MiB\"\nmax_reply_bytes = \"512KiB\"", 5, "mcp_servers[0].max_reply_bytes", ErrOutOfRange, "less than max_result_bytes (1048576)"},
		{"reply size misspelled", "name = \"kv\"\ncommand = \"kv\"\nmax_reply_bytes = \"4M\"", 4, "mcp_servers[0].max_reply_bytes", ErrBadSize, "KiB, MiB"},
		{"no tools allowed", "name = \"kv\"\ncommand = \"kv\"\nmax_tools = 0", 4, "mcp_servers[0].max_tools", ErrOutOfRange, "1 to 100000"},
		{"too many tools allowed", "name = \"kv\"\ncommand = \"kv\"\nmax_tools = 100001", 4, "mcp_servers[0].max_tools", ErrOutOfRange, "100001"},
		{"tool schema size too small", "name = \"kv\"\ncommand = \"kv\"\nmax_tool_schema_bytes = 512", 4, "mcp_servers[0].max_tool_schema_bytes", ErrOutOfRange, "1KiB to 16MiB"},
		{"tool schema size of the wrong type", "name = \"kv\"\ncommand = \"kv\"\nmax_tool_schema_bytes = true", 4, "mcp_servers[0].max_tool_schema_bytes", tomlfile.ErrType, "got bool"},
		{"empty tool", "name = \"kv\"\ncommand = \"kv\"\ntools = [\"kv_get\", \"\"]", 4, "mcp_servers[0].tools[1]", ErrBadToolList, "empty name"},
		{"duplicate tool", "name = \"kv\"\ncommand = \"kv\"\ntools = [\"kv_get\", \"kv_get\"]", 4, "mcp_servers[0].tools[1]", ErrBadToolList, "first at tools[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, errs := compileSrc(t, "[[mcp_servers]]\n"+tt.entry+"\n", nil)
			if len(errs) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(errs), errs)
			}
			e := errs[0]
			if e.File != "host.toml" || e.Line != tt.line || e.Key != tt.key {
				t.Errorf("problem at %s:%d %s, want host.toml:%d %s: %v", e.File, e.Line, e.Key, tt.line, tt.key, e)
			}
			if !errors.Is(e, tt.sentinel) {
				t.Errorf("errors.Is(%v, %v) = false", e, tt.sentinel)
			}
			if !strings.Contains(e.Msg, tt.says) {
				t.Errorf("message %q does not say %q", e.Msg, tt.says)
			}
			if len(cfg.MCPServers) != 0 {
				t.Errorf("an invalid entry was kept: %+v", cfg.MCPServers)
			}
		})
	}
}

func TestMCPServerDuplicateName(t *testing.T) {
	src := "[[mcp_servers]]\nname = \"kv\"\ncommand = \"a\"\n\n[[mcp_servers]]\nname = \"other\"\ncommand = \"b\"\n\n[[mcp_servers]]\nname = \"kv\"\nurl = \"http://h/mcp\"\n"
	cfg, errs := compileSrc(t, src, nil)
	if len(errs) != 1 {
		t.Fatalf("problems: %v", errs)
	}
	e := errs[0]
	want := `host.toml:10:1: mcp_servers[2].name: duplicate server name "kv": already declared by mcp_servers[0] at line 1; give each server its own name`
	if e.Error() != want || !errors.Is(e, ErrDuplicateServer) {
		t.Errorf("got %v\nwant %s", e, want)
	}
	if names := serverNames(cfg.MCPServers); !slices.Equal(names, []string{"kv", "other"}) {
		t.Errorf("kept servers %v, want the first kv and other", names)
	}
}

// serverNames lists the servers' names in order.
func serverNames(servers []mcpconfig.Server) []string {
	names := make([]string, len(servers))
	for i := range servers {
		names[i] = servers[i].Name
	}
	return names
}

// TestMCPServersUnderHost: inside a scenario's [host] table, keys and errors carry the prefix
// and the folder is the scenario's.
func TestMCPServersUnderHost(t *testing.T) {
	src := "name = \"s\"\n[[host.mcp_servers]]\nname = \"kv\"\ncommand = \"./kv\"\n[[host.mcp_servers]]\nname = \"Bad\"\ncommand = \"x\"\n[host.tool_permissions]\nkv__get = \"allow\"\n"
	cfg, errs := compileUnderHost(t, filepath.Join("scenarios", "s.toml"), src)
	if len(errs) != 1 || errs[0].Key != "host.mcp_servers[1].name" || errs[0].Line != 6 || !errors.Is(errs[0], ErrBadServerName) {
		t.Fatalf("problems: %v", errs)
	}
	if len(cfg.MCPServers) != 1 {
		t.Fatalf("servers %+v", cfg.MCPServers)
	}
	s := cfg.MCPServers[0]
	abs, _ := filepath.Abs("scenarios")
	if s.Key != "host.mcp_servers[0]" || s.Line != 2 || s.Dir != abs || s.Command != filepath.Join(abs, "kv") {
		t.Errorf("server %+v", s)
	}
	if cfg.ToolPermissions["kv__get"] != policy.Allow {
		t.Errorf("a permission under a declared server was not accepted: %v", cfg.ToolPermissions)
	}
}

func TestCompileMCPServers(t *testing.T) {
	var f File
	doc, err := tomlfile.Decode("bp.toml", []byte("[[mcp_servers]]\nname = \"kv\"\nurl = \"http://127.0.0.1:9/mcp\"\n[[mcp_servers]]\ncommand = \"x\"\n"), &f)
	if err != nil {
		t.Fatal(err)
	}
	servers, errs := CompileMCPServers(doc, "", f.MCPServers, true)
	if len(errs) != 1 || !errors.Is(errs[0], ErrMissingKey) || errs[0].Key != "mcp_servers[1].name" || errs[0].Line != 4 {
		t.Errorf("problems: %v", errs)
	}
	if len(servers) != 1 || !servers[0].Blueprint || servers[0].Transport() != "http" || servers[0].File != "bp.toml" {
		t.Errorf("servers %+v", servers)
	}
	if servers, errs := CompileMCPServers(doc, "", nil, false); servers != nil || errs != nil {
		t.Errorf("no entries gave %v, %v", servers, errs)
	}
}

// TestCompileWithServerTools: listed tools join the known tools; without a lister, permission
// names under a declared server are accepted by prefix.
func TestCompileWithServerTools(t *testing.T) {
	const servers = "[[mcp_servers]]\nname = \"kv\"\ncommand = \"kv\"\n\n[[mcp_servers]]\nname = \"web\"\nurl = \"http://h/mcp\"\n\n"
	lister := func(s *mcpconfig.Server) ([]string, error) {
		if s.Name == "web" {
			return nil, errors.New("connection refused")
		}
		return []string{"kv__kv_get", "kv__kv_set"}, nil
	}
	tests := []struct {
		name    string
		perms   string
		servers ServerTools
		want    string // "" compiles
		is      error
	}{
		{"a listed tool", "kv__kv_get = \"allow\"\n", func(s *mcpconfig.Server) ([]string, error) {
			return []string{mcpconfig.ToolName(s.Name, "kv_get")}, nil
		}, "", nil},
		{"a tool the server does not list", "kv__kv_del = \"allow\"\n", func(s *mcpconfig.Server) ([]string, error) {
			return []string{mcpconfig.ToolName(s.Name, "kv_get")}, nil
		},
			`host.toml:10:1: tool_permissions.kv__kv_del: unknown tool or key "kv__kv_del"`, policy.ErrUnknownName},
		{"a listing error at its entry", "kv__kv_get = \"allow\"\n", lister,
			`host.toml:5:3: mcp_servers[1]: server "web" did not list its tools: connection refused`, nil},
		{"no lister: any tool of a declared server", "kv__anything = \"ask\"\nweb__x = \"deny\"\n", nil, "", nil},
		{"no lister: an undeclared server", "db__query = \"allow\"\n", nil, `host.toml:10:1: tool_permissions.db__query: unknown tool or key "db__query"`, policy.ErrUnknownName},
		{"no lister: a server name without a tool", "kv__ = \"allow\"\n", nil, `tool_permissions.kv__: unknown tool or key "kv__"`, policy.ErrUnknownName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			known := slices.Clone(knownTools)
			var f File
			doc, err := tomlfile.Decode("host.toml", []byte(servers+"[tool_permissions]\n"+tt.perms), &f)
			if err != nil {
				t.Fatal(err)
			}
			cfg, errs := CompileWith(doc, "", &f, known, tt.servers)
			if !slices.Equal(known, knownTools) {
				t.Errorf("the caller's known tools changed: %v", known)
			}
			if tt.want == "" {
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				if len(cfg.ToolPermissions) == 0 {
					t.Error("no permissions compiled")
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs.Error(), tt.want) {
				t.Fatalf("problems:\n%v\nwant one containing:\n%s", errs, tt.want)
			}
			if tt.is != nil && !errors.Is(errs.Err(), tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", errs, tt.is)
			}
		})
	}
}

// TestCompileWithListsOnlyValidServers: an invalid entry is never started, and every valid one is
// listed once, in file order.
func TestCompileWithListsOnlyValidServers(t *testing.T) {
	src := "[[mcp_servers]]\nname = \"a\"\ncommand = \"a\"\n[[mcp_servers]]\nname = \"B\"\ncommand = \"b\"\n[[mcp_servers]]\nname = \"c\"\nurl = \"http://h/\"\n"
	var asked []string
	_, errs := compileSrc(t, src, func(s *mcpconfig.Server) ([]string, error) {
		asked = append(asked, s.Name)
		return nil, nil
	})
	if len(errs) != 1 || !errors.Is(errs[0], ErrBadServerName) {
		t.Errorf("problems: %v", errs)
	}
	if !slices.Equal(asked, []string{"a", "c"}) {
		t.Errorf("listed %v, want [a c]", asked)
	}
}

func TestLoadWithTools(t *testing.T) {
	path := writeConfig(t, "[[mcp_servers]]\nname = \"kv\"\ncommand = \"kv\"\n[agent_tool_permissions.worker]\nkv__kv_get = \"allow\"\n")
	var listed *mcpconfig.Server
	cfg, err := LoadWithTools(path, knownTools, nil, func(s *mcpconfig.Server) ([]string, error) {
		listed = s
		return []string{"kv__kv_get"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if listed == nil || listed.Name != "kv" || listed.File != path {
		t.Errorf("lister got %+v", listed)
	}
	if cfg.AgentToolPermissions["worker"]["kv__kv_get"] != policy.Allow || cfg.Path != path || !strings.HasPrefix(cfg.Hash, "sha256:") {
		t.Errorf("config %+v", cfg)
	}
	_, err = LoadWithTools(path, knownTools, nil, func(*mcpconfig.Server) ([]string, error) { return nil, nil })
	if !errors.Is(err, policy.ErrUnknownName) {
		t.Errorf("a tool the server does not list was accepted: %v", err)
	}
	listErr := errors.New("exec: \"kv\": executable file not found in $PATH")
	_, err = LoadWithTools(path, knownTools, nil, func(*mcpconfig.Server) ([]string, error) { return nil, listErr })
	if !errors.Is(err, listErr) || !strings.Contains(err.Error(), path+":1:3: mcp_servers[0]: server \"kv\" did not list its tools") {
		t.Errorf("listing error: %v", err)
	}
}

// TestMCPCorpusWrapsSentinels: every problem of the MCP corpus files wraps the sentinel its kind
// promises.
func TestMCPCorpusWrapsSentinels(t *testing.T) {
	tests := []struct {
		file      string
		sentinels []error
	}{
		{"mcp_values", []error{ErrMissingKey, ErrBadServerName, ErrDuplicateServer, ErrServerTransport, ErrWrongTransport, ErrBadURL,
			ErrBadHeader, ErrBadEnvName, ErrBadDuration, ErrOutOfRange, ErrBadSize, ErrBadToolList, ErrEmptyPath}},
		{"mcp_unknown_key", []error{tomlfile.ErrUnknownKey}},
		{"mcp_wrong_type", []error{tomlfile.ErrType}},
		{"mcp_permission_unknown_server", []error{policy.ErrUnknownName}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", "bad", tt.file+".toml"), knownTools)
			for _, sentinel := range tt.sentinels {
				if !errors.Is(err, sentinel) {
					t.Errorf("errors.Is(%v, %v) = false", err, sentinel)
				}
			}
		})
	}
}

func TestValidServerName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"kv", true}, {"a", true}, {"code-search", true}, {"a_b", true}, {"a-", true}, {strings.Repeat("a", 32), true},
		{"", false}, {"_a", false}, {"-a", false}, {"9a", false}, {"a__b", false}, {"a_", false}, {"aB", false},
		{strings.Repeat("a", 33), false}, {"a b", false}, {"é", false},
	}
	for _, tt := range tests {
		if got := validServerName(tt.name); got != tt.ok {
			t.Errorf("validServerName(%q) = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

func BenchmarkCompileMCPServers(b *testing.B) {
	var src strings.Builder
	for i := range 100 {
		src.WriteString("[[mcp_servers]]\nname = \"s" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "\"\ncommand = \"srv\"\nargs = [\"--stdio\"]\nenv = { A = \"1\" }\ntools = [\"a\", \"b\"]\n")
	}
	var f File
	doc, err := tomlfile.Decode("host.toml", []byte(src.String()), &f)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if servers, errs := CompileMCPServers(doc, "", f.MCPServers, false); len(errs) > 0 || len(servers) != 100 {
			b.Fatal(errs)
		}
	}
}
