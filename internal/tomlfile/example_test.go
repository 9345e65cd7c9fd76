package tomlfile_test

import (
	"fmt"

	"github.com/warrenhq/warren/internal/tomlfile"
)

func ExampleDecode() {
	type group struct {
		Name  string `toml:"name"`
		Count int    `toml:"count"`
	}
	type scenario struct {
		Groups []group `toml:"groups"`
	}
	src := []byte(`
[[groups]]
name = "workers"
cuont = 3

[[groups]]
name = "leads"
count = 0
`)
	var sc scenario
	doc, err := tomlfile.Decode("scenario.toml", src, &sc)
	fmt.Println(err)

	// Semantic checks are positioned with the same index.
	if sc.Groups[1].Count < 1 {
		fmt.Println(doc.Errorf("groups[1].count", "must be at least 1, got %d", sc.Groups[1].Count))
	}
	// Output:
	// scenario.toml:4:1: groups[0].cuont: unknown key; valid keys here: count, name
	// scenario.toml:8:1: groups[1].count: must be at least 1, got 0
}
