package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestReadmeListsEveryCommand keeps the README's table of commands in step with the parser: every
// command `host` accepts has a row, and every row names a command it accepts. Hidden commands are
// the host's own (host state check, which resume runs in a child process) and have none.
func TestReadmeListsEveryCommand(t *testing.T) {
	parser, err := kong.New(&cli{}, kong.Name("host"), kong.Vars{"model_kinds": modelKinds(false)})
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, leaf := range parser.Model.Leaves(true) {
		commands = append(commands, leaf.Path())
	}
	slices.Sort(commands)

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	start := strings.Index(section, "\n## The CLI\n")
	if start < 0 {
		t.Fatal("README.md has no \"## The CLI\" section")
	}
	section = section[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	// A row's first cell starts with the command: `host trace diff WANT GOT`.
	row := regexp.MustCompile("(?m)^\\| `host ([a-z][a-z -]*?)(?: [A-Z\\[-]|`)")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		documented = append(documented, strings.TrimSpace(m[1]))
	}
	slices.Sort(documented)
	if !slices.Equal(documented, commands) {
		t.Errorf("README.md's CLI table lists %q; host has the commands %q", documented, commands)
	}
}
