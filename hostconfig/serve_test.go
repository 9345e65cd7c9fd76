package hostconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadServePolicy: a serve policy file loads into its folders, variables, keys, hosts and
// origins; each bad entry is reported at its file:line:key with what would be valid, all at once.
func TestLoadServePolicy(t *testing.T) {
	dir := t.TempDir()
	corpora := filepath.Join(dir, "corpora")
	if err := os.Mkdir(corpora, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.toml", `[files]
read = ["`+corpora+`/"]
[env]
pass = ["PATH", "LANG"]
[[keys]]
env = "OPENAI_API_KEY"
hosts = ["API.openai.com"]
[[keys]]
env = "LOCAL_KEY"
[http]
hosts = ["warren.example.com", "[::1]"]
origins = ["https://warren.example.com"]
`)
	p, err := LoadServePolicy(good)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Read, []string{corpora}) || !slices.Equal(p.PassEnv(), []string{"PATH", "LANG"}) ||
		!slices.Equal(p.Hosts, []string{"warren.example.com", "::1"}) || !slices.Equal(p.Origins, []string{"https://warren.example.com"}) {
		t.Errorf("loaded %+v", p)
	}
	if k, ok := p.Key("OPENAI_API_KEY"); !ok || !k.Allows("api.openai.com") || k.Allows("evil.example") {
		t.Errorf("OPENAI_API_KEY: %+v %v", k, ok)
	}
	if k, ok := p.Key("LOCAL_KEY"); !ok || !k.Allows("anywhere.example") {
		t.Errorf("LOCAL_KEY, bound to no host: %+v %v", k, ok)
	}

	bad := write("bad.toml", `[files]
read = ["relative", "`+filepath.Join(dir, "missing")+`"]
[env]
pass = ["9LIVES"]
[[keys]]
env = "A KEY"
hosts = ["https://api.openai.com", "host:443"]
[http]
hosts = ["a/b"]
origins = ["https://x.example/path", "ftp://x.example"]
`)
	_, err = LoadServePolicy(bad)
	for _, want := range []string{
		"bad.toml:2:", "files.read[0]: not absolute", "files.read[1]: not a folder",
		"env.pass[0]: invalid environment variable name", "keys[0].env: invalid environment variable name",
		"keys[0].hosts[0]: invalid host name", "keys[0].hosts[1]: invalid host name", "http.hosts[0]: invalid host name",
		"http.origins[0]: invalid origin", "http.origins[1]: invalid origin",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the bad policy's error lacks %q:\n%v", want, err)
		}
	}
	if !errors.Is(err, ErrNotAbsolute) || !errors.Is(err, ErrBadHost) || !errors.Is(err, ErrBadOrigin) {
		t.Errorf("sentinels: %v", err)
	}

	passed := write("passed.toml", "[[keys]]\nenv = \"HOME\"\n")
	if _, err := LoadServePolicy(passed); !errors.Is(err, ErrKeyPassed) {
		t.Errorf("a key passed to tools by default: %v, want ErrKeyPassed", err)
	}
	if _, err := LoadServePolicy(write("unknown.toml", "[files]\nreed = []\n")); err == nil || !strings.Contains(err.Error(), "reed: unknown key") {
		t.Errorf("an unknown key: %v", err)
	}

	if p, err := LoadServePolicy(write("limits.toml", "[limits]\nagents = 250\n")); err != nil || p.AgentLimit() != 250 {
		t.Errorf("[limits] agents = 250: %v, limit %d", err, p.AgentLimit())
	}
	if p := (&ServePolicy{}); p.AgentLimit() != DefaultServeMaxAgents {
		t.Errorf("no [limits]: limit %d, want the default %d", p.AgentLimit(), DefaultServeMaxAgents)
	}
	for _, n := range []string{"0", "-3", "10000001"} {
		_, err := LoadServePolicy(write("limits-bad.toml", "[limits]\nagents = "+n+"\n"))
		if !errors.Is(err, ErrBadLimit) || !strings.Contains(err.Error(), "limits-bad.toml:2:") || !strings.Contains(err.Error(), "limits.agents") || !strings.Contains(err.Error(), "1 to 10000000") {
			t.Errorf("[limits] agents = %s: %v, want ErrBadLimit at limits-bad.toml:2 naming the range", n, err)
		}
	}

	out, err := LoadServePolicy(write("outbound.toml", "[outbound]\nprivate = [\"127.0.0.1\", \"Models.Internal\", \"::1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{"127.0.0.1:8080": true, "models.internal": true, "MODELS.internal:443": true,
		"[::1]:9": true, "127.0.0.2": false, "example.com": false, "": false} {
		if got := out.PrivateAllowed(host); got != want {
			t.Errorf("PrivateAllowed(%q) = %v, want %v", host, got, want)
		}
	}
	if (*ServePolicy)(nil).PrivateAllowed("127.0.0.1") {
		t.Error("no policy allows a private host")
	}
	_, err = LoadServePolicy(write("outbound-bad.toml", "[outbound]\nprivate = [\"http://x.example/\"]\n"))
	if !errors.Is(err, ErrBadHost) || !strings.Contains(err.Error(), "outbound-bad.toml:2:") || !strings.Contains(err.Error(), "outbound.private[0]") {
		t.Errorf("a bad [outbound] private host: %v, want ErrBadHost at outbound-bad.toml:2 naming the key", err)
	}
}

// TestCheckKey: a key goes where the policy binds it; a variable named but not given is refused;
// a kind's default variable not given is not (the model goes without a key).
func TestCheckKey(t *testing.T) {
	p := &ServePolicy{Keys: []ServeKey{{Env: "K", Hosts: []string{"api.example.com"}}}}
	for _, tc := range []struct {
		env   string
		named bool
		base  string
		says  string
	}{
		{"K", true, "https://api.example.com/v1", ""},
		{"K", false, "https://API.example.com:8443/v1", ""},
		{"K", true, "https://evil.example/v1", "only to api.example.com"},
		{"K", false, "http://127.0.0.1:9/v1", "only to api.example.com"},
		{"OTHER", true, "https://api.example.com/v1", "gives no such key (it gives: K (to api.example.com)"},
		{"OPENAI_API_KEY", false, "http://127.0.0.1:8089/v1", ""},
	} {
		err := p.CheckKey(tc.env, tc.named, tc.base)
		if tc.says == "" && err != nil || tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)) {
			t.Errorf("%s named=%v to %s: %v, want %q", tc.env, tc.named, tc.base, err, tc.says)
		}
	}
	var none *ServePolicy
	if err := none.CheckKey("OPENAI_API_KEY", true, "https://api.openai.com/v1"); err == nil || !strings.Contains(err.Error(), "it gives: none") {
		t.Errorf("no policy, a named key: %v", err)
	}
	if _, ok := none.LookupKey("PATH"); ok {
		t.Error("no policy gives a variable as a key")
	}
}

// TestParseServeKey reads --allow-key's NAME and NAME=HOST,HOST.
func TestParseServeKey(t *testing.T) {
	k, err := ParseServeKey("OPENAI_API_KEY=api.openai.com,Eu.api.openai.com")
	if err != nil || k.Env != "OPENAI_API_KEY" || !slices.Equal(k.Hosts, []string{"api.openai.com", "eu.api.openai.com"}) {
		t.Errorf("%+v %v", k, err)
	}
	if k, err := ParseServeKey("LOCAL"); err != nil || k.Hosts != nil {
		t.Errorf("%+v %v", k, err)
	}
	for _, bad := range []string{"", "=x", "K=", "K=https://x", "K=a,,b"} {
		if _, err := ParseServeKey(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
