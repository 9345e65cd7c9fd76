package hostconfig

import (
	"errors"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// fileMCP is the host config's [mcp] table as written.
type fileMCP struct {
	AllowBlueprintServers bool `toml:"allow_blueprint_servers"`
}

// MCPServerTable is one [[mcp_servers]] entry as written. The host config and blueprints declare
// MCP servers with the same keys, so both decode theirs with this type and compile them with
// CompileMCPServers. Pointers and nil maps tell an absent key (take the default) from an explicit
// value. Exactly one of Command (a stdio server) and URL (a streamable HTTP server) is given;
// Args and Env only apply to Command, Headers only to URL. MaxResultBytes, MaxReplyBytes and
// MaxToolSchemaBytes are sizes, written as an integer byte count or a string such as "64KiB", so
// they hold whatever the file wrote. The keys are documented in docs/mcp.md.
type MCPServerTable struct {
	Name           string            `toml:"name"`
	Command        *string           `toml:"command"`
	Args           []string          `toml:"args"`
	Env            map[string]string `toml:"env"`
	URL            *string           `toml:"url"`
	Headers        map[string]string `toml:"headers"`
	CallTimeout    *string           `toml:"call_timeout"`
	MaxConcurrency *int64            `toml:"max_concurrency"`
	MaxResultBytes any               `toml:"max_result_bytes"`
	Tools          []string          `toml:"tools"`
	ReadOnlyTools  []string          `toml:"read_only_tools"`
	// The bounds a hostile or broken server is held to (docs/mcp.md, "Limits").
	MaxReplyBytes      any    `toml:"max_reply_bytes"`
	MaxTools           *int64 `toml:"max_tools"`
	MaxToolSchemaBytes any    `toml:"max_tool_schema_bytes"`
}

// Sentinel errors of [[mcp_servers]] entries (the host's or a blueprint's), wrapped by the
// problems CompileMCPServers reports besides ErrOutOfRange, ErrBadDuration, ErrBadSize,
// ErrBadEnvName, ErrEmptyPath and tomlfile.ErrType.
var (
	// ErrMissingKey: an entry has no name, which every server needs because its tools are
	// called by it.
	ErrMissingKey = errors.New("missing required key")
	// ErrBadServerName: a server name is not 1 to 32 of a-z, 0-9, '_' and '-' starting with a
	// letter, or holds "__" or ends with '_', either of which would make `<server>__<tool>` tool
	// names ambiguous.
	ErrBadServerName = errors.New("invalid server name")
	// ErrDuplicateServer: two entries of one file share a name, so their tools would collide.
	ErrDuplicateServer = errors.New("duplicate server name")
	// ErrUnknownBuiltinServer: a command starts with '@', which names a server built into the
	// host, and is not one ("@demo" is the only one).
	ErrUnknownBuiltinServer = errors.New("unknown built-in server")
	// ErrServerTransport: an entry gives neither or both of command and url, so how to reach the
	// server is unknown or ambiguous.
	ErrServerTransport = errors.New("needs exactly one of command and url")
	// ErrWrongTransport: a key that only applies to the other transport is given (args or env
	// with url, headers with command); it would silently do nothing.
	ErrWrongTransport = errors.New("key does not apply to this transport")
	// ErrBadURL: url is not an absolute http or https URL with a host.
	ErrBadURL = errors.New("invalid server URL")
	// ErrBadHeader: a headers entry's name is not an HTTP field name, or its value holds a
	// character HTTP forbids (such as a line break, which could smuggle in another header).
	ErrBadHeader = errors.New("invalid HTTP header")
	// ErrBadToolList: a tools allow-list entry is empty or listed twice.
	ErrBadToolList = errors.New("invalid tools entry")
)

// serverNameRule says what a valid server name is, in messages.
const serverNameRule = `a server name is 1 to 32 of a-z, 0-9, '_' and '-', starting with a letter, with no "__" and not ending with '_' (such as "kv" or "code-search")`

// Ranges of the [[mcp_servers]] limits.
const (
	minMCPCallTimeout   = time.Millisecond
	maxMCPCallTimeout   = time.Hour
	mcpCallTimeoutWords = "1ms to 1h"
	maxMCPConcurrency   = 10_000
)

// mcpResultBytesRange bounds max_result_bytes: at least a short answer, at most what an agent's
// context could sensibly take.
var mcpResultBytesRange = sandboxRange{1 << 10, 16 << 20, "1KiB to 16MiB", "the result text of one call handed to an agent"}

// The ranges of the bounds a server is held to: max_reply_bytes (what is read of one message),
// max_tools (the tools it may list) and max_tool_schema_bytes (each tool's description and
// schemas).
var (
	mcpReplyBytesRange      = sandboxRange{1 << 10, 1 << 30, "1KiB to 1GiB", "what is read of one message from the server"}
	mcpToolSchemaBytesRange = sandboxRange{1 << 10, 16 << 20, "1KiB to 16MiB", "each listed tool's description, input schema and output schema"}
)

// maxMCPTools bounds max_tools.
const maxMCPTools = 100_000

// CompileMCPServers validates the [[mcp_servers]] entries of doc, whose keys sit under prefix
// ("" for a config or blueprint file, "host" for a scenario's [host] table), and returns the
// valid servers in file order with every default filled in, and every problem found, each at
// its key and saying what would be valid. blueprint marks the servers as a blueprint's
// (mcpconfig.Server.Blueprint); whether a blueprint may declare servers at all is the scenario
// loader's decision, with the host config in hand. Dir is the absolute folder of doc.File, and a
// relative command containing a '/' is resolved against it; a bare command name is left for
// PATH when the server starts.
func CompileMCPServers(doc *tomlfile.Doc, prefix string, entries []MCPServerTable, blueprint bool) ([]mcpconfig.Server, tomlfile.Errors) {
	c := compiler{doc: doc, prefix: prefix}
	servers := c.mcpServers(entries, blueprint)
	return servers, c.errs
}

// mcpServers compiles every entry, keeping the valid ones; see CompileMCPServers.
func (c *compiler) mcpServers(entries []MCPServerTable, blueprint bool) []mcpconfig.Server {
	if len(entries) == 0 {
		return nil
	}
	dir := c.declaringDir()
	out := make([]mcpconfig.Server, 0, len(entries))
	firstAt := make(map[string]string, len(entries))
	for i := range entries {
		key := tomlfile.JoinIndex("mcp_servers", i)
		before := len(c.errs)
		s := c.mcpServer(key, &entries[i], dir)
		s.Blueprint = blueprint
		if s.Name != "" {
			if first, dup := firstAt[s.Name]; dup {
				line, _, _ := c.doc.Pos(c.path(first))
				c.errorf(key+".name", "%w %q: already declared by %s at line %d; give each server its own name", ErrDuplicateServer, s.Name, c.path(first), line)
			} else {
				firstAt[s.Name] = key
			}
		}
		if len(c.errs) == before {
			out = append(out, s)
		}
	}
	return out
}

// declaringDir is the absolute folder of the file being compiled, which commands and the
// servers' working directory are relative to.
func (c *compiler) declaringDir() string {
	file := ""
	if c.doc != nil {
		file = c.doc.File
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		// Only when the working directory is gone; the relative folder is the best left.
		return filepath.Dir(file)
	}
	return dir
}

// mcpServer compiles one entry at key (without the prefix).
func (c *compiler) mcpServer(key string, t *MCPServerTable, dir string) mcpconfig.Server {
	s := mcpconfig.Server{
		Dir: dir, Key: c.path(key),
		CallTimeout: mcpconfig.DefaultCallTimeout, MaxConcurrency: mcpconfig.DefaultMaxConcurrency, MaxResultBytes: mcpconfig.DefaultMaxResultBytes,
	}
	if c.doc != nil {
		s.File = c.doc.File
		s.Line, _, _ = c.doc.Pos(s.Key)
	}
	s.Name = c.serverName(key+".name", t.Name)
	c.transport(key, t, &s)
	if t.CallTimeout != nil {
		s.CallTimeout = c.mcpCallTimeout(key+".call_timeout", *t.CallTimeout)
	}
	if v := t.MaxConcurrency; v != nil {
		if *v < 1 || *v > maxMCPConcurrency {
			c.errorf(key+".max_concurrency", "%w: %d; valid: 1 to %d (the calls one server session runs at once)", ErrOutOfRange, *v, maxMCPConcurrency)
		} else {
			s.MaxConcurrency = int(*v)
		}
	}
	if t.MaxResultBytes != nil {
		if n := c.sandboxSize(key+".max_result_bytes", t.MaxResultBytes, mcpResultBytesRange); n != 0 {
			s.MaxResultBytes = int(n)
		}
	}
	if t.Tools != nil || c.present(key+".tools") {
		s.Tools = c.toolAllowList(key+".tools", t.Tools)
	}
	if t.ReadOnlyTools != nil {
		s.ReadOnlyTools = c.toolAllowList(key+".read_only_tools", t.ReadOnlyTools)
		for i, tool := range t.ReadOnlyTools {
			if s.Tools != nil && tool != "" && !slices.Contains(s.Tools, tool) {
				c.errorf(tomlfile.JoinIndex(key+".read_only_tools", i), "%w %q: not in the tools allow-list %v, so the host never advertises it; list only advertised tools", ErrBadToolList, tool, s.Tools)
			}
		}
	}
	c.serverBounds(key, t, &s)
	return s
}

// serverBounds fills the bounds a server is held to: max_reply_bytes (by default 4 MiB, or
// max_result_bytes when that is larger, and never less than it), max_tools and
// max_tool_schema_bytes.
func (c *compiler) serverBounds(key string, t *MCPServerTable, s *mcpconfig.Server) {
	s.MaxReplyBytes = max(mcpconfig.DefaultMaxReplyBytes, s.MaxResultBytes)
	if t.MaxReplyBytes != nil {
		switch n := c.sandboxSize(key+".max_reply_bytes", t.MaxReplyBytes, mcpReplyBytesRange); {
		case n == 0:
		case int(n) < s.MaxResultBytes:
			c.errorf(key+".max_reply_bytes", "%w: %d bytes is less than max_result_bytes (%d): no reply could carry a result that long; valid: at least max_result_bytes, at most 1GiB", ErrOutOfRange, n, s.MaxResultBytes)
		default:
			s.MaxReplyBytes = int(n)
		}
	}
	s.MaxTools = mcpconfig.DefaultMaxTools
	if v := t.MaxTools; v != nil {
		if *v < 1 || *v > maxMCPTools {
			c.errorf(key+".max_tools", "%w: %d; valid: 1 to %d (the tools the server may list)", ErrOutOfRange, *v, maxMCPTools)
		} else {
			s.MaxTools = int(*v)
		}
	}
	s.MaxToolSchemaBytes = mcpconfig.DefaultMaxToolSchemaBytes
	if t.MaxToolSchemaBytes != nil {
		if n := c.sandboxSize(key+".max_tool_schema_bytes", t.MaxToolSchemaBytes, mcpToolSchemaBytesRange); n != 0 {
			s.MaxToolSchemaBytes = int(n)
		}
	}
}

// present reports whether the file spells out path (under the prefix), telling a missing key
// from one given an empty value.
func (c *compiler) present(path string) bool {
	_, _, ok := c.doc.Pos(c.path(path))
	return ok
}

// serverName checks a server's name, returning "" after a problem.
func (c *compiler) serverName(path, name string) string {
	switch {
	case name == "" && !c.present(path):
		c.errorf(path, "%w; %s", ErrMissingKey, serverNameRule)
	case !validServerName(name):
		c.errorf(path, "%w %q; %s", ErrBadServerName, name, serverNameRule)
	default:
		return name
	}
	return ""
}

// validServerName reports whether name may name an MCP server: ^[a-z][a-z0-9_-]{0,31}$ with no
// "__" and no trailing '_'. The last two rules keep `<server>__<tool>` unambiguous: the server is
// always the part before the first "__", so no two servers can claim one tool name.
func validServerName(name string) bool {
	if name == "" || len(name) > 32 || name[0] < 'a' || name[0] > 'z' ||
		strings.Contains(name, mcpconfig.Separator) || strings.HasSuffix(name, "_") {
		return false
	}
	for i := 1; i < len(name); i++ {
		if ch := name[i]; !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			return false
		}
	}
	return true
}

// transport checks the command/url choice and the keys that belong to each, filling s.
func (c *compiler) transport(key string, t *MCPServerTable, s *mcpconfig.Server) {
	switch {
	case t.Command == nil && t.URL == nil:
		c.errorf(key, "%w: neither is given; write command = \"program\" for a stdio server or url = \"https://host/mcp\" for a streamable HTTP one", ErrServerTransport)
	case t.Command != nil && t.URL != nil:
		c.errorf(key+".url", "%w: both are given; keep command for a stdio server or url for a streamable HTTP one", ErrServerTransport)
	case t.Command != nil:
		s.Command = c.command(key+".command", *t.Command, s.Dir)
		if c.present(key + ".headers") {
			c.errorf(key+".headers", "%w: headers are sent to an HTTP server, and this one runs command over stdio; drop headers or use url", ErrWrongTransport)
		}
		s.Args = slices.Clone(t.Args)
		s.Env = c.stringMap(key+".env", t.Env, &envRules)
	default:
		s.URL = c.serverURL(key+".url", *t.URL)
		for _, k := range [...]struct {
			name string
			set  bool
		}{{"args", c.present(key + ".args")}, {"env", c.present(key + ".env")}} {
			if k.set {
				c.errorf(key+"."+k.name, "%w: %s is for a command started over stdio, and this server is reached at url; drop %s or use command", ErrWrongTransport, k.name, k.name)
			}
		}
		s.Headers = c.stringMap(key+".headers", t.Headers, &headerRules)
	}
}

// command resolves a stdio server's program: a relative path with a '/' against the declaring
// file's folder, a bare name left for PATH.
func (c *compiler) command(path, cmd, dir string) string {
	switch {
	case strings.TrimSpace(cmd) == "":
		c.errorf(path, "%w; command is the server's program: a name looked up in PATH, or a path (relative paths are relative to this file's folder)", ErrEmptyPath)
		return ""
	case cmd == mcpconfig.DemoCommand:
		return cmd
	case strings.HasPrefix(cmd, "@"):
		c.errorf(path, "%w %q; the only built-in server is %q (Warren's demo server); any other command is a program name or path", ErrUnknownBuiltinServer, cmd, mcpconfig.DemoCommand)
		return ""
	case filepath.IsAbs(cmd):
		return filepath.Clean(cmd)
	case strings.ContainsRune(cmd, '/') || strings.ContainsRune(cmd, filepath.Separator):
		return filepath.Join(dir, cmd)
	}
	return cmd
}

// serverURL checks a streamable HTTP server's URL.
func (c *compiler) serverURL(path, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.errorf(path, "%w %q; write an absolute http or https URL such as \"http://127.0.0.1:8080/mcp\"", ErrBadURL, raw)
		return ""
	}
	return raw
}

// mapRules say what the names and values of an env or headers table may be.
type mapRules struct {
	sentinel              error
	validName, validValue func(string) bool
	nameRule, valueRule   string
}

// envRules and headerRules check the env table of a stdio server and the headers of an HTTP one.
var (
	envRules = mapRules{
		sentinel: ErrBadEnvName, validName: validEnvName, validValue: validEnvValue,
		nameRule:  "a variable name is letters, digits and '_', not starting with a digit",
		valueRule: "a variable's value cannot hold a NUL character",
	}
	headerRules = mapRules{
		sentinel: ErrBadHeader, validName: httpguts.ValidHeaderFieldName, validValue: httpguts.ValidHeaderFieldValue,
		nameRule:  `a header name is an HTTP token such as "Authorization" or "X-Api-Key"`,
		valueRule: "a header value holds no line break or other control character but tab",
	}
)

// stringMap checks an env or headers table against rules and returns a copy of it, nil when
// absent.
func (c *compiler) stringMap(path string, raw map[string]string, rules *mapRules) map[string]string {
	if raw == nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		elem := tomlfile.JoinKey(path, name)
		switch {
		case !rules.validName(name):
			c.errorf(elem, "%w: name %q; %s", rules.sentinel, name, rules.nameRule)
		case !rules.validValue(raw[name]):
			c.errorf(elem, "%w: the value of %q holds a forbidden character; %s", rules.sentinel, name, rules.valueRule)
		}
	}
	return maps.Clone(raw)
}

// validEnvValue reports whether v can be passed in a process environment, which ends a value at
// its first NUL byte.
func validEnvValue(v string) bool { return !strings.ContainsRune(v, 0) }

// mcpCallTimeout parses call_timeout, returning the default after a problem.
func (c *compiler) mcpCallTimeout(path, raw string) time.Duration {
	d, err := time.ParseDuration(raw)
	switch {
	case err != nil:
		c.errorf(path, "%w %q; write a Go duration such as \"30s\", \"500ms\" or \"2m\" (the time one tool call may take)", ErrBadDuration, raw)
	case d < minMCPCallTimeout || d > maxMCPCallTimeout:
		c.errorf(path, "%w: %s; valid: %s (the time one tool call may take)", ErrOutOfRange, strconv.Quote(raw), mcpCallTimeoutWords)
	default:
		return d
	}
	return mcpconfig.DefaultCallTimeout
}

// toolAllowList checks a tools allow-list and returns it sorted, non-nil (an empty list is a
// setting: advertise none of the server's tools).
func (c *compiler) toolAllowList(path string, tools []string) []string {
	out := make([]string, 0, len(tools))
	firstAt := make(map[string]int, len(tools))
	for i, tool := range tools {
		elem := tomlfile.JoinIndex(path, i)
		if strings.TrimSpace(tool) == "" {
			c.errorf(elem, "%w: empty name; list the server's own tool names (\"kv_get\"), without the server prefix", ErrBadToolList)
			continue
		}
		if first, dup := firstAt[tool]; dup {
			c.errorf(elem, "%w %q: listed twice (first at tools[%d]); list each tool once", ErrBadToolList, tool, first)
			continue
		}
		firstAt[tool] = i
		out = append(out, tool)
	}
	slices.Sort(out)
	return out
}

// declaredServerTool reports whether name is `<server>__<tool>` for a server this config
// declares, which the permission tables may name before the server's tools are listed.
func (c *compiler) declaredServerTool(name string) bool {
	server, tool, ok := strings.Cut(name, mcpconfig.Separator)
	return ok && tool != "" && slices.Contains(c.servers, server)
}

// serverTools makes the tools of the compiled servers known to the permission tables: listed
// with list and added to c.known, or, when list is nil, accepted by their server's prefix.
func (c *compiler) serverTools(servers []mcpconfig.Server, list ServerTools) {
	if list == nil {
		for i := range servers {
			c.servers = append(c.servers, servers[i].Name)
		}
		return
	}
	if len(servers) > 0 {
		c.known = slices.Clip(c.known)
	}
	for i := range servers {
		s := &servers[i]
		names, err := list(s)
		if err != nil {
			// s.Key already carries the prefix.
			c.errs = append(c.errs, c.doc.Errorf(s.Key, "server %q did not list its tools: %w", s.Name, err))
			continue
		}
		c.known = append(c.known, names...)
	}
}
