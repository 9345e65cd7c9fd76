package hostconfig

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the host config loader: it returns a config or an error,
// never panics, and never both.
func FuzzLoad(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "good", "full.toml")); err == nil {
		f.Add(string(data))
	}
	f.Add("")
	f.Add("[tool_permissions]\n\"shell:\" = \"deny\"\n")
	f.Add("[write_budget]\nper_call = -1\n")
	f.Add("[subagents]\nmax_depth = 0\ninbox = 100001\nmax_fanout_items = 9223372036854775807\n")
	f.Add("[tool_script_permissions]\nenv = \"inherit\"\nshell = \"ask\"\n[scripting]\ntools_dir = \"\"\nallow_env = [\"A\", \"A\", \"1\"]\n")
	f.Add("[scripting]\ncall_timeout = \"9223372036854775807ns\"\nhttp_timeout = \"1e9h\"\nmax_call_stack = -1\n")
	f.Add("[sandbox]\nmode = \"bwrap\"\nwritable = [\"rel\", \"/a\", \"/a/\"]\nallow_env_vars = []\n[sandbox.limits]\ntimeout = \"-1h\"\naddress_space = \"18446744073709551615TiB\"\noutput_bytes = -9223372036854775808\n")
	f.Add("[sandbox.limits]\naddress_space = 1.5\noutput_bytes = {a = 1}\nprocesses = 9223372036854775807\n")
	path := filepath.Join(f.TempDir(), "host.toml")
	f.Fuzz(func(t *testing.T, src string) {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, knownTools)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("Load returned config %v and error %v", cfg != nil, err)
		}
	})
}

// FuzzLoadServePolicy feeds arbitrary bytes to the serve policy loader: a policy or an error,
// never a panic, never both; a policy's folders are absolute and clean, its hosts lower-case.
func FuzzLoadServePolicy(f *testing.F) {
	f.Add("")
	f.Add("[files]\nread = [\"/\", \"/tmp/../etc\", \"relative\", \"\"]\nwritable = [\"/tmp\", \"/tmp\"]\n")
	f.Add("[env]\npass = [\"PATH\", \"A B\", \"\", \"OPENAI_API_KEY\"]\n[[keys]]\nenv = \"OPENAI_API_KEY\"\n")
	f.Add("[[keys]]\nenv = \"K\"\nhosts = [\"https://evil.example\", \"a:1\", \"[::1]\", \"..\", \"x\\u0000y\"]\n")
	f.Add("[http]\nhosts = [\"*\", \"evil.example.\"]\norigins = [\"null\", \"https://a.example/\", \"javascript:alert(1)\"]\n")
	path := filepath.Join(f.TempDir(), "policy.toml")
	f.Fuzz(func(t *testing.T, src string) {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := LoadServePolicy(path)
		if (p == nil) == (err == nil) {
			t.Fatalf("LoadServePolicy returned policy %v and error %v", p != nil, err)
		}
		if p == nil {
			return
		}
		for _, dir := range append(slices.Clone(p.Read), p.Writable...) {
			if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
				t.Errorf("folder %q", dir)
			}
		}
		for _, h := range p.Hosts {
			if h != strings.ToLower(h) || strings.ContainsAny(h, "/:@ ") && net.ParseIP(h) == nil {
				t.Errorf("host %q", h)
			}
		}
	})
}
