package serve

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren/hostconfig"
)

// attackScenario is a scenario that loads and runs: one agent of blueprint w.toml, a scripted
// model that answers "done". The cases below add to it the keys that name the server's files.
const attackScenario = `name = "attack"
[blueprints]
w = "w.toml"
[models.m]
kind = "scripted"
  [[models.m.turns]]
  text = "done"
[[groups]]
name = "g"
blueprint = "w"
model = "m"
count = 1
`

// attackBlueprint is w.toml.
const attackBlueprint = `name = "w"
entry = "work"
[[stages]]
name = "work"
available_tools = ["read_file"]
max_iterations = 2
`

// secretText is what the server's own files hold: no answer may carry it.
const secretText = "s3cr3t-of-the-server"

// outsideFiles writes, in a folder of the server's disk outside every bundle, the files a hostile
// scenario names: a blueprint, a corpus, an items file, a policy, a schema, a script tools folder
// and an MCP server program that leaves a mark when it runs. It returns the folder.
func outsideFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"secret.toml":    "name = \"" + secretText + "\"\n" + secretText,
		"docs/secret.md": secretText,
		"secret.jsonl":   secretText + "\n",
		"policy.js":      secretText,
		"schema.json":    secretText,
		"tools/leak.js":  secretText,
		"server.sh":      "#!/bin/sh\ntouch \"$0.ran\"\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fileAttack is a scenario naming a file of the server's: its scenario and blueprint (the base
// ones when empty), the key the refusal must name, and a mark file that must not appear (a
// program that must never run).
type fileAttack struct {
	name      string
	scenario  string
	blueprint string
	key       string
	mark      string
}

// fileAttacks are the scenarios that name a path outside their bundle, one per key that names a
// file, folder or program; out is the folder outsideFiles wrote.
func fileAttacks(out string) []fileAttack {
	q := func(rel string) string { return `"` + filepath.Join(out, filepath.FromSlash(rel)) + `"` }
	base := attackScenario
	group := func(extra string) string { return base + extra }
	return []fileAttack{
		{name: "blueprint by absolute path", scenario: strings.Replace(base, `"w.toml"`, q("secret.toml"), 1), key: "blueprints.w"},
		{name: "blueprint by a path climbing out", scenario: strings.Replace(base, `"w.toml"`, `"`+strings.Repeat("../", 40)+strings.TrimPrefix(filepath.Join(out, "secret.toml"), "/")+`"`, 1), key: "blueprints.w"},
		{name: "corpus", scenario: group("  [groups.inputs]\n  corpus = " + q("docs") + "\n"), key: "inputs.corpus"},
		{name: "items", scenario: group("  [groups.inputs]\n  items = " + q("secret.jsonl") + "\n"), key: "inputs.items"},
		{name: "js policy", scenario: strings.Replace(base, "kind = \"scripted\"\n  [[models.m.turns]]\n  text = \"done\"", "kind = \"js\"\nfile = "+q("policy.js"), 1), key: "models.m.file"},
		{name: "response schema", scenario: strings.Replace(base, "kind = \"scripted\"\n  [[models.m.turns]]\n  text = \"done\"",
			"kind = \"openai\"\nmodel = \"x\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmax_tokens = 10\nresponse_schema = "+q("schema.json"), 1), key: "models.m.response_schema"},
		{name: "script tools folder", scenario: base + "[host.scripting]\ntools_dir = " + q("tools") + "\n", key: "host.scripting.tools_dir"},
		{name: "MCP server program by path", scenario: base + "[[host.mcp_servers]]\nname = \"x\"\ncommand = " + q("server.sh") + "\n",
			key: "host.mcp_servers[0]", mark: filepath.Join(out, "server.sh.ran")},
		{name: "MCP server program from PATH", scenario: base + "[[host.mcp_servers]]\nname = \"x\"\ncommand = \"sh\"\nargs = [\"-c\", \"touch " + filepath.Join(out, "sh.ran") + "\"]\n",
			key: "host.mcp_servers[0]", mark: filepath.Join(out, "sh.ran")},
		{name: "a blueprint's MCP server", scenario: base + "[host.mcp]\nallow_blueprint_servers = true\n",
			blueprint: attackBlueprint + "[[mcp_servers]]\nname = \"x\"\ncommand = \"sh\"\nargs = [\"-c\", \"touch " + filepath.Join(out, "bp.ran") + "\"]\n",
			key:       "mcp_servers[0]", mark: filepath.Join(out, "bp.ran")},
		{name: "sandbox writable path", scenario: base + "[host.sandbox]\nwritable = [" + q("docs") + "]\n", key: "host.sandbox"},
	}
}

// TestSubmissionReadsNothingOutsideItsBundle: a bundle whose scenario names a file, folder or
// program of the server's disk outside the bundle is refused at submit (403), the error naming
// the key and saying why, carrying nothing of the file, running no program and leaving nothing in
// the state root.
func TestSubmissionReadsNothingOutsideItsBundle(t *testing.T) {
	out := outsideFiles(t)
	s, c, root := startBundleServer(t)
	for _, tc := range fileAttacks(out) {
		t.Run(tc.name, func(t *testing.T) {
			c := *c
			c.t = t
			bp := tc.blueprint
			if bp == "" {
				bp = attackBlueprint
			}
			code, raw := c.post("", "application/zip", strings.NewReader(string(zipOf(t,
				zent{name: DefaultBundleEntry, body: []byte(tc.scenario)}, zent{name: "w.toml", body: []byte(bp)}))))
			assertRefused(t, code, raw, tc.key)
			if tc.mark != "" {
				if _, err := os.Stat(tc.mark); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the program ran (%s exists: %v)", tc.mark, err)
				}
			}
			assertNothingLeft(t, root)
		})
	}
	if len(s.Runs()) != 0 {
		t.Errorf("%d runs listed after refusals", len(s.Runs()))
	}
}

// assertRefused fails unless the answer is 403 with a JSON error that names key, says what the
// server allows, and carries nothing of the server's files.
func assertRefused(t *testing.T, code int, raw []byte, key string) {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("%d, body %q: %v", code, raw, err)
	}
	t.Logf("%d %s", code, e.Error)
	if code != http.StatusForbidden || !strings.Contains(e.Error, ErrNotAllowed.Error()) || !strings.Contains(e.Error, key) {
		t.Errorf("got %d %q\nwant 403, %q naming %s", code, e.Error, ErrNotAllowed, key)
	}
	if strings.Contains(string(raw), secretText) {
		t.Errorf("the answer carries the server's file: %s", raw)
	}
}

// TestFileSubmissionStaysInAllowedFolders: a scenario submitted by its path on the server's disk
// must lie in a folder the server's policy allows (none by default), and so must every file it
// names; a link inside an allowed folder that leads outside is refused too (os.Root).
func TestFileSubmissionStaysInAllowedFolders(t *testing.T) {
	out := outsideFiles(t)
	allowed := t.TempDir()
	write := func(rel, body string) string {
		p := filepath.Join(allowed, rel)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("scenario.toml", attackScenario)
	write("w.toml", attackBlueprint)
	linked := write("linked.toml", strings.Replace(attackScenario, `"w.toml"`, `"link.toml"`, 1))
	if err := os.Symlink(filepath.Join(out, "secret.toml"), filepath.Join(allowed, "link.toml")); err != nil {
		t.Fatal(err)
	}
	outsider := filepath.Join(out, "scenario.toml")
	if err := os.WriteFile(outsider, []byte(attackScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "w.toml"), []byte(attackBlueprint), 0o644); err != nil {
		t.Fatal(err)
	}

	_, none := startServerWith(t, Config{StateRoot: t.TempDir()})
	var e apiError
	if code := none.do(http.MethodPost, APIPrefix+"/runs", Submission{File: good}, &e); code != http.StatusForbidden || !strings.Contains(e.Error, "file") || !strings.Contains(e.Error, "--allow-folder") {
		t.Errorf("a server allowing no folder: %d %q, want 403 naming the file and how to allow a folder", code, e.Error)
	}

	s, c := startServerWith(t, Config{StateRoot: t.TempDir(), Policy: &hostconfig.ServePolicy{Read: []string{allowed}}})
	for _, tc := range []struct{ name, file, key string }{
		{"a scenario outside the allowed folders", outsider, "file"},
		{"a blueprint through a link leading outside", linked, "blueprints.w"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e apiError
			code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: tc.file}, &e)
			raw, _ := json.Marshal(e)
			assertRefused(t, code, raw, tc.key)
		})
	}
	var info RunInfo
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: good}, &info); code != http.StatusCreated {
		t.Fatalf("a scenario inside the allowed folder: %d", code)
	}
	waitEnd(t, s, info.ID)
}

// TestSubmissionAgentsAreBounded: a submission may not start more agents than the policy's
// [limits] agents, whether its groups' counts or its launch's agents ask for them; at the limit it
// runs.
func TestSubmissionAgentsAreBounded(t *testing.T) {
	allowed := t.TempDir()
	file := filepath.Join(allowed, "scenario.toml")
	if err := os.WriteFile(file, []byte(attackScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "w.toml"), []byte(attackBlueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	s, c := startServerWith(t, Config{StateRoot: t.TempDir(), Policy: &hostconfig.ServePolicy{Read: []string{allowed}, MaxAgents: 3}})
	var e apiError
	code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: file, Launch: Launch{Agents: 4}}, &e)
	if code != http.StatusForbidden || !strings.Contains(e.Error, "4 agents, more than the 3 the server allows") || !strings.Contains(e.Error, "[limits] agents") {
		t.Errorf("4 agents under a limit of 3: %d %q, want 403 naming both and the policy key", code, e.Error)
	}
	var info RunInfo
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: file, Launch: Launch{Agents: 3}}, &info); code != http.StatusCreated {
		t.Fatalf("3 agents under a limit of 3: %d", code)
	}
	waitEnd(t, s, info.ID)
}
