package tomlfile

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// tableDoc holds two model tables whose keys depend on their kind, as a scenario's do.
const tableDoc = `name = "s"

[models.a]
kind = "scripted"
when = "fail"
  [[models.a.turns]]
  text = "one"
  [[models.a.turns]]
  text = "two"
  repat = 3
  [[models.a.turns]]
  text = "three"
  repeat = "lots"

[models.b]
kind = "js"
Filee = "p.js"
`

type tableFile struct {
	Name   string                    `toml:"name"`
	Models map[string]map[string]any `toml:"models"`
}

type tableTurn struct {
	Text   string `toml:"text"`
	Repeat int    `toml:"repeat"`
}

type tableScripted struct {
	When  string      `toml:"when"`
	Turns []tableTurn `toml:"turns"`
}

type tableJS struct {
	File string `toml:"file"`
}

// DecodeTable reports a table's problems as Decode would have, had the table's type been known:
// positioned in the whole document, under the table's path, with the caller's own keys (kind)
// listed as valid and never decoded.
func TestDecodeTable(t *testing.T) {
	var f tableFile
	doc, err := Decode("s.toml", []byte(tableDoc), &f)
	if err != nil {
		t.Fatal(err)
	}
	var a tableScripted
	errs := doc.DecodeTable("models.a", f.Models["a"], &a, "kind")
	want := []string{
		"s.toml:13:12: models.a.turns[2].repeat: expected integer, got string",
	}
	if got := lines(errs); !slices.Equal(got, want) {
		t.Errorf("a wrong kind of value:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !errors.Is(errs.Err(), ErrType) {
		t.Errorf("errors.Is(err, ErrType) = false for %v", errs)
	}

	f.Models["a"]["turns"].([]any)[2].(map[string]any)["repeat"] = int64(2)
	a = tableScripted{}
	errs = doc.DecodeTable("models.a", f.Models["a"], &a, "kind")
	want = []string{"s.toml:10:3: models.a.turns[1].repat: unknown key; valid keys here: repeat, text"}
	if got := lines(errs); !slices.Equal(got, want) {
		t.Errorf("an unknown key in an array of tables:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if a.When != "fail" || len(a.Turns) != 3 || a.Turns[2].Text != "three" || a.Turns[2].Repeat != 2 {
		t.Errorf("decoded %+v, want the rest decoded despite the unknown key", a)
	}

	var b tableJS
	errs = doc.DecodeTable("models.b", f.Models["b"], &b, "kind")
	want = []string{"s.toml:17:1: models.b.Filee: unknown key; valid keys here: file, kind"}
	if got := lines(errs); !slices.Equal(got, want) {
		t.Errorf("an unknown key beside the caller's own:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !errors.Is(errs.Err(), ErrUnknownKey) {
		t.Errorf("errors.Is(err, ErrUnknownKey) = false for %v", errs)
	}

	f.Models["b"]["File"] = f.Models["b"]["Filee"]
	delete(f.Models["b"], "Filee")
	errs = doc.DecodeTable("models.b", f.Models["b"], &b, "kind")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "models.b.File: unknown key (keys are case-sensitive); valid keys here: file, kind") {
		t.Errorf("a key matching only by case: %v", errs)
	}
}

func TestKeys(t *testing.T) {
	if got := Keys(&tableScripted{}); !slices.Equal(got, []string{"turns", "when"}) {
		t.Errorf("Keys = %q", got)
	}
	if got := Keys(3); got != nil {
		t.Errorf("Keys of an int = %q, want nil", got)
	}
}

// lines renders errs one per line.
func lines(errs Errors) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}
