package hostconfig

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/mcp/mcpconfig"
	"github.com/warrenhq/warren/sandbox"
)

// A serve policy is what `host serve` lets the scenarios people submit reach beyond their own
// bundle: folders of the server's disk they may name files in, the environment variables a run's
// tools see, the keys a live model may be given and the hosts they may be sent to, and the Host
// and Origin names the HTTP server answers. It is the operator's file (host serve --policy), never
// a scenario's: a submission comes from whoever holds the token, and a scenario's own [host] table
// cannot widen it. The zero policy allows nothing beyond the bundle, passes the base environment
// (DefaultServeEnv) and gives no key. docs/api.md, "Security", documents the file.

// DefaultServeEnv are the variables a served run's tools see when the policy's [env] pass says
// nothing: the ones commands need to work, none of them a secret by convention. Every other
// variable of the server's environment is kept from runs.
var DefaultServeEnv = []string{"HOME", "LANG", "PATH", "TERM", "TZ"}

// ServeKey is one key a submitted scenario's live models may be given: the variable holding it
// and, when Hosts is not empty, the only base_url hosts it may be sent to.
type ServeKey struct {
	// Env is the variable's name, as a model table's api_key_env names it.
	Env string
	// Hosts are host names (no port), lower-case; empty means any host.
	Hosts []string
}

// Allows reports whether the key may be sent to host (a URL's host name).
func (k ServeKey) Allows(host string) bool {
	return len(k.Hosts) == 0 || slices.Contains(k.Hosts, strings.ToLower(host))
}

// ServePolicy is a validated serve policy. Paths are absolute and clean; folders are also kept
// with their symbolic links resolved, so a path spelled through a link is recognised.
type ServePolicy struct {
	// Path is the file it came from ("" when built from flags alone).
	Path string
	// Read are the folders whose files a submitted scenario may name (blueprints, scripts,
	// policies, corpora, items, MCP server programs), besides its own bundle.
	Read []string
	// Writable are the folders a submission's [host.sandbox] writable may name.
	Writable []string
	// Env are the variables a served run's tools (commands, MCP servers, scripts) may see; nil
	// means DefaultServeEnv (see PassEnv).
	Env []string
	// Keys are the variables a live model may take its key from, and where it may send it.
	Keys []ServeKey
	// Hosts are the names the HTTP server answers besides loopback and its listen address (the
	// Host header a proxy or a remote client sends).
	Hosts []string
	// Origins are the origins (scheme://host[:port]) trusted to make state-changing requests
	// besides the server's own.
	Origins []string
	// Private are the hosts (names or addresses) a served run's live models and MCP servers may
	// reach although they are not public (a local model server, an MCP server on the private
	// network). Every other host is reached only at public addresses, checked as each connection
	// is made, so that a submitted base_url or MCP url cannot make the server reach its own
	// machine or network.
	Private []string
	// MaxAgents bounds the agents a submission starts with (its groups' counts, after its
	// launch's agents): whoever holds the token must not be able to ask the server for more
	// memory than it has. 0 means DefaultServeMaxAgents.
	MaxAgents int
}

// DefaultServeMaxAgents is how many agents a submitted run may start with when the policy's
// [limits] agents says nothing: ten times the largest shipped example, about 1 GiB of world.
const DefaultServeMaxAgents = 100_000

// MaxServeAgents is the most [limits] agents may allow (10^7, about 100 GiB of world).
const MaxServeAgents = 10_000_000

// AgentLimit is the most agents a submission may start with.
func (p *ServePolicy) AgentLimit() int {
	if p == nil || p.MaxAgents == 0 {
		return DefaultServeMaxAgents
	}
	return p.MaxAgents
}

// PrivateAllowed reports whether a served run may reach host ("name" or "name:port", as a URL
// writes it) at a non-public address: the policy lists it in Private.
func (p *ServePolicy) PrivateAllowed(host string) bool {
	if p == nil {
		return false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return slices.Contains(p.Private, host)
}

// PassEnv is the variables a served run's tools may see: Env, or DefaultServeEnv when unset.
func (p *ServePolicy) PassEnv() []string {
	if p == nil || p.Env == nil {
		return DefaultServeEnv
	}
	return p.Env
}

// Key returns the key entry for the variable name, if the policy gives one.
func (p *ServePolicy) Key(name string) (ServeKey, bool) {
	if p != nil {
		for _, k := range p.Keys {
			if k.Env == name {
				return k, true
			}
		}
	}
	return ServeKey{}, false
}

// KeyNames lists the variables the policy gives keys from, for messages ("none" when none).
func (p *ServePolicy) KeyNames() string {
	var out []string
	if p != nil {
		for _, k := range p.Keys {
			if len(k.Hosts) == 0 {
				out = append(out, k.Env+" (any host)")
			} else {
				out = append(out, k.Env+" (to "+strings.Join(k.Hosts, ", ")+")")
			}
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

// Sentinel errors of a serve policy, wrapped by the problems LoadServePolicy and the Serve*
// helpers report besides ErrNotAbsolute, ErrBadEnvName and ErrDuplicatePath.
var (
	// ErrNotFolder: a [files] entry does not name an existing folder.
	ErrNotFolder = errors.New("not a folder")
	// ErrBadHost: a host name (of [[keys]] hosts or [http] hosts) is empty, carries a port, a
	// scheme or a path, or is not a name or address.
	ErrBadHost = errors.New("invalid host name")
	// ErrBadOrigin: an [http] origins entry is not scheme://host[:port].
	ErrBadOrigin = errors.New("invalid origin")
	// ErrKeyPassed: a variable is both a key and passed to tools, which would hand the key to
	// every command.
	ErrKeyPassed = errors.New("a key passed to tools")
	// ErrBadLimit: a [limits] entry is out of its range.
	ErrBadLimit = errors.New("limit out of range")
)

// servePolicyFile is a serve policy as written.
type servePolicyFile struct {
	Files struct {
		Read     []string `toml:"read"`
		Writable []string `toml:"writable"`
	} `toml:"files"`
	Env struct {
		Pass []string `toml:"pass"`
	} `toml:"env"`
	Keys []struct {
		Env   string   `toml:"env"`
		Hosts []string `toml:"hosts"`
	} `toml:"keys"`
	HTTP struct {
		Hosts   []string `toml:"hosts"`
		Origins []string `toml:"origins"`
	} `toml:"http"`
	Limits struct {
		Agents *int64 `toml:"agents"`
	} `toml:"limits"`
	Outbound struct {
		Private []string `toml:"private"`
	} `toml:"outbound"`
}

// LoadServePolicy reads and validates the serve policy at path. Every problem is reported at
// once, each at its file:line:key and saying what would be valid.
func LoadServePolicy(path string) (*ServePolicy, error) {
	var f servePolicyFile
	doc, err := tomlfile.ReadFile(path, &f)
	if err != nil {
		return nil, err
	}
	p := &ServePolicy{Path: path}
	var errs tomlfile.Errors
	at := func(key string, err error) { errs = append(errs, doc.Errorf(key, "%w", err)) }
	for i, dir := range f.Files.Read {
		if d, err := ServeFolder(dir); err != nil {
			at(tomlfile.JoinIndex("files.read", i), err)
		} else {
			p.Read = append(p.Read, d)
		}
	}
	for i, dir := range f.Files.Writable {
		if d, err := ServeFolder(dir); err != nil {
			at(tomlfile.JoinIndex("files.writable", i), err)
		} else {
			p.Writable = append(p.Writable, d)
		}
	}
	if f.Env.Pass != nil {
		p.Env = []string{}
		for i, name := range f.Env.Pass {
			if !validEnvName(name) {
				at(tomlfile.JoinIndex("env.pass", i), fmt.Errorf("%w %q; a variable name is letters, digits and '_', not starting with a digit", ErrBadEnvName, name))
				continue
			}
			p.Env = append(p.Env, name)
		}
	}
	for i, k := range f.Keys {
		key := tomlfile.JoinIndex("keys", i)
		entry := ServeKey{Env: k.Env}
		if !validEnvName(k.Env) {
			at(key+".env", fmt.Errorf("%w %q; name the variable holding the key, such as OPENAI_API_KEY", ErrBadEnvName, k.Env))
		}
		for j, h := range k.Hosts {
			if host, err := ServeHost(h); err != nil {
				at(tomlfile.JoinIndex(key+".hosts", j), err)
			} else {
				entry.Hosts = append(entry.Hosts, host)
			}
		}
		p.Keys = append(p.Keys, entry)
	}
	for i, h := range f.HTTP.Hosts {
		if host, err := ServeHost(h); err != nil {
			at(tomlfile.JoinIndex("http.hosts", i), err)
		} else {
			p.Hosts = append(p.Hosts, host)
		}
	}
	for i, o := range f.HTTP.Origins {
		if origin, err := ServeOrigin(o); err != nil {
			at(tomlfile.JoinIndex("http.origins", i), err)
		} else {
			p.Origins = append(p.Origins, origin)
		}
	}
	for i, h := range f.Outbound.Private {
		if host, err := ServeHost(h); err != nil {
			at(tomlfile.JoinIndex("outbound.private", i), err)
		} else {
			p.Private = append(p.Private, host)
		}
	}
	if n := f.Limits.Agents; n != nil {
		if *n < 1 || *n > MaxServeAgents {
			at("limits.agents", fmt.Errorf("%w: %d; give the most agents a submitted run may start with, 1 to %d (default %d)", ErrBadLimit, *n, MaxServeAgents, DefaultServeMaxAgents))
		} else {
			p.MaxAgents = int(*n)
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Check reports what is wrong with the policy as a whole, once its entries are each valid (the
// file's, and those host serve's flags added): a folder, a host or a key given twice, or a
// variable both passed to tools and given as a key.
func (p *ServePolicy) Check() error {
	var problems []error
	dup := func(what string, list []string) {
		seen := map[string]bool{}
		for _, v := range list {
			if seen[v] {
				problems = append(problems, fmt.Errorf("%w: %s %s is given twice", ErrDuplicatePath, what, v))
			}
			seen[v] = true
		}
	}
	dup("the folder", p.Read)
	dup("the writable folder", p.Writable)
	dup("the host", p.Hosts)
	dup("the origin", p.Origins)
	var keys []string
	for _, k := range p.Keys {
		keys = append(keys, k.Env)
		if slices.Contains(p.PassEnv(), k.Env) {
			problems = append(problems, fmt.Errorf("%w: %s is a key and is passed to every run's tools too ([env] pass, or the default %s); a key goes to the models that name it, and only to them",
				ErrKeyPassed, k.Env, strings.Join(DefaultServeEnv, " ")))
		}
	}
	dup("the key", keys)
	return errors.Join(problems...)
}

// ServeFolder validates a folder a serve policy allows: an absolute path of an existing folder,
// returned clean.
func ServeFolder(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%w: %q; give the folder's absolute path (a relative one would depend on where host serve was started)", ErrNotAbsolute, dir)
	}
	dir = filepath.Clean(dir)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w: %s (it must exist when the server starts)", ErrNotFolder, dir)
	}
	return dir, nil
}

// ServeHost validates a host name a serve policy names: a DNS name or an IP address, without a
// port, a scheme or a path; returned lower-case, an IPv6 address without brackets.
func ServeHost(h string) (string, error) {
	h = strings.ToLower(strings.TrimSpace(h))
	bare := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip := net.ParseIP(bare); ip != nil {
		return bare, nil
	}
	if h == "" || len(h) > 253 || strings.ContainsAny(h, ":/@?#[] ") {
		return "", fmt.Errorf("%w %q; give a host name such as api.openai.com or an address such as 127.0.0.1, without a scheme or a port", ErrBadHost, h)
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") || strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return "", fmt.Errorf("%w %q; give a host name such as api.openai.com or an address such as 127.0.0.1, without a scheme or a port", ErrBadHost, h)
		}
	}
	return h, nil
}

// ServeOrigin validates an origin a serve policy trusts: scheme://host[:port], http or https,
// nothing after it; returned as given but lower-case.
func ServeOrigin(o string) (string, error) {
	o = strings.ToLower(strings.TrimSpace(o))
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%w %q; give scheme://host[:port], such as https://warren.example.com, as a browser sends it in Origin", ErrBadOrigin, o)
	}
	return o, nil
}

// ParseServeKey reads a key as host serve --allow-key writes it: NAME, or NAME=HOST[,HOST...]
// binding the key to those base_url hosts.
func ParseServeKey(flag string) (ServeKey, error) {
	name, hosts, bound := strings.Cut(flag, "=")
	k := ServeKey{Env: name}
	if !validEnvName(name) {
		return k, fmt.Errorf("%w %q; write NAME or NAME=HOST[,HOST...], such as OPENAI_API_KEY=api.openai.com", ErrBadEnvName, name)
	}
	if bound {
		for h := range strings.SplitSeq(hosts, ",") {
			host, err := ServeHost(h)
			if err != nil {
				return k, err
			}
			k.Hosts = append(k.Hosts, host)
		}
	}
	return k, nil
}

// LookupKey is where a served scenario's live models look their keys up: the server's
// environment, for the variables the policy gives as keys, and nothing for any other. Which host
// a key may go to is CheckKey's, once the scenario has loaded.
func (p *ServePolicy) LookupKey(name string) (string, bool) {
	if _, ok := p.Key(name); !ok {
		return "", false
	}
	return os.LookupEnv(name)
}

// CheckKey says what is wrong with a live model of a submitted scenario reading its key from env
// (named: its table, or a pool's, wrote api_key_env; false: the kind's default) and sending it to
// baseURL, or nil. A key the policy gives may go to the hosts it is bound to; a variable the
// scenario named and the policy does not give is refused; a kind's default variable the policy
// does not give is not, and the model goes without a key (a local or fake server needs none).
func (p *ServePolicy) CheckKey(env string, named bool, baseURL string) error {
	host := baseURL
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		host = u.Hostname()
	}
	k, ok := p.Key(env)
	switch {
	case ok && k.Allows(host):
		return nil
	case ok:
		return fmt.Errorf("api_key_env %s would go to %s, and this server sends that key only to %s", env, host, strings.Join(k.Hosts, ", "))
	case named:
		return fmt.Errorf("api_key_env %s: this server gives no such key (it gives: %s; host serve --allow-key NAME[=HOST,...])", env, p.KeyNames())
	}
	return nil
}

// CheckSubmitted reports, each at its key, what a submitted scenario's own host config c (its
// [host] table) asks of the server beyond what it gives: a sandbox looser than the server's (the
// ceiling of server, the host config the server runs under, the defaults when nil; with the
// variables the policy passes and its writable folders in place of the server's), a hidden path
// of the server's left visible, variables the policy does not pass (the sandbox's, a script's
// env(), those the stdio MCP servers inherit), and scripts reaching private addresses. servers
// are the MCP servers the scenario runs (its [host] table's and its blueprints'). Nothing is
// reported for a config the server gave itself: the server runs it under its own rules.
func (p *ServePolicy) CheckSubmitted(c, server *Config, servers []mcpconfig.Server) []string {
	if server == nil {
		server = Default()
	}
	pass := slices.Sorted(slices.Values(p.PassEnv()))
	outer := server.SandboxCeiling()
	outer.AllowEnv = pass
	outer.Writable = nil
	if p != nil {
		outer.Writable = slices.Sorted(slices.Values(p.Writable))
	}
	var problems []string
	if _, err := sandbox.Tighten(outer, c.Sandbox); err != nil {
		problems = append(problems, fmt.Sprintf("host.sandbox: %v, under this server", err))
	}
	ceiling := c.SandboxCeiling()
	for _, h := range outer.Hidden {
		if !slices.Contains(ceiling.Hidden, h) {
			problems = append(problems, fmt.Sprintf("host.sandbox.hidden: leaves %s visible, which this server hides (hidden leaves out what it does not list)", h))
		}
	}
	passed := strings.Join(pass, " ")
	if c.Sandbox.AllowEnv == nil {
		for _, name := range ceiling.AllowEnv {
			if !slices.Contains(pass, name) {
				problems = append(problems, fmt.Sprintf("host.sandbox.allow_env_vars: the default passes %s, which this server does not pass to runs (it passes: %s); list the variables commands need", name, passed))
			}
		}
	}
	for _, name := range c.Scripting.AllowEnv {
		if !slices.Contains(pass, name) {
			problems = append(problems, fmt.Sprintf("host.scripting.allow_env: %s, which this server does not pass to runs (it passes: %s)", name, passed))
		}
	}
	if c.Scripting.HTTPAllowPrivate && !server.Scripting.HTTPAllowPrivate {
		problems = append(problems, "host.scripting.http_allow_private: scripts may not reach the server's private and loopback addresses")
	}
	for _, s := range servers {
		if s.Command == "" {
			continue
		}
		for _, name := range mcpconfig.InheritedEnv {
			if !slices.Contains(pass, name) {
				problems = append(problems, fmt.Sprintf("%s: a stdio MCP server inherits %s, which this server does not pass to runs (it passes: %s)", s.Key, name, passed))
			}
		}
	}
	return problems
}
