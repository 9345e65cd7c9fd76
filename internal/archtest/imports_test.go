package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// archDoc is the document, relative to the module root, whose `imports` block is the allowed
// graph.
const archDoc = "docs/architecture.md"

// blockInfo is the info string of the fenced code block that holds the allowed graph.
const blockInfo = "imports"

// clients are the packages that talk to processes outside the host (the MCP client), which no
// config package may depend on.
var clients = []string{"mcp"}

// graph is the module's packages as `go list` sees them, each by its path relative to the module
// root ("." for the root package), with its module imports.
type graph struct {
	// imports holds each package's non-test imports of module packages, sorted.
	imports map[string][]string
	// deps holds each package's non-test dependencies among module packages, direct or not,
	// sorted.
	deps map[string][]string
}

// TestImportGraph fails when a package of the module imports a module package that the
// `imports` block of docs/architecture.md does not allow it, when a package is missing from the
// block, or when the block lists a package that does not exist.
func TestImportGraph(t *testing.T) {
	root, g := loadGraph(t)
	doc, err := os.ReadFile(filepath.Join(root, archDoc))
	if err != nil {
		t.Fatalf("the allowed import graph: %v", err)
	}
	allowed, err := parseAllowed(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", archDoc, err)
	}
	for _, problem := range checkGraph(g.imports, allowed) {
		t.Error(problem)
	}
}

// TestImportRules checks the rules of the import direction that hold whatever the block of
// docs/architecture.md says: no config package depends on a client, and no package outside
// internal/ and cmd/ depends on a test server.
func TestImportRules(t *testing.T) {
	_, g := loadGraph(t)
	// The rules must match something, or a rename would make them pass vacuously.
	for _, p := range []string{"hostconfig", "blueprint"} {
		if _, ok := g.imports[p]; !ok || !isConfig(p) {
			t.Errorf("the config rule expects package %s to exist and be a config package; update TestImportRules if it was renamed", p)
		}
	}
	if _, ok := g.imports["internal/mcpdemo"]; !ok || !isTestServer("internal/mcpdemo") {
		t.Error("the test-server rule expects package internal/mcpdemo to exist and be a test server; update TestImportRules if it was renamed")
	}
	for _, c := range clients {
		if _, ok := g.imports[c]; !ok {
			t.Errorf("the config rule expects the client package %s to exist; update clients if it was renamed", c)
		}
	}
	for _, problem := range checkRules(g) {
		t.Error(problem)
	}
}

// isConfig reports whether the package at rel is a config package: its name ends in "config"
// (hostconfig, mcp/mcpconfig) or "blueprint".
func isConfig(rel string) bool {
	name := path.Base(rel)
	return strings.HasSuffix(name, "config") || strings.HasSuffix(name, "blueprint")
}

// isTestServer reports whether the package at rel is a test or demo server, such as
// internal/mcpdemo: an internal package whose name ends in "demo".
func isTestServer(rel string) bool {
	return strings.HasPrefix(rel, "internal/") && strings.HasSuffix(path.Base(rel), "demo")
}

// checkRules returns a message for every dependency of g that breaks a rule of TestImportRules,
// each naming the package, what it depends on and through which imports.
func checkRules(g graph) []string {
	var problems []string
	for _, p := range sortedKeys(g.deps) {
		deps := g.deps[p]
		if isConfig(p) {
			for _, c := range clients {
				if slices.Contains(deps, c) {
					problems = append(problems, fmt.Sprintf("config package %s depends on the client package %s (%s); the client may import the config, never the other way round",
						p, c, chain(g.imports, p, c)))
				}
			}
		}
		if !strings.HasPrefix(p, "internal/") && !strings.HasPrefix(p, "cmd/") {
			for _, d := range deps {
				if isTestServer(d) {
					problems = append(problems, fmt.Sprintf("package %s depends on the test server %s (%s); only cmd/ binaries and tests may link it",
						p, d, chain(g.imports, p, d)))
				}
			}
		}
	}
	return problems
}

// chain renders a shortest import path from one package to another, "a → b → c", found
// breadth-first over imports; just "from → to" if there is none.
func chain(imports map[string][]string, from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var steps []string
			for q := to; q != ""; q = prev[q] {
				steps = append(steps, q)
			}
			slices.Reverse(steps)
			return strings.Join(steps, " → ")
		}
		for _, next := range imports[p] {
			if _, seen := prev[next]; !seen {
				prev[next] = p
				queue = append(queue, next)
			}
		}
	}
	return from + " → " + to
}

// checkGraph returns a message for every difference between the module's packages (each with
// its non-test module imports) and the allowed graph: an import the graph does not allow, a
// package the graph does not list, and a package the graph lists (as a line or as a dependency)
// that the module does not have. The messages are sorted by package.
func checkGraph(imports, allowed map[string][]string) []string {
	var problems []string
	for _, p := range sortedKeys(imports) {
		deps, ok := allowed[p]
		if !ok {
			line := "-"
			if len(imports[p]) > 0 {
				line = strings.Join(imports[p], " ")
			}
			problems = append(problems, fmt.Sprintf("package %s is missing from the %q block of %s; add the line %q (its imports today) if that is what it may import",
				p, blockInfo, archDoc, p+": "+line))
			continue
		}
		for _, d := range imports[p] {
			if !slices.Contains(deps, d) {
				problems = append(problems, fmt.Sprintf("package %s imports %s, which the %q block of %s does not allow; remove the import, or if the edge is intended, add %s to the line of %s in %s",
					p, d, blockInfo, archDoc, d, p, archDoc))
			}
		}
	}
	for _, p := range sortedKeys(allowed) {
		if _, ok := imports[p]; !ok {
			problems = append(problems, fmt.Sprintf("the %q block of %s lists package %s, which is not a package of the module; remove its line",
				blockInfo, archDoc, p))
			continue
		}
		for _, d := range allowed[p] {
			if _, ok := imports[d]; !ok {
				problems = append(problems, fmt.Sprintf("the %q block of %s allows %s to import %s, which is not a package of the module; remove it from the line",
					blockInfo, archDoc, p, d))
			}
		}
	}
	return problems
}

// parseAllowed reads the allowed graph from the one fenced code block of doc whose info string is
// "imports": one line a package, "pkg: dep1 dep2 ..." with paths relative to the module root
// ("." for the root package), or "pkg: -" for a package that imports no module package. Blank
// lines are ignored. Every malformed line is reported, with its line number in doc.
func parseAllowed(doc string) (map[string][]string, error) {
	var (
		allowed        map[string][]string
		errs           []error
		blocks         int
		inBlock, inAny bool
	)
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \t")
		fence := strings.HasPrefix(strings.TrimLeft(line, " "), "```")
		switch {
		case fence && inAny:
			inAny, inBlock = false, false
			continue
		case fence:
			inAny = true
			info := strings.Fields(strings.TrimPrefix(strings.TrimLeft(line, " "), "```"))
			if len(info) > 0 && info[0] == blockInfo {
				inBlock = true
				blocks++
				if allowed == nil {
					allowed = map[string][]string{}
				}
			}
			continue
		case !inBlock || strings.TrimSpace(line) == "":
			continue
		}
		pkg, rest, ok := strings.Cut(line, ":")
		pkg = strings.TrimSpace(pkg)
		deps := strings.Fields(rest)
		switch {
		case !ok || pkg == "" || strings.ContainsAny(pkg, " \t"):
			errs = append(errs, fmt.Errorf("line %d: %q is not \"pkg: dep1 dep2 ...\"", n, line))
			continue
		case len(deps) == 0:
			errs = append(errs, fmt.Errorf("line %d: package %s lists no imports; write \"%s: -\" for none", n, pkg, pkg))
			continue
		case slices.Contains(deps, "-") && len(deps) > 1:
			errs = append(errs, fmt.Errorf("line %d: package %s: \"-\" (no imports) stands alone", n, pkg))
			continue
		}
		if _, dup := allowed[pkg]; dup {
			errs = append(errs, fmt.Errorf("line %d: package %s is listed twice", n, pkg))
			continue
		}
		if deps[0] == "-" {
			deps = nil
		}
		for i, d := range deps {
			if slices.Contains(deps[:i], d) {
				errs = append(errs, fmt.Errorf("line %d: package %s lists %s twice", n, pkg, d))
			}
		}
		allowed[pkg] = deps
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	switch {
	case inAny:
		errs = append(errs, errors.New("a fenced code block is not closed"))
	case blocks == 0:
		errs = append(errs, fmt.Errorf("no fenced code block with info string %q", blockInfo))
	case blocks > 1:
		errs = append(errs, fmt.Errorf("%d fenced code blocks with info string %q; keep the allowed graph in one", blocks, blockInfo))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return allowed, nil
}

// loaded is the module's graph, listed once for every test of the package.
var loaded struct {
	once  sync.Once
	root  string
	graph graph
	err   error
}

// loadGraph returns the module root and its import graph, skipping t when the go command cannot
// be found.
func loadGraph(t *testing.T) (string, graph) {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH, and the import graph comes from go list: %v", err)
	}
	loaded.once.Do(func() {
		loaded.root, loaded.graph, loaded.err = listModule(goCmd)
	})
	if loaded.err != nil {
		t.Fatal(loaded.err)
	}
	return loaded.root, loaded.graph
}

// listedPackage is what the tests read of one package of `go list -json`: Imports and Deps are
// its non-test imports and dependencies.
type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

// listModule finds the module root from the working directory and lists the module's packages
// with goCmd.
func listModule(goCmd string) (string, graph, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", graph{}, fmt.Errorf("find the module root: %w", err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", graph{}, err
	}
	modPath, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", graph{}, err
	}
	cmd := exec.Command(goCmd, "list", "-json=ImportPath,Imports,Deps,Error", "./...")
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", graph{}, fmt.Errorf("go list -json ./... in %s: %w\n%s", root, err, stderr.String())
	}
	g, err := decodeGraph(&stdout, modPath)
	if err != nil {
		return "", graph{}, fmt.Errorf("go list -json ./... in %s: %w", root, err)
	}
	if err := recordInputs(root); err != nil {
		return "", graph{}, err
	}
	return root, g, nil
}

// recordInputs walks the folders go list reads, so that `go test` knows the test's result
// depends on them: go test caches a passing result keyed by the files the test process itself
// opened (a folder counts with the name, size and time of every entry), and the go list child's
// reads are not among them. Without the walk, a new forbidden import would pass from the cache.
func recordInputs(root string) error {
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == root {
			return nil
		}
		// The folders go list skips, as `./...` does.
		if name := d.Name(); name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk the module for the test cache: %w", err)
	}
	return nil
}

// decodeGraph reads the stream of `go list -json` objects from r and keeps, for every package of
// the module modPath, its imports and dependencies within the module.
func decodeGraph(r io.Reader, modPath string) (graph, error) {
	g := graph{imports: map[string][]string{}, deps: map[string][]string{}}
	dec := json.NewDecoder(r)
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return graph{}, fmt.Errorf("decode: %w", err)
		}
		if p.Error != nil {
			return graph{}, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		rel, ok := relative(p.ImportPath, modPath)
		if !ok {
			continue
		}
		g.imports[rel] = moduleOnly(p.Imports, modPath)
		g.deps[rel] = moduleOnly(p.Deps, modPath)
	}
	if len(g.imports) == 0 {
		return graph{}, fmt.Errorf("no package of module %s", modPath)
	}
	return g, nil
}

// moduleOnly returns the paths of paths that belong to the module modPath, relative to its root
// and sorted.
func moduleOnly(paths []string, modPath string) []string {
	out := []string{}
	for _, p := range paths {
		if rel, ok := relative(p, modPath); ok {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// relative returns importPath relative to the root of the module modPath ("." for the root
// package), and whether it belongs to the module at all.
func relative(importPath, modPath string) (string, bool) {
	if importPath == modPath {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, modPath+"/")
	return rel, ok
}

// moduleRoot walks up from dir to the first folder holding a go.mod.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod in %s or any folder above it", dir)
		}
		d = parent
	}
}

// modulePath reads the module path from the go.mod file at file.
func modulePath(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("the module path: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		rest, _, _ = strings.Cut(rest, "//")
		mod := strings.TrimSpace(rest)
		if unq, err := strconv.Unquote(mod); err == nil {
			mod = unq
		}
		if mod != "" {
			return mod, nil
		}
	}
	return "", fmt.Errorf("the module path: no module line in %s", file)
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
