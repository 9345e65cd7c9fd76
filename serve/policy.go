package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/netguard"
)

// A submitted scenario comes from whoever holds the token, and it names files, programs,
// variables and keys of the machine it runs on. The server reads, runs and sends only what its
// policy (Config.Policy) gives it: every file and program a submission names lies in its bundle
// or in a folder the policy allows, checked through os.Root before the load opens it; its own
// [host] table may only tighten the server's sandbox and pass no variable the policy does not;
// its live models get only the keys the policy gives, and only for the hosts it binds them to.

// confinement is where one submission's files may lie: its bundle (none for a scenario given by
// its path on the server's disk), then the policy's folders, each also as its symbolic links
// resolve.
type confinement struct {
	bundle string
	roots  []string
	// named says which folders these are, for messages.
	named string
}

// confine makes the confinement of a submission whose bundle is bundle ("" for none).
func (s *Server) confine(bundle string) *confinement {
	c := &confinement{bundle: bundle}
	var names []string
	add := func(dir string) {
		c.roots = append(c.roots, dir)
		if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
			c.roots = append(c.roots, real)
		}
	}
	if bundle != "" {
		add(bundle)
		names = append(names, "the submission's bundle (put the file in the archive, named relative to the scenario)")
	}
	if p := s.cfg.Policy; p != nil {
		for _, dir := range p.Read {
			add(dir)
		}
		if len(p.Read) > 0 {
			names = append(names, "the folders this server allows ("+strings.Join(p.Read, ", ")+")")
		}
	}
	switch {
	case len(names) > 0:
		c.named = strings.Join(names, " and ")
	default:
		c.named = "every folder this server allows, and it allows none (upload the scenario as a bundle, or start host serve with --allow-folder DIR)"
	}
	return c
}

// check is LoadOptions.Confine: nil when path lies inside one of the folders and, opened through
// an os.Root of that folder, stays inside it (a symbolic link that leads out is refused; a path
// that does not exist there is left for the load to report); else an ErrNotAllowed error.
func (c *confinement) check(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotAllowed, path, err)
	}
	for _, candidate := range []string{abs, realPath(abs)} {
		for _, root := range c.roots {
			rel, err := filepath.Rel(root, candidate)
			if err != nil || !filepath.IsLocal(rel) && rel != "." {
				continue
			}
			return c.within(root, rel, abs)
		}
	}
	return fmt.Errorf("%w: %s lies outside %s", ErrNotAllowed, abs, c.named)
}

// within checks rel through an os.Root opened on root.
func (c *confinement) within(root, rel, abs string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("%w: %s: the folder %s cannot be opened: %v", ErrNotAllowed, abs, root, err)
	}
	defer r.Close()
	if _, err := r.Stat(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s leads outside %s (through a symbolic link), or cannot be read there: %v", ErrNotAllowed, abs, c.named, unwrapPath(err))
	}
	return nil
}

// realPath is abs with its symbolic links resolved as far as they exist (abs itself when
// nothing resolves), so that a path spelled through a link to an allowed folder is found in it.
func realPath(abs string) string {
	dir, rest := abs, ""
	for dir != filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
	}
	return abs
}

// unwrapPath is a PathError's cause alone: the path is in the message already.
func unwrapPath(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// load loads a submitted scenario under the server's rules: every file it names confined to c,
// its models' keys looked up among those the policy gives, no more agents than the policy's
// limit (agents is the launch's), then checked as a whole (checkLoaded). A refusal is ErrSubmit
// and ErrNotAllowed.
func (s *Server) load(file string, c *confinement, params []warren.Param, agents int) (*warren.Scenario, error) {
	sc, err := warren.LoadWith(file, warren.LoadOptions{Host: s.cfg.Host, Params: params, Confine: c.check, Keys: s.cfg.Policy.LookupKey, PrivateHosts: s.cfg.Policy.PrivateAllowed})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSubmit, err)
	}
	total := 0
	for _, n := range sc.GroupCounts(agents) {
		total += n
	}
	if limit := s.cfg.Policy.AgentLimit(); total > limit {
		return nil, fmt.Errorf("%w: %w: the run would start with %d agents, more than the %d the server allows ([limits] agents of its policy; ask for fewer with the launch's agents)",
			ErrSubmit, ErrNotAllowed, total, limit)
	}
	if err := s.checkLoaded(sc, c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSubmit, err)
	}
	return sc, nil
}

// checkLoaded checks a loaded submission against the policy: every file its load read lies in
// its folders (through os.Root, once more: the corpora's and script tools' files are found only
// as the load walks their folders), its own [host] table asks for nothing the server does not
// give (hostconfig.ServePolicy.CheckSubmitted), and its live models send no key where the policy
// does not let it go.
func (s *Server) checkLoaded(sc *warren.Scenario, c *confinement) error {
	var problems []string
	own := s.cfg.Host
	for _, in := range sc.Inputs() {
		if own != nil && (own.Path != "" && sameFile(in.Path, own.Path) || own.Scripting.ToolsDir != "" && inside(in.Path, own.Scripting.ToolsDir)) {
			continue // the server's own host config and its script tools (host serve --config)
		}
		if err := c.check(in.Path); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", in.What, strings.TrimPrefix(err.Error(), ErrNotAllowed.Error()+": ")))
		}
	}
	if own == nil {
		problems = append(problems, s.cfg.Policy.CheckSubmitted(sc.Host, nil, sc.MCPServers)...)
	}
	for _, k := range sc.LiveKeys(own) {
		if err := s.cfg.Policy.CheckKey(k.Env, k.Named, k.BaseURL); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", k.Where, err))
		}
		if err := s.checkOutbound(k.BaseURL); err != nil {
			problems = append(problems, fmt.Sprintf("%s: base_url %v", k.Where, err))
		}
	}
	for _, m := range sc.MCPServers {
		if m.URL == "" {
			continue
		}
		if err := s.checkOutbound(m.URL); err != nil {
			problems = append(problems, fmt.Sprintf("mcp server %s (%s): url %v", m.Name, m.Origin(), err))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w:\n%s", ErrNotAllowed, strings.Join(problems, "\n"))
}

// checkOutbound refuses, before the run starts, an address a served run's model or MCP server
// would be refused at connect time anyway (netguard.ServedRule), when its URL writes it as such:
// an address literal that is not public, or localhost. A name that resolves to one is refused
// as each connection is made.
func (s *Server) checkOutbound(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || s.cfg.Policy.PrivateAllowed(u.Host) {
		return nil // the loader judged the URL; an allowed host may be private
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	kind := ""
	if addr, err := netip.ParseAddr(host); err == nil {
		kind = netguard.Kind(addr)
	} else if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		kind = "loopback"
	}
	if kind == "" {
		return nil
	}
	return fmt.Errorf("%s is not a public address (%s): %s", raw, kind, netguard.ServedRule)
}

// inside reports whether path lies in dir, by their absolute paths.
func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && filepath.IsLocal(rel)
}

// PolicyFlags are host serve's policy flags: --policy's file, and what the --allow flags add.
type PolicyFlags struct {
	File                                   string
	Folders, Keys, Hosts, Origins, Private []string
}

// Policy is the policy the flags say: the file's (none: an empty one), with the folders, keys
// (NAME or NAME=HOST,...), hosts and origins of the flags added, each checked as the file's are,
// then checked whole. An error names the flag.
func (s PolicyFlags) Policy() (*hostconfig.ServePolicy, error) {
	p := &hostconfig.ServePolicy{}
	if s.File != "" {
		var err error
		if p, err = hostconfig.LoadServePolicy(s.File); err != nil {
			return nil, err
		}
	}
	for _, dir := range s.Folders {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("--allow-folder %s: %w", dir, err)
		}
		d, err := hostconfig.ServeFolder(abs)
		if err != nil {
			return nil, fmt.Errorf("--allow-folder %s: %w", dir, err)
		}
		p.Read = append(p.Read, d)
	}
	for _, flag := range s.Keys {
		k, err := hostconfig.ParseServeKey(flag)
		if err != nil {
			return nil, fmt.Errorf("--allow-key %s: %w", flag, err)
		}
		p.Keys = append(p.Keys, k)
	}
	for _, h := range s.Hosts {
		host, err := hostconfig.ServeHost(h)
		if err != nil {
			return nil, fmt.Errorf("--allow-host %s: %w", h, err)
		}
		p.Hosts = append(p.Hosts, host)
	}
	for _, h := range s.Private {
		host, err := hostconfig.ServeHost(h)
		if err != nil {
			return nil, fmt.Errorf("--allow-private %s: %w", h, err)
		}
		p.Private = append(p.Private, host)
	}
	for _, o := range s.Origins {
		origin, err := hostconfig.ServeOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("--allow-origin %s: %w", o, err)
		}
		p.Origins = append(p.Origins, origin)
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}
