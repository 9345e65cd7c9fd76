package models

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// KindNamespace begins every model kind's id. The rest of the id is the kind's name, the word a
// scenario writes in kind = "...": the kind with id "models.scripted" is kind = "scripted". The
// namespace keeps model kinds apart from registries of other things that may come (tool kinds,
// sandbox modes) wherever ids are listed together, as Caddy's module ids do.
const KindNamespace = "models."

// kindName is what may follow KindNamespace: a lower-case word, as scenario keys are.
var kindName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Kind is one kind of model back end that a scenario can name. A kind lives in the file that
// implements its back end and registers itself there, in init, with RegisterKind; the scenario
// loader knows no kind by name. Adding a kind is that file and its registration, plus the
// import that links its package into the host.
type Kind struct {
	// ID is KindNamespace followed by the kind's name ("models.scripted"); see Name.
	ID string
	// Summary says in one line what the kind's models do, for host --help and the docs'
	// list of kinds.
	Summary string
	// New returns a fresh, empty table of the kind: a pointer to a struct whose toml-tagged
	// fields are the keys a model table of this kind accepts besides kind. The loader decodes
	// the table into it strictly (an unknown key is an error naming the valid ones), then
	// calls Compile. Keeping the keys in a struct rather than handing the kind raw values means
	// no kind can forget to reject a misspelled key, and the loader can tell a user which other
	// kind a stray key belongs to.
	New func() KindConfig
}

// Name is the kind's name, its ID without KindNamespace: what a scenario writes in kind = "...",
// and what its models' ids begin with ("scripted:worker").
func (k Kind) Name() string { return strings.TrimPrefix(k.ID, KindNamespace) }

// KindConfig is one model table of a kind, decoded (see Kind.New), which compiles into the
// model that every agent of the groups naming the table shares.
type KindConfig interface {
	// Compile checks the table and builds its model, once per scenario load. A problem with
	// one key is a *KeyError naming the key, several are KeyErrors, and any other error is a
	// problem with the table as a whole; the loader positions each in the scenario file.
	Compile(env *KindEnv) (Model, error)
}

// KindEnv is what the scenario loader hands a kind to compile one model table: who the model is
// and what of the host and the scenario it may depend on. It carries plain values, so that
// package models depends on neither the loader nor the host config.
type KindEnv struct {
	// Key is the model's key in the scenario ("worker" for [models.worker]); Path is its
	// table's key path ("models.worker"), for messages that name another key.
	Key, Path string
	// ID is what the model's ID method must return and traces record: the kind's name and the
	// key, "scripted:worker".
	ID string
	// Resolve turns a path written in the scenario into one to open, relative to the scenario
	// file's folder (nil: the path as written).
	Resolve func(path string) string
	// Confine, when set, is asked about each file the table names before it is read (ReadFile
	// asks it), so that a host serving other people's scenarios reads nothing of its own disk
	// they name; its error refuses the file.
	Confine func(path string) error
	// LookupEnv is where a live model looks up the variable holding its key (api_key_env); nil
	// is the process environment. A variable it does not give leaves the model without a key.
	LookupEnv func(name string) (string, bool)
	// HTTPClient carries a live model's requests (nil: its SDK's default). host serve gives one
	// whose connections reach only public addresses, unless its policy lets a host reach others
	// ([outbound] private), so that a submitted base_url cannot make the server reach its own
	// network.
	HTTPClient *http.Client
	// Scripting is the host config's limits on scripts, which a model written in a script
	// shares with script tools.
	Scripting ScriptingLimits
	// Hash receives what the model depends on beyond the scenario file (a policy file's
	// contents), so that the scenario's hash, and every trace's header, changes with it. nil
	// hashes nothing.
	Hash io.Writer
	// Params are the scenario's parameters ([params], as a sweep's --param set them), by name:
	// strings, int64s, float64s and booleans, for a model written to read them (a js policy's
	// params, a scripted template's {{.Params.name}}). Shared: read them, never modify them.
	Params map[string]any
}

// ScriptingLimits are the host's [scripting] limits a model kind may need.
type ScriptingLimits struct {
	// MaxMemory is the memory budget of one script call in bytes (0: the kind's default).
	MaxMemory int64
}

// ResolvePath resolves a path written in the scenario (see Resolve).
func (e *KindEnv) ResolvePath(path string) string {
	if e.Resolve == nil {
		return path
	}
	return e.Resolve(path)
}

// ReadFile reads a file the table names: the path resolved (ResolvePath) and asked of Confine
// first. It returns the path it read as well.
func (e *KindEnv) ReadFile(path string) (string, []byte, error) {
	p := e.ResolvePath(path)
	if e.Confine != nil {
		if err := e.Confine(p); err != nil {
			return p, nil, err
		}
	}
	data, err := os.ReadFile(p)
	return p, data, err
}

// Getenv is the value of the variable name as LookupEnv gives it ("" when it gives none).
func (e *KindEnv) Getenv(name string) string {
	lookup := e.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, _ := lookup(name)
	return v
}

// KeyError is a problem with one key of a model table, which the loader reports at that key's
// line in the scenario file.
type KeyError struct {
	// Key is the key's path relative to the model's table, in the loader's path syntax
	// ("file", "turns[2].calls[0]"); "" is the table itself.
	Key string
	// Err is the problem, without the key.
	Err error
}

// Error is the key and the problem, "file: ...".
func (e *KeyError) Error() string {
	if e.Key == "" {
		return e.Err.Error()
	}
	return e.Key + ": " + e.Err.Error()
}

// Unwrap returns the problem, so that errors.Is sees its sentinels.
func (e *KeyError) Unwrap() error { return e.Err }

// KeyErrors is every problem Compile found in one table, so a user fixes a table in one pass.
type KeyErrors []*KeyError

// Error is one problem per line.
func (es KeyErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (es KeyErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// The registry of model kinds, filled by init functions and read by loaders.
var (
	kindsMu sync.RWMutex
	kinds   = map[string]Kind{}
)

// RegisterKind adds k to the registry; call it from the init function of the file that
// implements the kind. It panics, as a duplicate http.Handle does, when k's ID is not
// KindNamespace followed by a lower-case word, when the ID is taken, or when New is missing or
// does not return a pointer to a struct: each is a programming error that must stop the host
// before it runs anything.
func RegisterKind(k Kind) {
	name := k.Name()
	if !strings.HasPrefix(k.ID, KindNamespace) || !kindName.MatchString(name) {
		panic(fmt.Sprintf("models: kind id %q is not %q followed by a lower-case name such as \"scripted\"", k.ID, KindNamespace))
	}
	if k.Summary == "" {
		panic(fmt.Sprintf("models: kind %q has no summary", k.ID))
	}
	if k.New == nil {
		panic(fmt.Sprintf("models: kind %q has no New", k.ID))
	}
	if t := reflect.TypeOf(k.New()); t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("models: kind %q: New returns %v, want a pointer to a struct", k.ID, t))
	}
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[k.ID]; dup {
		panic(fmt.Sprintf("models: kind %q is registered twice", k.ID))
	}
	kinds[k.ID] = k
}

// LookupKind returns the kind registered under id ("models.scripted").
func LookupKind(id string) (Kind, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	k, ok := kinds[id]
	return k, ok
}

// Kinds returns the ids of every registered kind, sorted, so that lists of kinds in messages,
// help and docs come out the same on every run.
func Kinds() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	ids := make([]string, 0, len(kinds))
	for id := range kinds {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
