// Command mcpserver is Warren's own MCP server for tests and shipped scenarios (see package
// internal/mcpdemo for its tools and flags):
//
//	mcpserver [--transport stdio|http] [--listen ADDR] [--name NAME] [--log-level LEVEL]
package main

import (
	"os"

	"github.com/warrenhq/warren/internal/mcpdemo"
)

func main() {
	os.Exit(mcpdemo.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
