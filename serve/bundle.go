package serve

import (
	"archive/zip"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"

	"github.com/warrenhq/warren"
)

// A bundle is a zip archive of a scenario and every file it names (blueprints, script tools,
// policies, corpora, items), uploaded with POST /api/v1/runs. The server unpacks it into the
// run's own folder, so the run needs nothing else on the server's disk and its folder replays it
// anywhere. The archive comes from whoever holds the token, but it is still unpacked as if it were
// hostile: every entry is checked before a byte is written, the writing goes through an os.Root
// opened on the bundle's folder, and every size is counted as it is written.

// Where a bundled run's files are, inside STATE_ROOT/runs/<id>/.
const (
	// BundleDir holds the bundle as unpacked: folders 0700, files 0600, whatever modes the
	// archive gave them.
	BundleDir = "bundle"
	// BundleRunDir is the run directory (trace, recording, metrics, manifest, summary). It is a
	// folder of its own beside the bundle because a run directory must start empty
	// (warren.OpenRunDir), and the bundle must be there before the scenario loads.
	BundleRunDir = "run"
	// DefaultBundleEntry is the scenario a bundle runs when its launch names no entry.
	DefaultBundleEntry = "scenario.toml"
)

// Defaults of BundleLimits: generous for a scenario with its scripts and a corpus, small enough
// that a few uploads at once cannot fill a disk or memory.
const (
	DefaultBundleUpload   = 64 << 20
	DefaultBundleUnpacked = 256 << 20
	DefaultBundleFile     = 64 << 20
	DefaultBundleEntries  = 10000
)

// BundleLimits bounds an uploaded bundle (Config.Bundle). A zip's headers may lie about sizes,
// so the sizes are counted as the files are written; the headers only let an honest archive
// that is too large be refused before anything is written. A field of zero or less takes its
// DefaultBundle value: there is no unbounded setting.
type BundleLimits struct {
	// Upload bounds the request body: the archive, or the whole multipart form.
	Upload int64
	// Unpacked bounds the bytes of all the bundle's files together, as written.
	Unpacked int64
	// File bounds one file, as written.
	File int64
	// Entries bounds the archive's entries, folders included.
	Entries int
}

// orDefaults is l with its unset fields set to the defaults.
func (l BundleLimits) orDefaults() BundleLimits {
	if l.Upload <= 0 {
		l.Upload = DefaultBundleUpload
	}
	if l.Unpacked <= 0 {
		l.Unpacked = DefaultBundleUnpacked
	}
	if l.File <= 0 {
		l.File = DefaultBundleFile
	}
	if l.Entries <= 0 {
		l.Entries = DefaultBundleEntries
	}
	return l
}

// Errors a bundle is refused with, for errors.Is. Every refusal is a *BundleError, which is
// ErrBundle and one of the others; the API answers each with its own status.
var (
	// ErrBundle: the server refused an uploaded bundle.
	ErrBundle = errors.New("bundle refused")
	// ErrBundleTooLarge: the upload, one file, all files or the number of entries is over its
	// limit (413).
	ErrBundleTooLarge = errors.New("over a bundle limit")
	// ErrBundleUnsafe: an entry the server never unpacks: a name that would leave the bundle (an
	// absolute path, a ".." component), a name that is not clean UTF-8, a symbolic link or
	// anything but a file or folder, a name given twice, an encrypted entry (422).
	ErrBundleUnsafe = errors.New("an entry the server does not unpack")
	// ErrBundleMalformed: the upload cannot be read: not a zip archive, an entry whose data does
	// not match its header, a form or launch the server cannot parse (400).
	ErrBundleMalformed = errors.New("a bundle upload the server cannot read")
	// ErrBundleIncomplete: the bundle lacks the scenario to run (422). A file the scenario names
	// outside the bundle is ErrNotAllowed (403).
	ErrBundleIncomplete = errors.New("the bundle lacks a file its run needs")
)

// BundleError is why a bundle was refused: which entry, which limit, what is wrong. The API
// returns it as JSON, so a client can show the entry and the limit without parsing the message.
type BundleError struct {
	// Entry is the entry as the archive names it; empty when the whole upload is refused.
	Entry string
	// Limit names the limit crossed and its value ("unpacked 268435456 bytes"), if one was.
	Limit string
	// Kind is ErrBundleTooLarge, ErrBundleUnsafe, ErrBundleMalformed or ErrBundleIncomplete.
	Kind error
	// Reason says what is wrong, for people.
	Reason string
}

// Error says it all in one line.
func (e *BundleError) Error() string {
	var b strings.Builder
	b.WriteString(ErrBundle.Error())
	if e.Entry != "" {
		fmt.Fprintf(&b, ": entry %q", e.Entry)
	}
	fmt.Fprintf(&b, ": %v: %s", e.Kind, e.Reason)
	if e.Limit != "" {
		fmt.Fprintf(&b, " (limit: %s)", e.Limit)
	}
	return b.String()
}

// Unwrap makes the error ErrBundle and its Kind for errors.Is.
func (e *BundleError) Unwrap() []error { return []error{ErrBundle, e.Kind} }

func refuse(kind error, entry, format string, args ...any) *BundleError {
	return &BundleError{Entry: entry, Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

func tooLarge(entry, limit, format string, args ...any) *BundleError {
	e := refuse(ErrBundleTooLarge, entry, format, args...)
	e.Limit = limit
	return e
}

// BundleLaunch is a bundle's launch: what a scenario file's launch may change, and which file of
// the bundle is the scenario. In a multipart upload it is the "launch" part, as JSON.
type BundleLaunch struct {
	Launch
	// Entry is the scenario's path inside the bundle, written with "/" (DefaultBundleEntry when
	// empty).
	Entry string `json:"entry,omitempty"`
}

// SubmitBundle unpacks the zip archive (size bytes) into a new run's folder and starts the
// scenario l.Entry names there, as Submit does for a file. Nothing is written until every entry
// has been checked; a refused bundle is a *BundleError (errors.Is ErrBundle), a scenario that
// does not load is ErrSubmit, and either leaves no folder behind in the state root.
//
// The bundle is unpacked into STATE_ROOT/runs/<id>/bundle/ and the run directory is
// STATE_ROOT/runs/<id>/run/ (BundleDir, BundleRunDir). Every file and program the scenario names
// (its blueprints, script tools, policies, corpora, items, MCP servers) must lie inside the
// bundle, or in a folder Config.Policy allows, or the submission is refused before the load opens
// it (ErrNotAllowed): a bundle that holds all it needs replays from its folder copied elsewhere.
// The server's own host config (Config.Host) is the one exception.
func (s *Server) SubmitBundle(archive io.ReaderAt, size int64, l BundleLaunch) (*Run, error) {
	lim := s.cfg.Bundle.orDefaults()
	if size > lim.Upload {
		return nil, tooLarge("", fmt.Sprintf("upload %d bytes", lim.Upload), "the archive has %d bytes", size)
	}
	entry := cmp.Or(l.Entry, DefaultBundleEntry)
	if why := badName(entry); why != "" {
		return nil, refuse(ErrBundleIncomplete, entry, "the launch's entry %s; name the scenario by its path inside the bundle, such as %s", why, DefaultBundleEntry)
	}
	params, opt, err := s.launchOptions(l.Launch)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(archive, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // insecure names are refused by name below
		return nil, refuse(ErrBundleMalformed, "", "not a zip archive (%v)", err)
	}
	if err := checkEntries(zr.File, lim, entry); err != nil {
		return nil, err
	}
	staging := filepath.Join(s.cfg.StateRoot, "uploads")
	if err := os.MkdirAll(staging, 0o700); err != nil {
		return nil, fmt.Errorf("serve: the uploads folder: %w", err)
	}
	partial, err := os.MkdirTemp(staging, "bundle-*")
	if err != nil {
		return nil, fmt.Errorf("serve: unpacking a bundle: %w", err)
	}
	if err := unpack(zr.File, filepath.Join(partial, BundleDir), lim); err != nil {
		_ = os.RemoveAll(partial)
		return nil, err
	}
	id := s.newID(scenarioName(filepath.Join(partial, BundleDir, filepath.FromSlash(entry))))
	home := filepath.Join(s.cfg.StateRoot, "runs", id)
	if _, err := os.Lstat(home); err == nil {
		_ = os.RemoveAll(partial)
		return nil, fmt.Errorf("%w: the run directory %s exists already", ErrSubmit, home)
	}
	if err := os.Rename(partial, home); err != nil {
		_ = os.RemoveAll(partial)
		return nil, fmt.Errorf("serve: moving the bundle into place: %w", err)
	}
	run, err := s.startBundle(id, home, entry, params, opt, l.Launch)
	if err != nil {
		_ = os.RemoveAll(home)
		return nil, err
	}
	return run, nil
}

// startBundle loads the unpacked bundle's scenario, confined to the bundle and the policy's
// folders, and starts it with its run directory beside the bundle.
func (s *Server) startBundle(id, home, entry string, params []warren.Param, opt warren.Options, l Launch) (*Run, error) {
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, err
	}
	bundle := filepath.Join(abs, BundleDir)
	file := filepath.Join(bundle, filepath.FromSlash(entry))
	sc, err := s.load(file, s.confine(bundle), params, opt.Agents)
	if err != nil {
		// The loader names the files by the server's paths, which the refusal removes: name
		// them by their paths inside the bundle, as the archive did.
		msg := strings.ReplaceAll(err.Error(), bundle+string(filepath.Separator), "")
		return nil, &renamed{msg: msg, err: err}
	}
	return s.start(id, filepath.Join(home, BundleRunDir), file, sc, params, opt, l)
}

// renamed is err with another message (its paths made relative), still err for errors.Is.
type renamed struct {
	msg string
	err error
}

func (r *renamed) Error() string { return r.msg }
func (r *renamed) Unwrap() error { return r.err }

// sameFile reports whether the paths name one file, by their absolute paths.
func sameFile(a, b string) bool {
	b, err := filepath.Abs(b)
	return err == nil && filepath.Clean(a) == b
}

// idName is what a scenario's name may look like in a run's id (the loader's own rule, bounded).
var idName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// scenarioName reads the name the scenario at path gives itself, for the run's id, which names
// the run's folder and so is needed before the scenario can load from its final place. A file
// without a usable name gives "bundle": its load then says what is wrong with it.
func scenarioName(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "bundle"
	}
	var doc struct {
		Name string `toml:"name"`
	}
	if toml.Unmarshal(raw, &doc) != nil || !idName.MatchString(doc.Name) {
		return "bundle"
	}
	return doc.Name
}

// badName says why name may not name a bundle's entry, or "" if it may: it must be a relative,
// clean path written with "/", of valid UTF-8 without control characters, that stays inside the
// folder it is unpacked in. Names are checked here, before anything is written, and os.Root
// holds the writing inside the folder too.
func badName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case strings.ContainsRune(name, 0):
		return "has a NUL byte"
	case strings.ContainsRune(name, '\\'):
		return `has a "\" (write "/" between folders)`
	case strings.HasPrefix(name, "/"):
		return "is an absolute path"
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "has a control character"
		}
	}
	for part := range strings.SplitSeq(name, "/") {
		switch {
		case part == "":
			return "has an empty folder name (//)"
		case part == ".":
			return `has a "." component`
		case part == "..":
			return `has a ".." component, which would leave the bundle`
		case len(part) > 255:
			return "has a component longer than 255 bytes"
		}
	}
	return ""
}

// checkEntries refuses an archive that breaks a rule, before anything is written: too many
// entries, an unsafe name, anything but a file or folder, a name given twice or used both as a
// file and as a folder, an encrypted entry, sizes over the limits by the headers' own account, or
// no regular file named entry.
func checkEntries(files []*zip.File, lim BundleLimits, entry string) error {
	if len(files) > lim.Entries {
		return tooLarge("", fmt.Sprintf("entries %d", lim.Entries), "the archive has %d entries", len(files))
	}
	isDir := map[string]bool{}
	var declared uint64
	for _, f := range files {
		dir := strings.HasSuffix(f.Name, "/")
		name := strings.TrimSuffix(f.Name, "/")
		if why := badName(name); why != "" {
			return refuse(ErrBundleUnsafe, f.Name, "its name %s", why)
		}
		if t := f.Mode().Type(); (dir && t != fs.ModeDir) || (!dir && t != 0) {
			return refuse(ErrBundleUnsafe, f.Name, "it is %s; a bundle holds regular files and folders only", typeName(t))
		}
		if f.Flags&0x1 != 0 {
			return refuse(ErrBundleUnsafe, f.Name, "it is encrypted")
		}
		if _, dup := isDir[name]; dup {
			return refuse(ErrBundleUnsafe, f.Name, "the archive names %s twice", name)
		}
		isDir[name] = dir
		if dir {
			continue
		}
		if f.UncompressedSize64 > uint64(lim.File) {
			return tooLarge(f.Name, fmt.Sprintf("file %d bytes", lim.File), "its header says it unpacks to %d bytes", f.UncompressedSize64)
		}
		if declared += f.UncompressedSize64; declared > uint64(lim.Unpacked) {
			return tooLarge(f.Name, fmt.Sprintf("unpacked %d bytes", lim.Unpacked), "by the headers, the files up to this one unpack to %d bytes", declared)
		}
	}
	for _, f := range files {
		name := strings.TrimSuffix(f.Name, "/")
		for i := range len(name) {
			if name[i] == '/' && !isDirOr(isDir, name[:i], true) {
				return refuse(ErrBundleUnsafe, f.Name, "the archive has %s as a file, and this entry needs it as a folder", name[:i])
			}
		}
	}
	if dir, ok := isDir[entry]; !ok || dir {
		return refuse(ErrBundleIncomplete, entry, "the bundle has no file %s, the scenario to run (the archive's top holds %s); name another with the launch's entry", entry, topFiles(isDir))
	}
	return nil
}

// isDirOr is whether m says name is a folder, def when m does not name it.
func isDirOr(m map[string]bool, name string, def bool) bool {
	if dir, ok := m[name]; ok {
		return dir
	}
	return def
}

// topFiles lists the .toml files at the archive's top, for a message.
func topFiles(isDir map[string]bool) string {
	var out []string
	for name, dir := range isDir {
		if !dir && !strings.Contains(name, "/") && strings.HasSuffix(name, ".toml") {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return "no .toml file"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// typeName says what kind of file a mode's type is, for a message.
func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeDir != 0:
		return "a folder whose name does not end in /"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t == 0:
		return "a file whose name ends in /"
	default:
		return "not a regular file"
	}
}

// unpack writes the checked entries into dir, which it makes (0700), through an os.Root opened on
// it: folders 0700, files 0600 and made anew (O_EXCL), whatever the archive says of their modes,
// so nothing unpacked is executable, setuid, or written through a link. Each file is copied
// through an io.LimitReader of what the limits have left, so a header that lies about its size
// still stops at the limit.
func unpack(files []*zip.File, dir string, lim BundleLimits) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("serve: unpacking a bundle: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("serve: unpacking a bundle: %w", err)
	}
	defer root.Close()
	var written int64
	for _, f := range files {
		name := strings.TrimSuffix(f.Name, "/")
		if f.Mode().IsDir() {
			if err := root.MkdirAll(name, 0o700); err != nil {
				return fmt.Errorf("serve: unpacking %q: %w", f.Name, err)
			}
			continue
		}
		if parent := path.Dir(name); parent != "." {
			if err := root.MkdirAll(parent, 0o700); err != nil {
				return fmt.Errorf("serve: unpacking %q: %w", f.Name, err)
			}
		}
		n, err := unpackFile(root, f, name, lim, written)
		written += n
		if err != nil {
			return err
		}
	}
	return nil
}

// unpackFile writes one file, given the bytes already written, and returns how many it wrote.
func unpackFile(root *os.Root, f *zip.File, name string, lim BundleLimits, written int64) (int64, error) {
	budget, limit := lim.File, fmt.Sprintf("file %d bytes", lim.File)
	if left := lim.Unpacked - written; left < budget {
		budget, limit = left, fmt.Sprintf("unpacked %d bytes", lim.Unpacked)
	}
	rc, err := f.Open()
	if err != nil {
		return 0, refuse(ErrBundleMalformed, f.Name, "it cannot be read (%v)", err)
	}
	defer rc.Close()
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("serve: unpacking %q: %w", f.Name, err)
	}
	n, err := copyLimited(out, rc, budget)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%w: %w", errWrite, cerr)
	}
	var over *overLimit
	switch {
	case errors.As(err, &over):
		return n, tooLarge(f.Name, limit, "it unpacks to more than the %d bytes the limits leave it (its header says %d)", budget, f.UncompressedSize64)
	case errors.Is(err, errWrite):
		return n, fmt.Errorf("serve: unpacking %s: %w", f.Name, err)
	case err != nil:
		return n, refuse(ErrBundleMalformed, f.Name, "its data does not match its header (%v)", err)
	}
	return n, nil
}

// overLimit is copyLimited's error for a source with more than its budget.
type overLimit struct{ budget int64 }

func (o *overLimit) Error() string { return fmt.Sprintf("more than %d bytes", o.budget) }

// errWrite marks a failure to write the copy (the disk's), not to read the archive.
var errWrite = errors.New("writing")

// copyLimited copies src to dst, at most budget bytes: it reads through an io.LimitReader of
// budget+1, so a source with more than budget bytes is an *overLimit error once budget+1 bytes
// were read, whatever the source claimed its size to be.
func copyLimited(dst io.Writer, src io.Reader, budget int64) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	lr := io.LimitReader(src, budget+1)
	for {
		k, rerr := lr.Read(buf)
		if int64(k) > budget-n {
			return n, &overLimit{budget: budget}
		}
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return n, fmt.Errorf("%w: %w", errWrite, werr)
			}
			n += int64(k)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// bundleKind says whether r uploads a bundle, by its Content-Type: "zip" for an archive as the
// body, "multipart" for a form with bundle and launch parts, "" for anything else, which is the
// JSON Submission (curl -d sends no JSON content type, so the JSON body is the default).
func bundleKind(r *http.Request) (kind, boundary string) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return "", ""
	}
	switch mt {
	case "application/zip", "application/x-zip-compressed":
		return "zip", ""
	case "multipart/form-data":
		return "multipart", params["boundary"]
	}
	return "", ""
}

// launchQuery are the query parameters an archive body's launch is read from (a repeated one is
// a list); with a multipart upload the launch is its own part, and these are refused.
var launchQuery = []string{"seed", "agents", "param", "allow", "ask", "deny", "yolo", "paused", "entry"}

// queryLaunch reads a BundleLaunch from the query of an upload whose body is the archive: seed,
// agents, yolo, paused and entry once each; param, allow, ask and deny as often as wanted. Any other
// parameter but token is refused, as an unknown JSON field is.
func queryLaunch(q url.Values) (BundleLaunch, error) {
	var l BundleLaunch
	for _, key := range slices.Sorted(maps.Keys(q)) {
		vals := q[key]
		bad := func(format string, args ...any) error {
			return refuse(ErrBundleMalformed, "", "query parameter %s: %s", key, fmt.Sprintf(format, args...))
		}
		switch key {
		case "token":
			continue
		case "param":
			l.Params = slices.Clone(vals)
			continue
		case "allow":
			l.Allow = slices.Clone(vals)
			continue
		case "ask":
			l.Ask = slices.Clone(vals)
			continue
		case "deny":
			l.Deny = slices.Clone(vals)
			continue
		case "seed", "agents", "yolo", "paused", "entry":
		default:
			return l, bad("not a launch flag (the launch flags are %s)", strings.Join(launchQuery, ", "))
		}
		if len(vals) != 1 {
			return l, bad("given %d times; give it once", len(vals))
		}
		v := vals[0]
		switch key {
		case "seed":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return l, bad("%q: want a whole number of 0 or more", v)
			}
			l.Seed = &n
		case "agents":
			n, err := strconv.ParseUint(v, 10, 31)
			if err != nil {
				return l, bad("%q: want a whole number of 0 or more", v)
			}
			l.Agents = int(n)
		case "yolo":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return l, bad("%q: want true or false", v)
			}
			l.Yolo = b
		case "paused":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return l, bad("%q: want true or false", v)
			}
			l.Paused = b
		case "entry":
			l.Entry = v
		}
	}
	return l, nil
}

// submitBundle serves POST /api/v1/runs with a bundle, answering only once the upload's
// temporary file is gone, so that a client that got its answer finds nothing left behind.
func (s *Server) submitBundle(w http.ResponseWriter, r *http.Request, kind, boundary string) {
	run, err := s.receiveBundle(w, r, kind, boundary)
	if err != nil {
		writeBundleError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, run.Info())
}

// receiveBundle holds the request body in a temporary file (archive/zip reads the directory at
// the archive's end first), bounded by the upload limit, reads the launch from the query or the
// form, and has SubmitBundle unpack and start it.
func (s *Server) receiveBundle(w http.ResponseWriter, r *http.Request, kind, boundary string) (*Run, error) {
	lim := s.cfg.Bundle.orDefaults()
	uploadLimit := fmt.Sprintf("upload %d bytes", lim.Upload)
	if r.ContentLength > lim.Upload {
		return nil, tooLarge("", uploadLimit, "the request body has %d bytes", r.ContentLength)
	}
	var l BundleLaunch
	var err error
	switch kind {
	case "zip":
		if l, err = queryLaunch(r.URL.Query()); err != nil {
			return nil, err
		}
	case "multipart":
		for _, key := range launchQuery {
			if r.URL.Query().Has(key) {
				return nil, refuse(ErrBundleMalformed, "", "query parameter %s: a multipart upload takes its launch in its launch part", key)
			}
		}
	}
	staging := filepath.Join(s.cfg.StateRoot, "uploads")
	if err := os.MkdirAll(staging, 0o700); err != nil {
		return nil, fmt.Errorf("serve: the uploads folder: %w", err)
	}
	tmp, err := os.CreateTemp(staging, "upload-*.zip")
	if err != nil {
		return nil, fmt.Errorf("serve: keeping the upload: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	readErr := func(err error) error {
		switch mbe := (*http.MaxBytesError)(nil); {
		case errors.As(err, &mbe):
			return tooLarge("", uploadLimit, "the request body is larger than %d bytes", mbe.Limit)
		case errors.Is(err, errWrite):
			return fmt.Errorf("serve: keeping the upload: %w", err)
		}
		return refuse(ErrBundleMalformed, "", "reading the upload: %v", err)
	}
	body := http.MaxBytesReader(w, r.Body, lim.Upload)
	var size int64
	if kind == "zip" {
		if size, err = io.Copy(keptWriter{tmp}, body); err != nil {
			return nil, readErr(err)
		}
	} else if l, size, err = readForm(multipart.NewReader(body, boundary), keptWriter{tmp}, readErr); err != nil {
		return nil, err
	}
	return s.SubmitBundle(tmp, size, l)
}

// keptWriter marks its file's write errors with errWrite, so that a failure to keep the upload
// (a full disk: the server's) is told apart from one to read it (the client's).
type keptWriter struct{ f *os.File }

func (k keptWriter) Write(p []byte) (int, error) {
	n, err := k.f.Write(p)
	if err != nil {
		err = fmt.Errorf("%w: %w", errWrite, err)
	}
	return n, err
}

// readForm reads a multipart upload: a "bundle" part, the archive, copied into tmp, and an
// optional "launch" part, a BundleLaunch as JSON (unknown fields refused). Any other part, or a
// part given twice, is refused.
func readForm(mr *multipart.Reader, tmp io.Writer, readErr func(error) error) (BundleLaunch, int64, error) {
	var l BundleLaunch
	var size int64
	seen := map[string]bool{}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return l, 0, readErr(err)
		}
		name := p.FormName()
		if seen[name] {
			return l, 0, refuse(ErrBundleMalformed, "", "the form has two %q parts", name)
		}
		seen[name] = true
		switch name {
		case "bundle":
			if size, err = io.Copy(tmp, p); err != nil {
				return l, 0, readErr(err)
			}
		case "launch":
			dec := json.NewDecoder(io.LimitReader(p, 1<<20))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				if errors.As(err, new(*http.MaxBytesError)) {
					return l, 0, readErr(err)
				}
				return l, 0, refuse(ErrBundleMalformed, "", "the launch part: %v", err)
			}
		default:
			return l, 0, refuse(ErrBundleMalformed, "", "the form has a part %q; its parts are bundle (the zip archive) and launch (JSON)", name)
		}
	}
	if !seen["bundle"] {
		return l, 0, refuse(ErrBundleMalformed, "", "the form has no bundle part (the zip archive)")
	}
	return l, size, nil
}

// bundleErrorBody is a refused bundle as the API answers it: the message, and the entry and the
// limit on their own.
type bundleErrorBody struct {
	Error string `json:"error"`
	Entry string `json:"entry,omitempty"`
	Limit string `json:"limit,omitempty"`
}

// jsonEntry is an entry's name as JSON can carry it: unchanged when it is valid UTF-8, else
// written as Go quotes it without the quotes (caf\xe9.txt), so the bytes stay visible rather than
// turning into U+FFFD.
func jsonEntry(name string) string {
	if utf8.ValidString(name) {
		return name
	}
	q := strconv.Quote(name)
	return q[1 : len(q)-1]
}

// writeBundleError answers a failed bundle submission: 413 over a limit, 400 an upload that
// cannot be read, 422 a bundle refused or a scenario that does not load, 500 the server's own
// failure.
func writeBundleError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrBundleTooLarge):
		status = http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrBundleMalformed):
		status = http.StatusBadRequest
	case errors.Is(err, ErrNotAllowed):
		status = http.StatusForbidden
	case errors.Is(err, ErrBundle), errors.Is(err, ErrSubmit):
		status = http.StatusUnprocessableEntity
	}
	body := bundleErrorBody{Error: err.Error()}
	if be := (*BundleError)(nil); errors.As(err, &be) {
		body.Entry, body.Limit = jsonEntry(be.Entry), be.Limit
	}
	writeJSON(w, status, body)
}
