// Package archtest holds the tests of the module's import graph, and nothing else. Its tests run
// `go list -json ./...` from the module root and check every package's non-test imports of
// module packages against the `imports` block of docs/architecture.md, which lists, one line a
// package, what each package may import. A second test checks the rules that hold whatever the
// block says: a config package (hostconfig, blueprint, mcp/mcpconfig, ...) never depends on the
// MCP client, and only cmd/ binaries (and internal packages) link a test server such as
// internal/mcpdemo.
package archtest
