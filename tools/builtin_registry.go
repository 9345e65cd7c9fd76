package tools

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Namespace is the namespace of the built-in tools this package defines: their ids are
// "tools.<name>" ("tools.read_file"). Other packages register theirs under their own package
// name ("subagents.spawn_agent").
const Namespace = "tools"

// BuiltinInfo describes one built-in tool to the built-in registry, the way a Caddy module
// describes itself: an id that says who defines it, and a constructor. The file that defines a
// tool registers it from its init function, so adding a built-in is one file's change and no
// hand-written list can forget it.
type BuiltinInfo struct {
	// ID is "<namespace>.<name>": namespace is the defining package's name ("tools",
	// "subagents"), one or more dot-separated labels of lower-case letters, digits and '_'
	// starting with a letter; name is exactly the name the tool's Spec gives, the one models
	// call. Tool names contain no '.', so the id splits at its last dot.
	ID string
	// New returns a ready tool. Built-ins are stateless values that take everything per call from
	// the ExecContext, so one value serves every agent of a world; New is still a constructor so
	// that a future built-in with state gets a fresh value per registry.
	New func() Tool
}

// Namespace returns the namespace part of the id ("tools" for "tools.read_file").
func (b BuiltinInfo) Namespace() string {
	ns, _ := splitBuiltinID(b.ID)
	return ns
}

// Name returns the tool-name part of the id ("read_file" for "tools.read_file"): the name the
// tool is registered and called under.
func (b BuiltinInfo) Name() string {
	_, name := splitBuiltinID(b.ID)
	return name
}

// splitBuiltinID splits an id at its last dot; a malformed id gives ("", id).
func splitBuiltinID(id string) (namespace, name string) {
	i := strings.LastIndexByte(id, '.')
	if i < 0 {
		return "", id
	}
	return id[:i], id[i+1:]
}

// builtins is the process-wide registry of built-in tools, filled by init functions. It is
// guarded by a lock only because RegisterBuiltin is exported: registration after init is legal,
// if unusual, and reads must not race it.
var builtins struct {
	mu     sync.RWMutex
	byID   map[string]BuiltinInfo
	byName map[string]string // tool name -> id, so two namespaces cannot both claim a name
}

// RegisterBuiltin adds a built-in tool to the registry. It is meant for init functions, and like
// caddy.RegisterModule it panics on a programming error, so a malformed or clashing registration
// stops the binary (and every test) at start instead of surfacing as a missing tool in a run: an
// id that is not "<namespace>.<name>", a nil constructor or tool, a tool whose Spec names another
// name than the id, an id registered twice, or a tool name another id already holds (the
// registries and the models know tools by name alone, so names must be unique across
// namespaces). Registration order does not matter: every listing is sorted by id.
func RegisterBuiltin(info BuiltinInfo) {
	if err := checkBuiltin(info); err != nil {
		panic("tools.RegisterBuiltin: " + err.Error())
	}
	name := info.Name()
	builtins.mu.Lock()
	defer builtins.mu.Unlock()
	if _, dup := builtins.byID[info.ID]; dup {
		panic(fmt.Sprintf("tools.RegisterBuiltin: %q is already registered", info.ID))
	}
	if other, dup := builtins.byName[name]; dup {
		panic(fmt.Sprintf("tools.RegisterBuiltin: %q: the tool name %q is already registered as %q", info.ID, name, other))
	}
	if builtins.byID == nil {
		builtins.byID = map[string]BuiltinInfo{}
		builtins.byName = map[string]string{}
	}
	builtins.byID[info.ID] = info
	builtins.byName[name] = info.ID
}

// checkBuiltin checks what RegisterBuiltin can check without the registry.
func checkBuiltin(info BuiltinInfo) error {
	ns, name := splitBuiltinID(info.ID)
	if err := checkNamespace(ns); err != nil {
		return fmt.Errorf("id %q: %w (an id is \"<namespace>.<name>\", such as \"tools.read_file\")", info.ID, err)
	}
	if err := checkToolName(name); err != nil {
		return fmt.Errorf("id %q: tool %w", info.ID, err)
	}
	if info.New == nil {
		return fmt.Errorf("%q has no constructor", info.ID)
	}
	t := info.New()
	if t == nil {
		return fmt.Errorf("%q: the constructor returned nil", info.ID)
	}
	if got := t.Spec().Name; got != name {
		return fmt.Errorf("%q: the tool's Spec names it %q; the id must end in the tool's name", info.ID, got)
	}
	return nil
}

// checkNamespace enforces the namespace rule documented on BuiltinInfo.ID.
func checkNamespace(ns string) error {
	if ns == "" {
		return fmt.Errorf("no namespace")
	}
	for label := range strings.SplitSeq(ns, ".") {
		if label == "" || !('a' <= label[0] && label[0] <= 'z') {
			return fmt.Errorf("namespace label %q must start with a lower-case letter", label)
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
				return fmt.Errorf("namespace label %q may contain only lower-case letters, digits and '_'", label)
			}
		}
	}
	return nil
}

// LookupBuiltin returns the built-in registered under id ("tools.read_file").
func LookupBuiltin(id string) (BuiltinInfo, bool) {
	builtins.mu.RLock()
	defer builtins.mu.RUnlock()
	info, ok := builtins.byID[id]
	return info, ok
}

// BuiltinInfos returns the built-ins registered in namespace (exactly that namespace, not the
// ones below it), or every built-in when namespace is "", sorted by id. Sorting is what makes
// init order irrelevant: whatever order the files registered in, callers see the same list.
func BuiltinInfos(namespace string) []BuiltinInfo {
	builtins.mu.RLock()
	defer builtins.mu.RUnlock()
	out := make([]BuiltinInfo, 0, len(builtins.byID))
	for _, id := range slices.Sorted(maps.Keys(builtins.byID)) {
		if info := builtins.byID[id]; namespace == "" || info.Namespace() == namespace {
			out = append(out, info)
		}
	}
	return out
}

// BuiltinsIn returns one tool of each built-in in namespace ("" for all), made by its
// constructor, sorted by id. Within one namespace the id order is the tools' name order.
func BuiltinsIn(namespace string) []Tool {
	infos := BuiltinInfos(namespace)
	out := make([]Tool, len(infos))
	for i, info := range infos {
		out[i] = info.New()
	}
	return out
}

// RegisterBuiltinsIn registers every built-in of namespace ("" for all) in r, in id order. It
// stops at the first error (registering nothing further), which names the tool: a name r already
// holds wraps ErrDuplicate.
func RegisterBuiltinsIn(r *Registry, namespace string) error {
	for _, t := range BuiltinsIn(namespace) {
		if err := r.Register(t); err != nil {
			return err
		}
	}
	return nil
}
