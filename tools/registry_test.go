package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/warrenhq/warren/memory"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestRegistryRegisterGetLookup(t *testing.T) {
	r := NewRegistry()
	a, b := newFake("alpha", "A"), newFake("beta", "B")
	for _, tool := range []Tool{b, a} {
		if err := r.Register(tool); err != nil {
			t.Fatalf("Register: %v", err)
		}
	}
	if got, ok := r.Get("alpha"); !ok || got != a {
		t.Fatalf("Get(alpha) = %v, %v; want the alpha tool", got, ok)
	}
	h, ok := r.Lookup("beta")
	if !ok || h.Tool() != b || h.Name() != "beta" || h.Spec().Description != "fake B" {
		t.Fatalf("Lookup(beta) = %+v, %v", h, ok)
	}
	if _, ok := r.Get("gamma"); ok {
		t.Fatal("Get(gamma) found a tool that was never registered")
	}
	if _, ok := r.Lookup("gamma"); ok {
		t.Fatal("Lookup(gamma) found a tool that was never registered")
	}
	if r.Len() != 2 {
		t.Fatalf("Len = %d, want 2", r.Len())
	}
}

func TestRegistryNamesAndSpecsAreSorted(t *testing.T) {
	r := NewRegistry()
	for _, n := range []string{"zeta", "alpha", "mu", "beta"} {
		if err := r.Register(newFake(n, n)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"alpha", "beta", "mu", "zeta"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names = %v, want %v", got, want)
	}
	var specNames []string
	for _, s := range r.Specs() {
		specNames = append(specNames, s.Name)
	}
	if !slices.Equal(specNames, want) {
		t.Fatalf("Specs names = %v, want %v", specNames, want)
	}
}

func TestRegistryDuplicateIsRejected(t *testing.T) {
	r := NewRegistry()
	first := newFake("dup", "first")
	if err := r.Register(first); err != nil {
		t.Fatal(err)
	}
	err := r.Register(newFake("dup", "second"))
	wantError(t, err, ErrDuplicate, `"dup"`)
	if got, _ := r.Get("dup"); got != first {
		t.Fatal("a rejected duplicate replaced the registered tool")
	}
}

func TestRegistryUnregister(t *testing.T) {
	r := NewRegistry()
	a := newFake("a", "A")
	if err := r.Register(a); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(newFake("b", "B")); err != nil {
		t.Fatal(err)
	}
	got, ok := r.Unregister("a")
	if !ok || got != a {
		t.Fatalf("Unregister(a) = %v, %v", got, ok)
	}
	if _, ok := r.Unregister("a"); ok {
		t.Fatal("second Unregister(a) reported success")
	}
	if !slices.Equal(r.Names(), []string{"b"}) || r.Len() != 1 {
		t.Fatalf("after Unregister: names %v, len %d", r.Names(), r.Len())
	}
	if err := r.Register(newFake("a", "A2")); err != nil {
		t.Fatalf("re-register after Unregister: %v", err)
	}
}

func TestRegistryZeroValueIsUsable(t *testing.T) {
	var r Registry
	if r.Len() != 0 || len(r.Names()) != 0 || len(r.Specs()) != 0 {
		t.Fatal("zero Registry is not empty")
	}
	if _, ok := r.Unregister("x"); ok {
		t.Fatal("Unregister on an empty registry reported success")
	}
	if err := r.Register(newFake("x", "X")); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Get("x"); !ok {
		t.Fatal("zero Registry lost a registration")
	}
}

func TestRegisterRejectsInvalidSpecs(t *testing.T) {
	long := strings.Repeat("n", 65)
	cases := []struct {
		name     string
		tool     Tool
		fragment string
	}{
		{"nil tool", nil, "tool is nil"},
		{"empty name", &fakeTool{name: "", schema: `{"type":"object"}`}, "1 to 64 characters"},
		{"name too long", &fakeTool{name: long, schema: `{"type":"object"}`}, "1 to 64 characters"},
		{"name with a dot", &fakeTool{name: "fs.read", schema: `{"type":"object"}`}, `found '.'`},
		{"name with a space", &fakeTool{name: "read file", schema: `{"type":"object"}`}, `found ' '`},
		{"empty schema", &fakeTool{name: "t", schema: ``}, "schema is empty"},
		{"whitespace schema", &fakeTool{name: "t", schema: "  \n"}, "schema is empty"},
		{"schema not JSON", &fakeTool{name: "t", schema: `{type: object}`}, "not valid JSON"},
		{"schema is a string", &fakeTool{name: "t", schema: `"object"`}, "must be a JSON object"},
		{"misspelled type", &fakeTool{name: "t", schema: `{"type":"objet"}`}, "/type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := NewRegistry().Register(tc.tool)
			wantError(t, err, ErrInvalidSpec, tc.fragment)
			if tc.tool != nil && !strings.Contains(err.Error(), fmt.Sprintf("register tool %q", tc.tool.Spec().Name)) {
				t.Fatalf("error %q does not name the tool", err)
			}
		})
	}
}

// TestRegisterRejectsSchemaCorpus registers a tool with every schema under
// testdata/invalid_schemas; each must be refused, and none may be loaded from disk or network.
func TestRegisterRejectsSchemaCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid_schemas", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			err = NewRegistry().Register(&fakeTool{name: name, schema: string(data)})
			wantError(t, err, ErrInvalidSpec, fmt.Sprintf("register tool %q", name), "parameters schema")
		})
	}
}

func TestValidateMessages(t *testing.T) {
	h, err := NewHandle(ReadFile{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args string
		want string
	}{
		{"missing required", `{}`, `invalid arguments for tool "read_file": at (root): missing property 'path'`},
		{"wrong type", `{"path":"a","offset":"3"}`, `invalid arguments for tool "read_file": at /offset: got string, want integer`},
		{"below minimum", `{"path":"a","limit":0}`, `invalid arguments for tool "read_file": at /limit: minimum: got 0, want 1`},
		{"unknown field", `{"path":"a","mode":"fast"}`, `invalid arguments for tool "read_file": at (root): additional properties 'mode' not allowed`},
		{"several problems sorted", `{"offset":"x","limit":-1}`,
			`invalid arguments for tool "read_file": at (root): missing property 'path'; at /limit: minimum: got -1, want 1; at /offset: got string, want integer`},
		{"not an object", `[1,2]`, `invalid arguments for tool "read_file": at (root): got array, want object`},
		{"not JSON", `{"path":`, `invalid arguments for tool "read_file": at (root): not valid JSON: `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := h.Validate(json.RawMessage(tc.args))
			wantError(t, err, ErrInvalidArguments)
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("message\n got %q\nwant %q", err.Error(), tc.want)
			}
			var argErr *ArgumentError
			if !errors.As(err, &argErr) || argErr.Tool != NameReadFile {
				t.Fatalf("error is not an *ArgumentError for read_file: %#v", err)
			}
		})
	}
}

func TestValidatePointerEscapesAndTruncation(t *testing.T) {
	props := []string{`"a/b":{"type":"integer"}`, `"c~d":{"type":"integer"}`}
	args := []string{`"a/b":"x"`, `"c~d":"x"`}
	for i := range 10 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"integer"}`, i))
		args = append(args, fmt.Sprintf(`"p%d":"x"`, i))
	}
	tool := &fakeTool{name: "many", schema: `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`}
	h, err := NewHandle(tool)
	if err != nil {
		t.Fatal(err)
	}
	err = h.Validate(json.RawMessage(`{` + strings.Join(args, ",") + `}`))
	var argErr *ArgumentError
	if !errors.As(err, &argErr) {
		t.Fatalf("want *ArgumentError, got %v", err)
	}
	if len(argErr.Problems) != maxReportedProblems || argErr.Omitted != 12-maxReportedProblems {
		t.Fatalf("problems %d omitted %d; want %d and %d", len(argErr.Problems), argErr.Omitted, maxReportedProblems, 12-maxReportedProblems)
	}
	if argErr.Problems[0].Pointer != "/a~1b" || argErr.Problems[1].Pointer != "/c~0d" {
		t.Fatalf("pointers not RFC 6901 escaped: %+v", argErr.Problems[:2])
	}
	if !strings.HasSuffix(err.Error(), "; and 4 more") {
		t.Fatalf("message %q does not say how many problems were left out", err)
	}
}

func TestValidateEmptyArgumentsMeanEmptyObject(t *testing.T) {
	h, err := NewHandle(TodoList{})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"", "  ", "{}"} {
		if err := h.Validate(json.RawMessage(args)); err != nil {
			t.Fatalf("Validate(%q) = %v, want nil", args, err)
		}
	}
	res, err := h.Execute(nil, nil)
	if err != nil || res.Content != NoChecklistText {
		t.Fatalf("Execute with nil args = %+v, %v", res, err)
	}
}

// TestInvalidArgumentCorpus feeds every file under testdata/invalid_arguments/<tool>/ to that
// tool through a Handle: each must be refused with ErrInvalidArguments before the tool touches
// the workdir or the checklist, or asks a question.
func TestInvalidArgumentCorpus(t *testing.T) {
	byName := map[string]Tool{}
	for _, tool := range Builtins() {
		byName[tool.Spec().Name] = tool
	}
	dirs, err := os.ReadDir(filepath.Join("testdata", "invalid_arguments"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != len(byName) {
		t.Fatalf("corpus covers %d tools, want all %d built-ins", len(dirs), len(byName))
	}
	for _, dir := range dirs {
		tool, ok := byName[dir.Name()]
		if !ok {
			t.Fatalf("corpus folder %q names no built-in tool", dir.Name())
		}
		files, _ := filepath.Glob(filepath.Join("testdata", "invalid_arguments", dir.Name(), "*.json"))
		for _, file := range files {
			t.Run(dir.Name()+"/"+filepath.Base(file), func(t *testing.T) {
				args, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				ec, workdir := newWorkdirEC(t)
				ec.Tasks = NewTaskBroker()
				ec.Memory = &memory.Store{}
				_, err = run(t, tool, ec, string(args))
				wantError(t, err, ErrInvalidArguments, fmt.Sprintf("invalid arguments for tool %q", dir.Name()))
				if _, statErr := os.Stat(workdir); !os.IsNotExist(statErr) {
					t.Fatal("the tool ran (it created the workdir) despite invalid arguments")
				}
				if ec.Tasks.Agents() != 0 {
					t.Fatal("the tool ran (it touched the checklist) despite invalid arguments")
				}
				if ec.Memory.Len() != 0 {
					t.Fatal("the tool ran (it wrote the memory) despite invalid arguments")
				}
			})
		}
	}
}

func TestHandleInline(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		tool Tool
		want bool
	}{
		{"no Inline method", newFake("plain", "p"), false},
		{"Inline true", inlineFake{&fakeTool{name: "fast", schema: `{"type":"object"}`, inline: &yes}}, true},
		{"Inline false", inlineFake{&fakeTool{name: "slow", schema: `{"type":"object"}`, inline: &no}}, false},
		{"todo_add", TodoAdd{}, true},
		{"read_file", ReadFile{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHandle(tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			if h.Inline() != tc.want {
				t.Fatalf("Inline() = %v, want %v", h.Inline(), tc.want)
			}
		})
	}
}

func TestHandleExecuteValidatesBeforeRunning(t *testing.T) {
	tool := newFake("strict", "ran")
	h, err := NewHandle(tool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Execute(nil, json.RawMessage(`{"x":1}`)); !errors.Is(err, ErrInvalidArguments) {
		t.Fatalf("Execute with bad args = %v, want ErrInvalidArguments", err)
	}
	if tool.calls.Load() != 0 {
		t.Fatal("the tool ran although its arguments were invalid")
	}
	res, err := h.Execute(nil, json.RawMessage(`{}`))
	if err != nil || res.Content != "ran" || tool.calls.Load() != 1 {
		t.Fatalf("Execute with good args = %+v, %v (calls %d)", res, err, tool.calls.Load())
	}
	tool.fail = errors.New("boom")
	if _, err := h.Execute(nil, nil); err == nil || err.Error() != "boom" {
		t.Fatalf("Execute did not pass the tool's error through: %v", err)
	}
}

func TestErrorResult(t *testing.T) {
	res := ErrorResult(fmt.Errorf("wrapped: %w", ErrNotFound))
	if !res.IsError || res.Content != "wrapped: tool not found" {
		t.Fatalf("ErrorResult = %+v", res)
	}
	if res := ErrorResult(nil); !res.IsError || res.Content == "" {
		t.Fatalf("ErrorResult(nil) = %+v; want an error result with a reason", res)
	}
	if res := TextResult("ok"); res.IsError || res.Content != "ok" {
		t.Fatalf("TextResult = %+v", res)
	}
}

// TestRegistryConcurrentRegisterAndLookup runs writers and lock-free readers together; run with
// -race.
func TestRegistryConcurrentRegisterAndLookup(t *testing.T) {
	r := NewRegistry()
	if err := r.Register(newFake("stable", "S")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				name := fmt.Sprintf("w%d_%d", w, i)
				if err := r.Register(newFake(name, name)); err != nil {
					t.Error(err)
					return
				}
				if i%2 == 0 {
					r.Unregister(name)
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range 500 {
				if _, ok := r.Lookup("stable"); !ok {
					t.Error("stable tool vanished during concurrent writes")
					return
				}
				if !slices.IsSorted(r.Names()) {
					t.Error("Names not sorted during concurrent writes")
					return
				}
			}
		})
	}
	wg.Wait()
	if r.Len() != 1+4*25 {
		t.Fatalf("Len = %d, want %d", r.Len(), 1+4*25)
	}
}

// panicTool panics on every call.
type panicTool struct{}

func (panicTool) Spec() Spec {
	return Spec{Name: "panics", Description: "always panics", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (panicTool) Execute(*ExecContext, json.RawMessage) (Result, error) { panic("tool bug") }

// TestHandleExecuteDoesNotRecoverPanics: panic isolation belongs to the caller (it fails the one
// agent and records the panic), so a Handle must let the panic through untouched.
func TestHandleExecuteDoesNotRecoverPanics(t *testing.T) {
	h, err := NewHandle(panicTool{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != "tool bug" {
			t.Fatalf("recovered %v, want the tool's panic value", r)
		}
	}()
	_, _ = h.Execute(nil, nil)
	t.Fatal("Execute returned instead of panicking")
}

func TestValidateMemoizesOnlyPassingArguments(t *testing.T) {
	h, err := NewHandle(ReadFile{})
	if err != nil {
		t.Fatal(err)
	}
	good := json.RawMessage(`{"path":"a.txt"}`)
	bad := json.RawMessage(`{"path":7}`)
	for range 3 {
		if err := h.Validate(good); err != nil {
			t.Fatalf("Validate(good) = %v", err)
		}
		if err := h.Validate(bad); !errors.Is(err, ErrInvalidArguments) {
			t.Fatalf("Validate(bad) = %v, want ErrInvalidArguments every time", err)
		}
	}
	if len(h.passed) != 1 {
		t.Fatalf("memo holds %d documents, want only the passing one", len(h.passed))
	}
	big := json.RawMessage(`{"path":"` + strings.Repeat("d/", maxMemoArgs/2) + `a.txt"}`)
	if err := h.Validate(big); err != nil {
		t.Fatalf("Validate(big) = %v", err)
	}
	if _, kept := h.passed[string(big)]; kept || len(h.passed) != 1 {
		t.Fatalf("memo kept a %d-byte document; documents over %d bytes are validated every time", len(big), maxMemoArgs)
	}
	for i := range maxPassedMemo + 10 {
		_ = h.Validate(json.RawMessage(`{"path":"f` + strconv.Itoa(i) + `"}`))
	}
	if len(h.passed) != maxPassedMemo {
		t.Fatalf("memo grew to %d, bound is %d", len(h.passed), maxPassedMemo)
	}
}

func TestHandleRunSkipsValidation(t *testing.T) {
	tool := newFake("strict", "ran")
	h, err := NewHandle(tool)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Run(nil, nil)
	if err != nil || res.Content != "ran" || tool.calls.Load() != 1 {
		t.Fatalf("Run = %+v, %v (calls %d)", res, err, tool.calls.Load())
	}
}
