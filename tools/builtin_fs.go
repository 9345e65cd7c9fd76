package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits of the file tools. They bound what one call can pull into memory and into the trace.
const (
	// MaxReadBytes caps the text read_file returns per call; the rest is reachable with offset.
	MaxReadBytes = 256 << 10
	// MaxEditBytes is the largest file edit_file rewrites.
	MaxEditBytes = 4 << 20
	// MaxListEntries caps the entries list_dir returns.
	MaxListEntries = 1000
)

// rootEscapeMessage is the text of os.Root's (unexported) error for a path that leaves the root —
// through "..", an absolute symlink, or a relative symlink climbing out. The confinement tests
// fail if a Go release changes it.
const rootEscapeMessage = "path escapes from parent"

var (
	_ Tool = ReadFile{}
	_ Tool = WriteFile{}
	_ Tool = EditFile{}
	_ Tool = ListDir{}
)

// openWorkdir opens ec.Workdir as an os.Root (OpenWorkdir: no symbolic link followed on the way),
// creating it on first use and handing it to ec.FileOwner then. Errors never include the host
// path: tool results reach a deterministic trace and must not depend on where the run lives.
func openWorkdir(ec *ExecContext) (*os.Root, error) {
	if ec == nil || ec.Workdir == "" {
		return nil, fmt.Errorf("%w: the call has no workdir", ErrNoWorkdir)
	}
	return openWorkdirPath(ec.Workdir, true, ec.FileOwner)
}

// confinePath turns the path an agent gave into a path relative to the workdir, refusing lexical
// escapes up front (symlink escapes are refused by os.Root when the path is used). An absolute
// path is accepted when it lies inside the workdir.
func confinePath(workdir, given string) (string, error) {
	if given == "" {
		return "", fmt.Errorf("%w: path is empty", ErrInvalidArguments)
	}
	if strings.IndexByte(given, 0) >= 0 {
		return "", fmt.Errorf("%w: path %q contains a NUL byte", ErrInvalidArguments, given)
	}
	rel := filepath.Clean(given)
	if filepath.IsAbs(given) {
		var err error
		if rel, err = filepath.Rel(filepath.Clean(workdir), rel); err != nil {
			return "", fmt.Errorf("%q: %w", given, ErrOutsideWorkdir)
		}
	}
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%q: %w", given, ErrOutsideWorkdir)
	}
	return rel, nil
}

// prepareFileCall is the common start of every file tool: honour cancellation, confine the path,
// open the workdir. The caller closes the root.
func prepareFileCall(ec *ExecContext, given string) (*os.Root, string, error) {
	if ec.Cancelled() {
		return nil, "", fmt.Errorf("cancelled: %w", ec.Context().Err())
	}
	workdir := ""
	if ec != nil {
		workdir = ec.Workdir
	}
	rel, err := confinePath(workdir, given)
	if err != nil {
		return nil, "", err
	}
	root, err := openWorkdir(ec)
	if err != nil {
		return nil, "", err
	}
	return root, rel, nil
}

// fsError phrases a filesystem failure for the agent, naming the path as the agent gave it and
// mapping os.Root's escape error to ErrOutsideWorkdir.
func fsError(verb, shown string, err error) error {
	if isRootEscape(err) {
		return fmt.Errorf("cannot %s %q: %w (a symbolic link or '..' leads out of it)", verb, shown, ErrOutsideWorkdir)
	}
	return fmt.Errorf("cannot %s %q: %w", verb, shown, bareError(err))
}

// isRootEscape reports whether err is os.Root refusing a path that leaves the root.
func isRootEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == rootEscapeMessage {
			return true
		}
	}
	return false
}

// bareError strips the path from an os error (the path may be the absolute host path) and keeps
// the cause, so errors.Is(err, fs.ErrNotExist) and friends still hold.
func bareError(err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err
	}
	return err
}

// openRegularFile opens rel for a file tool (flag os.O_RDONLY or os.O_RDWR) if it is a regular
// file, refusing anything else without opening it (opening a FIFO would block the lane), with the
// tool's error texts.
func openRegularFile(root *os.Root, rel string, flag int, verb, shown string) (*os.File, fs.FileInfo, error) {
	f, info, err := openRegular(root, rel, flag)
	switch {
	case err == nil:
		return f, info, nil
	case errors.Is(err, ErrNotRegularFile) && info != nil && info.IsDir():
		return nil, nil, fmt.Errorf("cannot %s %q: %w (it is a directory; use list_dir)", verb, shown, ErrNotRegularFile)
	case errors.Is(err, ErrNotRegularFile):
		return nil, nil, fmt.Errorf("cannot %s %q: %w", verb, shown, ErrNotRegularFile)
	}
	return nil, nil, fsError(verb, shown, err)
}

// init registers the file tools as built-ins (see RegisterBuiltin): the file that defines a tool
// registers it, so no list elsewhere has to be kept in step.
func init() {
	RegisterBuiltin(BuiltinInfo{ID: "tools.read_file", New: func() Tool { return ReadFile{} }})
	RegisterBuiltin(BuiltinInfo{ID: "tools.write_file", New: func() Tool { return WriteFile{} }})
	RegisterBuiltin(BuiltinInfo{ID: "tools.edit_file", New: func() Tool { return EditFile{} }})
	RegisterBuiltin(BuiltinInfo{ID: "tools.list_dir", New: func() Tool { return ListDir{} }})
}

// ReadFile is the read_file tool: it returns a text file's lines, optionally a window of them.
type ReadFile struct{}

var _ Tool = ReadFile{} // compile-time guard: ReadFile stays a Tool

var readFileSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"path": {"type": "string", "minLength": 1, "description": "File path relative to the workdir."},
		"offset": {"type": "integer", "minimum": 1, "description": "First line to return (1-based). Default 1."},
		"limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return. Default: to the end of the file."}
	},
	"required": ["path"],
	"additionalProperties": false
}`)

// Spec describes read_file.
func (ReadFile) Spec() Spec {
	return Spec{
		Name: NameReadFile,
		Description: "Read a text file in the workdir. Returns the file's text exactly; with offset and/or limit, " +
			"only that window of lines, followed by a bracketed note such as \"[showed lines 10-19; more lines follow; continue with offset=20]\". " +
			fmt.Sprintf("At most %d bytes are returned per call; a note says how much was cut and where to continue.", MaxReadBytes),
		Parameters: readFileSchema,
	}
}

type readFileArgs struct {
	Path   string       `json:"path"`
	Offset *json.Number `json:"offset"`
	Limit  *json.Number `json:"limit"`
}

// Execute reads the file; see the package documentation for the result texts.
func (ReadFile) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a readFileArgs
	if err := decodeArguments(NameReadFile, args, &a); err != nil {
		return Result{}, err
	}
	offset, err := positiveInt("offset", a.Offset, 1)
	if err != nil {
		return Result{}, err
	}
	limit, err := positiveInt("limit", a.Limit, 0)
	if err != nil {
		return Result{}, err
	}
	root, rel, err := prepareFileCall(ec, a.Path)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	f, info, err := openRegularFile(root, rel, os.O_RDONLY, "read", a.Path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	content, err := readLineWindow(bufio.NewReaderSize(f, 32<<10), info.Size(), offset, limit, a.Path)
	if err != nil {
		return Result{}, err
	}
	return TextResult(content), nil
}

// readLineWindow returns lines offset.. (at most limit of them when limit > 0, at most
// MaxReadBytes bytes) with the note documented on the package.
func readLineWindow(br *bufio.Reader, size int64, offset, limit int, shown string) (string, error) {
	var consumed int64
	skipped, inLine := 0, false
	for skipped < offset-1 {
		chunk, err := br.ReadSlice('\n')
		consumed += int64(len(chunk))
		inLine = inLine || len(chunk) > 0
		switch {
		case err == nil:
			skipped, inLine = skipped+1, false
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if inLine {
				skipped++
			}
			return "", pastEnd(offset, skipped, shown)
		default:
			return "", fsError("read", shown, err)
		}
	}

	var out bytes.Buffer
	lineStart, lines, longLine, capped, eof := 0, 0, 0, false, false
	for limit == 0 || lines < limit {
		chunk, err := br.ReadSlice('\n')
		if out.Len()+len(chunk) > MaxReadBytes {
			capped = true
			if lines == 0 { // the first line alone exceeds the cap: show its head
				before := out.Len()
				room := MaxReadBytes - before
				out.Write(chunk[:room])
				cut := cutAtRuneStart(out.Bytes(), chunk[room])
				out.Truncate(cut)
				consumed += int64(cut - before)
				lines, longLine = 1, cut
			} else { // drop the partly read line; it starts the next window
				consumed -= int64(out.Len() - lineStart)
				out.Truncate(lineStart)
			}
			break
		}
		out.Write(chunk)
		consumed += int64(len(chunk))
		if err == nil {
			lines, lineStart = lines+1, out.Len()
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !errors.Is(err, io.EOF) {
			return "", fsError("read", shown, err)
		}
		if out.Len() > lineStart {
			lines++
		}
		eof = true
		break
	}
	if lines == 0 && !capped {
		if offset == 1 {
			return "[empty file]", nil
		}
		return "", pastEnd(offset, skipped, shown)
	}
	if !eof && !capped {
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			eof = true
		}
	}

	first, last := offset, offset+lines-1
	unread := max(size-consumed, 0)
	var note string
	switch {
	case longLine > 0:
		note = fmt.Sprintf("[truncated: line %d is longer than the %d-byte read cap; showed its first %d bytes; %d bytes of the file not shown; continue with offset=%d]",
			first, MaxReadBytes, longLine, unread, last+1)
	case capped:
		note = fmt.Sprintf("[truncated: output is capped at %d bytes; showed lines %d-%d; %d bytes of the file not shown; continue with offset=%d]",
			MaxReadBytes, first, last, unread, last+1)
	case !eof:
		note = fmt.Sprintf("[showed lines %d-%d; more lines follow; continue with offset=%d]", first, last, last+1)
	case offset > 1 || limit > 0:
		note = fmt.Sprintf("[showed lines %d-%d; end of file]", first, last)
	}
	if note == "" {
		return out.String(), nil
	}
	if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteByte('\n')
	}
	out.WriteString(note)
	return out.String(), nil
}

// pastEnd is the error for an offset beyond the last line.
func pastEnd(offset, lines int, shown string) error {
	return fmt.Errorf("%w: offset %d is past the end of %q (it has %d lines)", ErrInvalidArguments, offset, shown, lines)
}

// cutAtRuneStart returns how many bytes of b to keep so that the cut does not split a UTF-8
// character; next is the first byte after b in the file.
func cutAtRuneStart(b []byte, next byte) int {
	cut := len(b)
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(next); i++ {
		cut--
		next = b[cut]
	}
	return cut
}

// WriteFile is the write_file tool: it creates or replaces a file, creating parent directories.
type WriteFile struct{}

var _ Tool = WriteFile{} // compile-time guard: WriteFile stays a Tool

var writeFileSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"path": {"type": "string", "minLength": 1, "description": "File path relative to the workdir. Missing parent directories are created."},
		"content": {"type": "string", "description": "The complete new content of the file."}
	},
	"required": ["path", "content"],
	"additionalProperties": false
}`)

// Spec describes write_file.
func (WriteFile) Spec() Spec {
	return Spec{
		Name: NameWriteFile,
		Description: "Create a file in the workdir, or replace its whole content, creating missing parent directories. " +
			"Returns how many bytes were written and whether the file is new. To change part of a file use edit_file.",
		Parameters: writeFileSchema,
	}
}

type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Execute writes the file; see the package documentation for the result texts. The write is
// exactly-once across a crash of the host (ExactlyOnce): its effect is journaled before it is
// made, and made atomic (a temporary file renamed over the target) unless the target is a link.
func (WriteFile) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a writeFileArgs
	if err := decodeArguments(NameWriteFile, args, &a); err != nil {
		return Result{}, err
	}
	root, rel, err := prepareFileCall(ec, a.Path)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	if err := checkPlanFile(ec, root); err != nil {
		return Result{}, fmt.Errorf("cannot write %q: %w", a.Path, err)
	}
	existed := true
	info, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		existed, info = false, nil
	} else if err != nil {
		return Result{}, fsError("write", a.Path, err)
	} else if info.Mode().Type()&^(fs.ModeSymlink|fs.ModeDir) != 0 {
		return Result{}, fmt.Errorf("cannot write %q: %w", a.Path, ErrNotRegularFile) // a FIFO, socket or device
	}
	// Charge before touching the disk, so a refused write leaves the file (and its missing parent
	// directories) as they were; refund if the write then fails, so the total stays what was
	// actually written.
	size := int64(len(a.Content))
	if err := ec.Writes.Charge(size); err != nil {
		return Result{}, err
	}
	state := "new file"
	if existed {
		state = "replaced the previous content"
	}
	result := fmt.Sprintf("Wrote %d bytes to %q (%s)", len(a.Content), a.Path, state)
	var w *fileWrite
	if info == nil || !info.IsDir() { // a folder: the write below fails as it always did
		w = planWrite(ec, root, rel, a.Content, info)
		if err := journalWrite(ec, root, w, result, size); err != nil {
			ec.Writes.refund(size)
			return Result{}, err
		}
	}
	var created []string // folders this call creates, outermost first
	if dir := filepath.Dir(rel); !existed && dir != "." {
		created = missingFolders(root, dir)
		if err := root.MkdirAll(dir, 0o755); err != nil {
			ec.Writes.refund(size)
			return Result{}, fsError("create the parent directories of", a.Path, err)
		}
	}
	if o := ec.FileOwner; o != nil && !existed {
		for _, p := range created {
			if err := root.Lchown(p, o.UID, o.GID); err != nil {
				ec.Writes.refund(size)
				return Result{}, fsError("hand to the agent's commands", a.Path, err)
			}
		}
	}
	if w == nil {
		err = writeWhole(root, rel, a.Content, !existed, ec.FileOwner)
	} else {
		err = w.apply(ec.Journal)
	}
	if err != nil {
		ec.Writes.refund(size)
		return Result{}, fsError("write", a.Path, err)
	}
	return TextResult(result), nil
}

// unreadable is the Prior of an Expectation whose target did not read: no hash equals it.
const unreadable = "unreadable"

// journalWrite journals w's effect (ExecContext.Journal; nothing without one): the target's
// content now, read to hash it, and the result the call will answer.
func journalWrite(ec *ExecContext, root *os.Root, w *fileWrite, result string, charged int64) error {
	if ec.Journal == nil {
		return nil
	}
	prior := ""
	if w.prior != nil {
		// A target that does not read (a link to a FIFO, or out of the workdir) is journaled as
		// unreadable, which no content matches: the write goes on and fails as it always did.
		h, exists, err := hashFile(root, w.rel)
		switch {
		case err != nil:
			prior = unreadable
		case exists:
			prior = h
		}
	}
	if err := ec.Journal.Expect(w.expect(prior, result, charged)); err != nil {
		return fmt.Errorf("the call did not run: the state directory could not journal it: %w", err)
	}
	return nil
}

// writeWhole replaces the content of the regular file rel (creating it when missing) through one
// handle: opened without blocking on a FIFO in its place, checked to be a regular file, then
// truncated and written. A file this call creates (isNew) is handed to owner through the same
// handle, so a link swapped in for it cannot turn the chown onto another file.
func writeWhole(root *os.Root, rel, content string, isNew bool, owner *FileOwner) error {
	f, err := openForWrite(root, rel, 0o644)
	if err != nil {
		return err
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteString(content)
	}
	if err == nil && isNew && owner != nil {
		err = f.Chown(owner.UID, owner.GID)
	}
	return errors.Join(err, f.Close())
}

// missingFolders lists the folders of dir (relative to root) that do not exist yet, outermost
// first: the ones MkdirAll is about to create.
func missingFolders(root *os.Root, dir string) []string {
	var missing []string
	for d := dir; d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if _, err := root.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	slices.Reverse(missing)
	return missing
}

// EditFile is the edit_file tool: exact string replacement inside one file.
type EditFile struct{}

// JournalsEffect implements ExactlyOnce: write_file's effect is its file's content.
func (WriteFile) JournalsEffect() {}

// JournalsEffect implements ExactlyOnce: edit_file's effect is its file's content.
func (EditFile) JournalsEffect() {}

var (
	_ ExactlyOnce = WriteFile{}
	_ ExactlyOnce = EditFile{}
)

var _ Tool = EditFile{} // compile-time guard: EditFile stays a Tool

var editFileSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"path": {"type": "string", "minLength": 1, "description": "File path relative to the workdir."},
		"old_string": {"type": "string", "minLength": 1, "description": "Exact text to replace, whitespace included. Must occur exactly once unless replace_all is true."},
		"new_string": {"type": "string", "description": "Replacement text; must differ from old_string."},
		"replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one. Default false."}
	},
	"required": ["path", "old_string", "new_string"],
	"additionalProperties": false
}`)

// Spec describes edit_file.
func (EditFile) Spec() Spec {
	return Spec{
		Name: NameEditFile,
		Description: "Replace exact text in a file in the workdir. old_string must match the file exactly (whitespace included) " +
			"and occur exactly once, unless replace_all is true. Returns how many occurrences were replaced.",
		Parameters: editFileSchema,
	}
}

type editFileArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// Execute edits the file; see the package documentation for the result texts.
func (EditFile) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a editFileArgs
	if err := decodeArguments(NameEditFile, args, &a); err != nil {
		return Result{}, err
	}
	if a.OldString == "" {
		return Result{}, fmt.Errorf("%w: old_string is empty", ErrInvalidArguments)
	}
	if a.OldString == a.NewString {
		return Result{}, fmt.Errorf("%w: old_string and new_string are identical, so the edit would change nothing", ErrInvalidArguments)
	}
	root, rel, err := prepareFileCall(ec, a.Path)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	if err := checkPlanFile(ec, root); err != nil {
		return Result{}, fmt.Errorf("cannot edit %q: %w", a.Path, err)
	}
	f, info, err := openRegularFile(root, rel, os.O_RDWR, "edit", a.Path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	if info.Size() > MaxEditBytes {
		return Result{}, fmt.Errorf("cannot edit %q: %w (%d bytes; edit_file handles at most %d)", a.Path, ErrFileTooLarge, info.Size(), MaxEditBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxEditBytes+1))
	if err != nil {
		return Result{}, fsError("edit", a.Path, err)
	}
	if len(data) > MaxEditBytes {
		return Result{}, fmt.Errorf("cannot edit %q: %w (it grew past %d bytes while being read)", a.Path, ErrFileTooLarge, MaxEditBytes)
	}
	text := string(data)
	count := strings.Count(text, a.OldString)
	switch {
	case count == 0:
		return Result{}, fmt.Errorf("cannot edit %q: %w (it must match the file's text exactly, whitespace included)", a.Path, ErrNoMatch)
	case count > 1 && !a.ReplaceAll:
		return Result{}, fmt.Errorf("cannot edit %q: %w: it occurs %d times (add surrounding text to make it unique, or set replace_all to replace every occurrence)",
			a.Path, ErrAmbiguousMatch, count)
	}
	updated := strings.Replace(text, a.OldString, a.NewString, count)
	// The whole file is rewritten, so its whole new content is what the write budget is charged.
	size := int64(len(updated))
	if err := ec.Writes.Charge(size); err != nil {
		return Result{}, err
	}
	noun := "occurrences"
	if count == 1 {
		noun = "occurrence"
	}
	result := fmt.Sprintf("Replaced %d %s in %q", count, noun, a.Path)
	// The edit is exactly-once across a crash as write_file is: journaled with the hashes of the
	// text read and the text written, then made atomic unless the file is a link.
	linfo, err := root.Lstat(rel)
	if err != nil {
		ec.Writes.refund(size)
		return Result{}, fsError("edit", a.Path, err)
	}
	w := planWrite(ec, root, rel, updated, linfo)
	if ec.Journal != nil {
		if err := ec.Journal.Expect(w.expect(ContentHash(data), result, size)); err != nil {
			ec.Writes.refund(size)
			return Result{}, fmt.Errorf("the call did not run: the state directory could not journal it: %w", err)
		}
	}
	if w.inPlace {
		err = rewrite(f, updated)
	} else {
		w.prior = info // the opened file's own: its permissions and owner carry over
		err = w.apply(ec.Journal)
	}
	if err != nil {
		ec.Writes.refund(size)
		return Result{}, fsError("edit", a.Path, err)
	}
	return TextResult(result), nil
}

// rewrite replaces the whole content of the open file f with content.
func rewrite(f *os.File, content string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(content), 0)
	return err
}

// ListDir is the list_dir tool: a directory's entries, sorted, directories suffixed "/".
type ListDir struct{}

var _ Tool = ListDir{} // compile-time guard: ListDir stays a Tool

var listDirSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"path": {"type": "string", "description": "Directory relative to the workdir. Default: the workdir itself."}
	},
	"additionalProperties": false
}`)

// Spec describes list_dir.
func (ListDir) Spec() Spec {
	return Spec{
		Name: NameListDir,
		Description: "List a directory in the workdir: one entry per line, sorted by name, directories suffixed with \"/\". " +
			fmt.Sprintf("At most %d entries are shown.", MaxListEntries),
		Parameters: listDirSchema,
	}
}

type listDirArgs struct {
	Path string `json:"path"`
}

// Execute lists the directory; see the package documentation for the result texts.
func (ListDir) Execute(ec *ExecContext, args json.RawMessage) (Result, error) {
	var a listDirArgs
	if err := decodeArguments(NameListDir, args, &a); err != nil {
		return Result{}, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	root, rel, err := prepareFileCall(ec, a.Path)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	info, err := root.Stat(rel)
	if err != nil {
		return Result{}, fsError("list", a.Path, err)
	}
	if !info.IsDir() {
		return Result{}, fmt.Errorf("cannot list %q: %w", a.Path, ErrNotDirectory)
	}
	dir, err := OpenDir(root, rel)
	if err != nil {
		return Result{}, fsError("list", a.Path, err)
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return Result{}, fsError("list", a.Path, err)
	}
	if len(entries) == 0 {
		return TextResult("(empty directory)"), nil
	}
	slices.SortFunc(entries, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	var sb strings.Builder
	for i, e := range entries[:min(len(entries), MaxListEntries)] {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(e.Name())
		if e.IsDir() {
			sb.WriteByte('/')
		}
	}
	if hidden := len(entries) - MaxListEntries; hidden > 0 {
		fmt.Fprintf(&sb, "\n[%d more entries not shown]", hidden)
	}
	return TextResult(sb.String()), nil
}
