package models

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestKindRegistry: the scripted kind registers itself; Kinds is sorted; a kind registered later
// is found by its id, and its name is the id without the namespace.
func TestKindRegistry(t *testing.T) {
	k, ok := LookupKind("models.scripted")
	if !ok || k.Name() != "scripted" || k.Summary == "" {
		t.Fatalf("LookupKind(models.scripted) = %+v, %v; want the scripted kind", k, ok)
	}
	if _, ok := k.New().(*ScriptedConfig); !ok {
		t.Errorf("the scripted kind's New returns %T, want *ScriptedConfig", k.New())
	}
	if _, ok := LookupKind("scripted"); ok {
		t.Errorf("a kind is found by its bare name; ids carry the namespace")
	}
	RegisterKind(Kind{ID: "models.zz_registry_test", Summary: "a test kind", New: func() KindConfig { return new(ScriptedConfig) }})
	ids := Kinds()
	if !slices.IsSorted(ids) || !slices.Contains(ids, "models.scripted") || !slices.Contains(ids, "models.zz_registry_test") {
		t.Errorf("Kinds() = %q, want sorted ids including models.scripted and models.zz_registry_test", ids)
	}
	for _, id := range ids {
		if !strings.HasPrefix(id, KindNamespace) {
			t.Errorf("kind id %q is outside %q", id, KindNamespace)
		}
	}
}

// notAStruct is a KindConfig the registry must refuse: the loader decodes tables into structs.
type notAStruct int

func (notAStruct) Compile(*KindEnv) (Model, error) { return nil, nil }

// RegisterKind refuses, by panicking at init, every kind the loader could not serve.
func TestRegisterKindRefuses(t *testing.T) {
	newCfg := func() KindConfig { return new(ScriptedConfig) }
	tests := []struct {
		name string
		kind Kind
		want string
	}{
		{"a bare name", Kind{ID: "scripted2", Summary: "s", New: newCfg}, `kind id "scripted2" is not "models." followed by a lower-case name`},
		{"an empty name", Kind{ID: "models.", Summary: "s", New: newCfg}, `kind id "models." is not`},
		{"an upper-case name", Kind{ID: "models.Echo", Summary: "s", New: newCfg}, `kind id "models.Echo" is not`},
		{"a dotted name", Kind{ID: "models.a.b", Summary: "s", New: newCfg}, `kind id "models.a.b" is not`},
		{"no summary", Kind{ID: "models.echo", New: newCfg}, `kind "models.echo" has no summary`},
		{"no New", Kind{ID: "models.echo", Summary: "s"}, `kind "models.echo" has no New`},
		{"a table that is no struct", Kind{ID: "models.echo", Summary: "s", New: func() KindConfig { return notAStruct(0) }},
			`kind "models.echo": New returns models.notAStruct, want a pointer to a struct`},
		{"a taken id", Kind{ID: "models.scripted", Summary: "s", New: newCfg}, `kind "models.scripted" is registered twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v, want it to contain %q", r, tc.want)
				}
			}()
			RegisterKind(tc.kind)
		})
	}
	if _, ok := LookupKind("models.echo"); ok {
		t.Errorf("a refused kind was registered")
	}
}

// The scripted kind's Compile reports every problem at its key, and builds the model under the
// id the loader gives it.
func TestScriptedConfigCompile(t *testing.T) {
	bad := &ScriptedConfig{WhenExhausted: "loop", Turns: []ScriptedTurn{
		{Text: "a", Calls: []ScriptedCall{{Tool: "read_file"}, {Args: map[string]any{"path": "x"}}}},
		{Text: "b", Repeat: -1},
	}}
	_, err := bad.Compile(&KindEnv{Key: "w", Path: "models.w", ID: "scripted:w"})
	var problems KeyErrors
	if !errors.As(err, &problems) {
		t.Fatalf("err = %v (%T), want KeyErrors", err, err)
	}
	var keys []string
	for _, p := range problems {
		keys = append(keys, p.Key)
	}
	if want := []string{"when_exhausted", "turns[0].calls[1]", "turns[1].repeat"}; !slices.Equal(keys, want) {
		t.Errorf("problems at %q, want %q:\n%v", keys, want, err)
	}
	if !errors.Is(err, ErrInvalidScript) {
		t.Errorf("errors.Is(err, ErrInvalidScript) = false: %v", err)
	}

	good := &ScriptedConfig{WhenExhausted: "finish", Turns: []ScriptedTurn{{Text: "hello {{.Name}}"}}}
	m, err := good.Compile(&KindEnv{Key: "w", Path: "models.w", ID: "scripted:w"})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID() != "scripted:w" {
		t.Errorf("ID %q, want scripted:w", m.ID())
	}
	var st State
	for i, want := range []string{"hello a-1", ""} {
		r, err := m.Turn(context.Background(), &st, &View{Agent: AgentInfo{Name: "a-1"}, Turn: i})
		if err != nil || r.Text != want {
			t.Errorf("turn %d: %q, %v; want %q (then finish)", i, r.Text, err, want)
		}
	}

	_, err = (&ScriptedConfig{Turns: []ScriptedTurn{{Text: "{{.Nope}}"}}}).Compile(&KindEnv{ID: "scripted:w"})
	var ke *KeyError
	if !errors.Is(err, ErrInvalidScript) || errors.As(err, &ke) {
		t.Errorf("a template problem: %v, want an error about the table wrapping ErrInvalidScript", err)
	}
}

func TestKeyErrorText(t *testing.T) {
	errs := KeyErrors{{Key: "file", Err: errors.New("missing")}, {Err: errors.New("whole table")}}
	if got := errs.Error(); got != "file: missing\nwhole table" {
		t.Errorf("Error() = %q", got)
	}
}
