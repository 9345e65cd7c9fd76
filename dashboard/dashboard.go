// Package dashboard is host serve's web dashboard: one page, served from files embedded in the
// binary, that shows the server's runs and, for one run, its agents by phase over time, its
// throughput, its stage graph with counts, its sub-agent tree, one agent's conversation with its
// tool calls and verdicts, the prompts waiting for people (with buttons to answer them), its trace
// (paged, and live), and the first difference between two runs' traces. People kill agents and
// pause, resume or cancel the run from it.
//
// The page is plain HTML, CSS and JavaScript modules (static/), with Apache ECharts for the charts
// (the caller passes its bytes, served as echarts.min.js): no build step, and nothing fetched from
// elsewhere. Every number comes from the API under /api/v1 (docs/api.md), which the page calls
// with the token it was opened with (http://HOST:PORT/?token=TOKEN): the page's own files need
// no token, and hold no data. The page never lists every agent: agents and tree levels are read a
// page at a time, so a run of 10^5 agents stays usable.
package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// static holds the page: index.html, its style and its script modules.
//
//go:embed static
var static embed.FS

// EChartsFile is the name the page loads ECharts by, relative to the page.
const EChartsFile = "echarts.min.js"

// contentTypes are the media types of the files the handler serves, by extension.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// policy is the page's Content-Security-Policy: scripts and connections to this origin only (the
// API is on it), no plugins, no framing. Inline styles are allowed because ECharts positions its
// tooltips with style attributes; the page's own script never writes HTML from data.
const policy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// file is one file the handler serves, with its gzip form when that is smaller.
type file struct {
	name, ctype string
	body, gz    []byte
	etag        string
}

// Handler serves the dashboard: index.html at "/" (and "/index.html"), its style and modules,
// and echarts (Apache ECharts, minified; report.EChartsJS()) as echarts.min.js. Mount it at the
// root of the server that serves the API under /api/v1, which the page calls. Only GET and HEAD
// are served; a file is sent gzip-compressed to a client that accepts it, with an ETag so a
// reload revalidates instead of fetching it again. The files are read once, here.
func Handler(echarts []byte) http.Handler {
	files := map[string]*file{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		files[name] = newFile(name, body)
		return nil
	})
	if err != nil {
		panic("dashboard: reading the embedded files: " + err.Error()) // embedded: cannot fail
	}
	if len(echarts) > 0 {
		files[EChartsFile] = newFile(EChartsFile, echarts)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		f, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		f.serve(w, r)
	})
}

// newFile prepares a file to serve: its type, its ETag and, when it saves bytes, its gzip form.
func newFile(name string, body []byte) *file {
	sum := sha256.Sum256(body)
	f := &file{name: name, body: body, ctype: contentTypes[path.Ext(name)], etag: hex.EncodeToString(sum[:8])}
	if f.ctype == "" {
		f.ctype = "application/octet-stream"
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(body)
	_ = zw.Close()
	if buf.Len() < len(body)*9/10 {
		f.gz = buf.Bytes()
	}
	return f
}

// serve writes f, compressed when the client accepts gzip. The index carries the page's
// security headers; every file is revalidated (no-cache) against its ETag.
func (f *file) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	if f.name == "index.html" {
		h.Set("Content-Security-Policy", policy)
		// The page's address carries the token on its first load: no Referer repeats it.
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
	}
	body, etag := f.body, `"`+f.etag+`"`
	if f.gz != nil && acceptsGzip(r) {
		body, etag = f.gz, `"`+f.etag+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip (and does not refuse it
// with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
