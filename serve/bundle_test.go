package serve

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/recording"
)

// testLimits are small enough that a test builds an archive over each of them in a few kilobytes.
var testLimits = BundleLimits{Upload: 64 << 10, Unpacked: 256 << 10, File: 128 << 10, Entries: 16}

// zent is one entry of a test archive.
type zent struct {
	name string
	body []byte
	// mode is the entry's mode as the archive states it (0: a regular file, 0644).
	mode fs.FileMode
	// claims, when set, is the uncompressed size the header states, whatever body is: the entry is
	// written raw, its body deflated.
	claims uint64
	// encrypted sets the header's encryption flag.
	encrypted bool
}

// zipOf builds a zip archive of the entries, in order, with archive/zip.
func zipOf(t *testing.T, ents ...zent) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range ents {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.encrypted {
			h.Flags |= 0x1
		}
		switch {
		case e.mode != 0:
			h.SetMode(e.mode)
		case strings.HasSuffix(e.name, "/"):
			h.SetMode(fs.ModeDir | 0o755)
		default:
			h.SetMode(0o644)
		}
		if e.claims != 0 {
			var comp bytes.Buffer
			fw, _ := flate.NewWriter(&comp, flate.BestCompression)
			fw.Write(e.body)
			fw.Close()
			h.CRC32, h.CompressedSize64, h.UncompressedSize64 = crc32.ChecksumIEEE(e.body[:e.claims]), uint64(comp.Len()), e.claims
			raw, err := w.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			raw.Write(comp.Bytes())
			continue
		}
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// scriptsBundle is scenarios/examples/scripts.toml with the blueprint and script tools it uses,
// the scenario at name; the script tools' modes say executable and setuid, which unpacking drops.
func scriptsBundle(t *testing.T, name string) []byte {
	t.Helper()
	read := func(rel string) []byte {
		raw, err := os.ReadFile(filepath.Join("..", "scenarios", "examples", filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	ents := []zent{{name: name, body: read("scripts.toml")}, {name: "scripted/"}, {name: "scripted/analyst.toml", body: read("scripted/analyst.toml")}}
	for _, tool := range []string{"fetch_status", "note_todo", "roll_dice", "word_count"} {
		ents = append(ents, zent{name: "scripted/tools/" + tool + ".js", body: read("scripted/tools/" + tool + ".js"), mode: fs.ModeSetuid | 0o755})
	}
	return zipOf(t, ents...)
}

// startBundleServer is a server with testLimits over loopback, and its state root.
func startBundleServer(t *testing.T) (*Server, *client, string) {
	t.Helper()
	root := t.TempDir()
	s, c := startServerWith(t, Config{StateRoot: root, Bundle: testLimits, Policy: examplesPolicy(t)})
	return s, c, root
}

// post sends body as POST /api/v1/runs?query with contentType, returning the status and the
// answer's raw JSON.
func (c *client) post(query, contentType string, body io.Reader) (int, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url+APIPrefix+"/runs?"+query, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// form builds a multipart upload of the parts, in order (name, content type, body), and
// returns its body and content type.
func form(t *testing.T, parts ...[3]string) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p[0], p[0]))
		h.Set("Content-Type", p[1])
		pw, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write([]byte(p[2]))
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

// waitEnd waits for the run to end and returns its summary.
func waitEnd(t testing.TB, s *Server, id string) *warren.Summary {
	t.Helper()
	run, err := s.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("run %s did not end", id)
	}
	sum := run.Summary()
	if sum == nil {
		t.Fatalf("run %s: no summary (%v)", id, run.Info().Error)
	}
	if sum.Status != warren.RunFinished || len(sum.Failures) != 0 {
		t.Fatalf("run %s ended %s (%v), failures %q", id, sum.Status, run.Info().Error, sum.Failures)
	}
	return sum
}

// sameTrace fails unless the traces are the same run: every event byte for byte, and the header
// but for the recording it names (each served run names its own).
func sameTrace(t *testing.T, a, b []byte) {
	t.Helper()
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	if len(la) != len(lb) || len(la) < 3 {
		t.Fatalf("traces of %d and %d lines", len(la), len(lb))
	}
	var ha, hb map[string]any
	if err := json.Unmarshal(la[0], &ha); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lb[0], &hb); err != nil {
		t.Fatal(err)
	}
	delete(ha, "recording")
	delete(hb, "recording")
	if !reflect.DeepEqual(ha, hb) {
		t.Fatalf("trace headers differ:\n%s\n%s", la[0], lb[0])
	}
	for i := 1; i < len(la); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			t.Fatalf("trace line %d differs:\n%s\n%s", i+1, la[i], lb[i])
		}
	}
}

// TestBundleRunsAsItsFile: scripts.toml uploaded as a bundle (its blueprint and script tools
// beside it), once as a zip body with the launch in the query and once as a multipart form with
// a launch part naming another entry, runs to the end with the same trace, event for event, as
// the same scenario submitted by its path. The bundle is unpacked under runs/<id>/bundle with
// folders 0700 and files 0600 (the archive's executable and setuid bits dropped), the run
// directory is runs/<id>/run, and runs/<id> copied elsewhere replays from its recording alone.
func TestBundleRunsAsItsFile(t *testing.T) {
	s, c, root := startBundleServer(t)
	var byFile RunInfo
	seed := uint64(5)
	file := filepath.Join("..", "scenarios", "examples", "scripts.toml")
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: file, Launch: Launch{Seed: &seed}}, &byFile); code != http.StatusCreated {
		t.Fatalf("submit the file: %d", code)
	}
	code, raw := c.post("seed=5", "application/zip", bytes.NewReader(scriptsBundle(t, DefaultBundleEntry)))
	var zipped RunInfo
	if code != http.StatusCreated || json.Unmarshal(raw, &zipped) != nil {
		t.Fatalf("submit the zip: %d %s", code, raw)
	}
	body, ctype := form(t, [3]string{"launch", "application/json", `{"seed": 5, "entry": "scripts.toml"}`},
		[3]string{"bundle", "application/zip", string(scriptsBundle(t, "scripts.toml"))})
	code, raw = c.post("", ctype, body)
	var formed RunInfo
	if code != http.StatusCreated || json.Unmarshal(raw, &formed) != nil {
		t.Fatalf("submit the form: %d %s", code, raw)
	}
	want := waitEnd(t, s, byFile.ID)
	trace, err := os.ReadFile(filepath.Join(byFile.Dir, warren.RunTraceFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range []RunInfo{zipped, formed} {
		home := filepath.Join(root, "runs", info.ID)
		entry := DefaultBundleEntry
		if info.ID == formed.ID {
			entry = "scripts.toml"
		}
		if info.Dir != filepath.Join(home, BundleRunDir) || info.File != filepath.Join(home, BundleDir, entry) || info.Scenario != "scripts" || *info.Launch.Seed != 5 {
			t.Errorf("run %+v", info)
		}
		got := waitEnd(t, s, info.ID)
		if got.Ticks != want.Ticks || got.ModelTurns != want.ModelTurns || got.ToolCalls != want.ToolCalls {
			t.Errorf("%s: summary %+v, want %+v", info.ID, got, want)
		}
		bundled, err := os.ReadFile(filepath.Join(info.Dir, warren.RunTraceFile))
		if err != nil {
			t.Fatal(err)
		}
		sameTrace(t, bundled, trace)
		err = filepath.WalkDir(filepath.Join(home, BundleDir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = fs.ModeDir | 0o700
			}
			if fi.Mode() != want {
				t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The run's folder holds everything: moved elsewhere, its recording replays its trace.
	moved := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.CopyFS(moved, os.DirFS(filepath.Join(root, "runs", zipped.ID))); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "runs", zipped.ID)); err != nil {
		t.Fatal(err)
	}
	tape, err := recording.ReadFile(filepath.Join(moved, BundleRunDir, RecordingFile))
	if err != nil {
		t.Fatal(err)
	}
	sc, opt, err := warren.LoadReplay(tape, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sc.Path, moved) {
		t.Errorf("the replay loads %s, not the moved bundle", sc.Path)
	}
	var replayed bytes.Buffer
	opt.Trace = &replayed
	if _, err := warren.Run(t.Context(), sc, opt); err != nil {
		t.Fatal(err)
	}
	ran, err := os.ReadFile(filepath.Join(moved, BundleRunDir, warren.RunTraceFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(replayed.Bytes(), ran) {
		t.Fatal("the replay of the moved bundle's recording differs from its trace")
	}
}

// TestBundleRefused: each archive that breaks a rule is refused with its status and a JSON
// error naming the entry and the limit, and leaves nothing under runs/ or uploads/.
func TestBundleRefused(t *testing.T) {
	s, c, root := startBundleServer(t)
	scenario := zent{name: DefaultBundleEntry, body: []byte("name = \"x\"\n")}
	many := []zent{scenario}
	for i := range testLimits.Entries {
		many = append(many, zent{name: fmt.Sprintf("f%d.txt", i), body: []byte("x")})
	}
	zeros := make([]byte, 2<<20)
	noise := make([]byte, 2*testLimits.Upload)
	rand.Read(noise)
	cases := []struct {
		name  string
		query string
		body  func() (io.Reader, string)
		code  int
		kind  error
		entry string
		limit string
		says  string
	}{
		{name: "zip slip", body: zips(t, scenario, zent{name: "../x", body: []byte("x")}), code: 422, kind: ErrBundleUnsafe, entry: "../x", says: `".." component`},
		{name: "zip slip inside a folder", body: zips(t, scenario, zent{name: "a/../../x", body: []byte("x")}), code: 422, kind: ErrBundleUnsafe, entry: "a/../../x", says: `".." component`},
		{name: "absolute path", body: zips(t, scenario, zent{name: "/etc/x", body: []byte("x")}), code: 422, kind: ErrBundleUnsafe, entry: "/etc/x", says: "absolute"},
		{name: "backslash", body: zips(t, scenario, zent{name: `..\x`, body: []byte("x")}), code: 422, kind: ErrBundleUnsafe, entry: `..\x`, says: `"\"`},
		{name: "symbolic link", body: zips(t, scenario, zent{name: "link", body: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777}), code: 422, kind: ErrBundleUnsafe, entry: "link", says: "symbolic link"},
		{name: "named pipe", body: zips(t, scenario, zent{name: "fifo", mode: fs.ModeNamedPipe | 0o644}), code: 422, kind: ErrBundleUnsafe, entry: "fifo", says: "named pipe"},
		{name: "device", body: zips(t, scenario, zent{name: "sda", mode: fs.ModeDevice | 0o644}), code: 422, kind: ErrBundleUnsafe, entry: "sda", says: "device"},
		{name: "duplicate name", body: zips(t, scenario, zent{name: "a.txt", body: []byte("1")}, zent{name: "a.txt", body: []byte("2")}), code: 422, kind: ErrBundleUnsafe, entry: "a.txt", says: "twice"},
		{name: "file and folder of one name", body: zips(t, scenario, zent{name: "a", body: []byte("1")}, zent{name: "a/b", body: []byte("2")}), code: 422, kind: ErrBundleUnsafe, entry: "a/b", says: "as a folder"},
		{name: "name not UTF-8", body: zips(t, scenario, zent{name: "caf\xe9.txt", body: []byte("x")}), code: 422, kind: ErrBundleUnsafe, entry: "caf\xe9.txt", says: "UTF-8"},
		{name: "name with NUL", body: zips(t, scenario, zent{name: "a\x00.toml", body: []byte("x")}), code: 422, kind: ErrBundleUnsafe, entry: "a\x00.toml", says: "NUL"},
		{name: "encrypted entry", body: zips(t, scenario, zent{name: "secret.txt", body: []byte("x"), encrypted: true}), code: 422, kind: ErrBundleUnsafe, entry: "secret.txt", says: "encrypted"},
		{name: "too many entries", body: zips(t, many...), code: 413, kind: ErrBundleTooLarge, limit: "entries 16", says: "17 entries"},
		{name: "one file over its limit", body: zips(t, scenario, zent{name: "big.bin", body: zeros}), code: 413, kind: ErrBundleTooLarge, entry: "big.bin", limit: "file 131072 bytes", says: "2097152 bytes"},
		{name: "zip bomb over the unpacked limit", body: zips(t, scenario, zent{name: "a.bin", body: zeros[:100<<10]}, zent{name: "b.bin", body: zeros[:100<<10]}, zent{name: "c.bin", body: zeros[:100<<10]}),
			code: 413, kind: ErrBundleTooLarge, entry: "c.bin", limit: "unpacked 262144 bytes"},
		{name: "zip bomb whose header lies", body: zips(t, scenario, zent{name: "liar.bin", body: zeros, claims: 1000}), code: 400, kind: ErrBundleMalformed, entry: "liar.bin", says: "does not match its header"},
		{name: "upload over its limit", body: raw(noise), code: 413, kind: ErrBundleTooLarge, limit: "upload 65536 bytes"},
		{name: "upload over its limit, chunked", body: chunked(raw(noise)), code: 413, kind: ErrBundleTooLarge, limit: "upload 65536 bytes"},
		{name: "form over the upload limit, chunked", body: chunked(forms(t, [3]string{"bundle", "application/zip", string(noise)})), code: 413, kind: ErrBundleTooLarge, limit: "upload 65536 bytes"},
		{name: "no scenario.toml", body: zips(t, zent{name: "other.toml", body: []byte("name = \"x\"\n")}), code: 422, kind: ErrBundleIncomplete, entry: "scenario.toml", says: "other.toml"},
		{name: "entry that is a folder", query: "entry=sub", body: zips(t, scenario, zent{name: "sub/"}), code: 422, kind: ErrBundleIncomplete, entry: "sub"},
		{name: "entry outside the bundle", query: "entry=../x.toml", body: zips(t, scenario), code: 422, kind: ErrBundleIncomplete, entry: "../x.toml", says: `".." component`},
		{name: "scenario that does not load", body: zips(t, zent{name: DefaultBundleEntry, body: []byte("name = \"bad\"\nseeed = 3\n")}), code: 422, kind: ErrSubmit, says: "\nscenario.toml:2:1: seeed: unknown key"},
		{name: "not a zip", body: raw([]byte("name = \"x\"\n")), code: 400, kind: ErrBundleMalformed, says: "not a zip"},
		{name: "unknown query parameter", query: "speed=3", body: zips(t, scenario), code: 400, kind: ErrBundleMalformed, says: "speed"},
		{name: "seed that is no number", query: "seed=x", body: zips(t, scenario), code: 400, kind: ErrBundleMalformed, says: "seed"},
		{name: "paused that is no boolean", query: "paused=later", body: zips(t, scenario), code: 400, kind: ErrBundleMalformed, says: "want true or false"},
		{name: "bad parameter", query: "param=nope", body: zips(t, scenario), code: 422, kind: ErrSubmit, says: "nope"},
		{name: "form with another part", body: forms(t, [3]string{"bundle", "application/zip", "x"}, [3]string{"extra", "text/plain", "x"}), code: 400, kind: ErrBundleMalformed, says: `"extra"`},
		{name: "form without a bundle", body: forms(t, [3]string{"launch", "application/json", `{}`}), code: 400, kind: ErrBundleMalformed, says: "no bundle part"},
		{name: "form with an unknown launch field", body: forms(t, [3]string{"launch", "application/json", `{"speed": 3}`}, [3]string{"bundle", "application/zip", string(zipOf(t, scenario))}),
			code: 400, kind: ErrBundleMalformed, says: "speed"},
		{name: "form with the launch in the query", query: "seed=3", body: forms(t, [3]string{"bundle", "application/zip", string(zipOf(t, scenario))}), code: 400, kind: ErrBundleMalformed, says: "launch part"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := *c
			c.t = t
			body, ctype := tc.body()
			code, raw := c.post(tc.query, ctype, body)
			var e bundleErrorBody
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("%d, body %q: %v", code, raw, err)
			}
			if code != tc.code || e.Entry != jsonEntry(tc.entry) || e.Limit != tc.limit || !strings.Contains(e.Error, tc.says) {
				t.Errorf("got %d %+v\nwant %d entry %q limit %q, saying %q", code, e, tc.code, tc.entry, tc.limit, tc.says)
			}
			if tc.entry != "" && !strings.Contains(e.Error, fmt.Sprintf("%q", tc.entry)) {
				t.Errorf("the error does not name the entry %q: %s", tc.entry, e.Error)
			}
			if tc.limit != "" && !strings.Contains(e.Error, tc.limit) {
				t.Errorf("the error does not name the limit %q: %s", tc.limit, e.Error)
			}
			if tc.kind == ErrSubmit && !strings.Contains(e.Error, ErrSubmit.Error()) {
				t.Errorf("not a submission error: %s", e.Error)
			}
			if tc.kind != ErrSubmit && !strings.Contains(e.Error, tc.kind.Error()) {
				t.Errorf("not %v: %s", tc.kind, e.Error)
			}
			assertNothingLeft(t, root)
		})
	}
	if len(s.Runs()) != 0 {
		t.Errorf("%d runs listed after refusals", len(s.Runs()))
	}
}

// zips is a case's body: the archive of the entries, as the request body.
func zips(t *testing.T, ents ...zent) func() (io.Reader, string) { return raw(zipOf(t, ents...)) }

// raw is a case's body: the bytes, sent as application/zip.
func raw(b []byte) func() (io.Reader, string) {
	return func() (io.Reader, string) { return bytes.NewReader(b), "application/zip" }
}

// forms is a case's body: a multipart form of the parts.
func forms(t *testing.T, parts ...[3]string) func() (io.Reader, string) {
	return func() (io.Reader, string) { return form(t, parts...) }
}

// chunked is body with no length known ahead, so the client sends it chunked and the server
// finds it too large only by reading it.
func chunked(body func() (io.Reader, string)) func() (io.Reader, string) {
	return func() (io.Reader, string) {
		r, ctype := body()
		return struct{ io.Reader }{r}, ctype
	}
}

// assertNothingLeft fails when runs/ or uploads/ under the state root hold anything.
func assertNothingLeft(t *testing.T, root string) {
	t.Helper()
	for _, dir := range []string{"runs", "uploads"} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("%s/%s is left behind", dir, e.Name())
		}
	}
}

// TestBundleNeedsTheToken: an upload without the token, or with a wrong one, is refused before
// its body is read, and writes nothing.
func TestBundleNeedsTheToken(t *testing.T) {
	_, c, root := startBundleServer(t)
	archive := scriptsBundle(t, DefaultBundleEntry)
	for _, tok := range []string{"", "wrong", c.token + "x"} {
		bad := *c
		bad.token = tok
		code, raw := bad.post("", "application/zip", bytes.NewReader(archive))
		if code != http.StatusUnauthorized || !bytes.Contains(raw, []byte(`"error"`)) {
			t.Errorf("token %q: %d %s", tok, code, raw)
		}
		body, ctype := form(t, [3]string{"bundle", "application/zip", string(archive)})
		if code, raw := bad.post("", ctype, body); code != http.StatusUnauthorized {
			t.Errorf("token %q, a form: %d %s", tok, code, raw)
		}
	}
	assertNothingLeft(t, root)
}

// TestCopyLimitedCountsWhatItCopies: the copy stops one byte past its budget whatever the source
// claims, and writes no more than the budget; a source of exactly the budget is copied whole.
func TestCopyLimitedCountsWhatItCopies(t *testing.T) {
	endless := func() io.Reader { return io.LimitReader(zeroReader{}, 1<<30) }
	var dst bytes.Buffer
	n, err := copyLimited(&dst, endless(), 1000)
	var over *overLimit
	if !errors.As(err, &over) || n > 1000 || dst.Len() > 1000 {
		t.Errorf("an endless source: %d bytes, %d written, %v", n, dst.Len(), err)
	}
	dst.Reset()
	if n, err := copyLimited(&dst, io.LimitReader(zeroReader{}, 1000), 1000); err != nil || n != 1000 || dst.Len() != 1000 {
		t.Errorf("a source of the budget: %d %v", n, err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
